"""Documents of a knowledge base (interface 4.1): bulk create, process, status polling, and
whether processing completes.

Polls of processing share flows.Waits: the first that waits its whole bound in vain, in whichever
test, is KB-PROCESS-COMPLETES's evidence (charged there, whether or not that test names it); the
later ones of the run read once and are not judged where processing has not completed. So the
requirement's verdict does not depend on which test polled first (with workers, any may).
"""

from __future__ import annotations

from typing import Any

import httpx

from assistant_conformance.suite.flows import Waits, is_success, json_of, poll
from assistant_conformance.suite.http import running_test
from assistant_conformance.suite.judging import checks, findings

COMPLETES = "KB-PROCESS-COMPLETES"


def bulk(
    api: httpx.Client, prefix: str, kb_id: str, docs: list[dict[str, Any]], status_req: str
) -> list[str]:
    """Bulk-create documents (201); KB-BULK-CREATES: one document with an id per element sent."""
    response = api.post(f"{prefix}/{kb_id}/bulk", json=docs)
    findings.require_success(status_req, response, 201)
    body = json_of(response)
    ids = [d.get("id") for d in body if isinstance(d, dict)] if isinstance(body, list) else []
    good = [i for i in ids if isinstance(i, str) and i]
    findings.require(
        "KB-BULK-CREATES",
        isinstance(body, list) and len(good) == len(docs) and len(set(good)) == len(docs),
        f"a JSON array of {len(docs)} documents, each with its own string id",
        body,
        response,
    )
    return good


def ids_of(response: httpx.Response) -> list[str]:
    """The document ids of a bulk answer (none when it is not an array of {id})."""
    body = json_of(response) if is_success(response) else None
    found = [d.get("id") for d in body if isinstance(d, dict)] if isinstance(body, list) else []
    return [i for i in found if isinstance(i, str) and i]


def process(
    api: httpx.Client, prefix: str, kb_id: str, doc_ids: list[str], status_req: str
) -> httpx.Response:
    response = api.post(f"{prefix}/{kb_id}/process", json=doc_ids)
    findings.require_success(status_req, response, 201)
    return response


def status_url(prefix: str, kb_id: str) -> str:
    return f"{prefix}/{kb_id}/status"


def read_statuses(response: httpx.Response) -> dict[str, Any] | None:
    """{document id: status} of a status answer; None when it is not an array of {id, ...}."""
    body = json_of(response)
    if not isinstance(body, list) or not all(isinstance(e, dict) for e in body):
        return None
    return {str(e.get("id")): e.get("status") for e in body}


def poll_until_terminal(
    api: httpx.Client,
    prefix: str,
    kb_id: str,
    doc_ids: list[str],
    timeout: float,
    waits: Waits,
) -> tuple[httpx.Response, dict[str, Any] | None, bool]:
    """Poll status with `ids` until every named document is terminal or `timeout` (flows.Waits);
    KB-PROCESS-COMPLETES judged on the last read (judge_completes)."""

    def read() -> httpx.Response:  # until all terminal, or no status answer: nothing more to learn
        return api.get(status_url(prefix, kb_id), params={"ids": ",".join(doc_ids)})

    until = checks.DocumentsSettledCheck(entry=checks.LOOP_ANSWER, ids=tuple(doc_ids))
    response, _ = poll(read, until, timeout, waits)
    if response.status_code == 200:
        judge_completes(response, doc_ids, timeout)
    found = read_statuses(response) if response.status_code == 200 else None
    done = found is not None and all(found.get(i) in checks.TERMINAL_DOCUMENT for i in doc_ids)
    return response, found, done


def expect_exact(response: httpx.Response, requested: list[str]) -> bool:
    """KB-STATUS-EXACT: the answer holds each requested document once, and no other."""
    body = json_of(response)
    answered = (
        [e.get("id") for e in body if isinstance(e, dict)] if isinstance(body, list) else None
    )
    return findings.expect(
        "KB-STATUS-EXACT",
        answered is not None and sorted(answered, key=str) == sorted(requested),
        f"statuses of exactly {sorted(requested)}",
        answered if answered is not None else body,
        response,
    )


def judge_completes(response: httpx.Response, doc_ids: list[str], timeout: float) -> None:
    """KB-PROCESS-COMPLETES on the status read last: judged in a test that names it; in any other,
    charged where it does not hold (its poll then waited its whole bound: see the module)."""
    check = checks.DocumentsTerminalCheck(entry=findings.index(response), ids=tuple(doc_ids))
    expected = f"every processed document {sorted(checks.TERMINAL_DOCUMENT)} within {timeout:g} s"
    if COMPLETES in running_test.checked_requirements():
        findings.judge(COMPLETES, check, expected, response)
        return
    held, actual = checks.evaluate(check, findings.current().exchanges)
    if not held:
        findings.charged(COMPLETES, expected, actual, response, check)
