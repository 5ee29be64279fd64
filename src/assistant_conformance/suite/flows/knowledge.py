"""Knowledge-base flows (interface 4.1): valid bodies, create, bulk, process, status polling.

Both prefixes serve the same operations; every helper takes the prefix. Status requirements are
per prefix (KB-V1-STATUS, KB-KNOWLEDGES-STATUS), so a test names the one of its prefix.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from assistant_conformance.suite import findings, rejudge
from assistant_conformance.suite.flows import identifier, is_success, json_of, poll
from assistant_conformance.suite.ledger import Ledger

V1, KNOWLEDGES = "/api/ai/v1/kb", "/api/ai/knowledges"
PREFIXES = (V1, KNOWLEDGES)
PREFIX_NAMES = {V1: "v1-kb", KNOWLEDGES: "knowledges"}
STATUS_REQ = {V1: "KB-V1-STATUS", KNOWLEDGES: "KB-KNOWLEDGES-STATUS"}
# Terminal document statuses of the deployed servers (deployed-system notes): processing stops.
TERMINAL = frozenset(rejudge.TERMINAL_DOCUMENT)


def other(prefix: str) -> str:
    return KNOWLEDGES if prefix == V1 else V1


def kb_body(run_prefix: str, label: str = "kb", *, variant: int = 0) -> dict[str, Any]:
    """A Knowledgebase (interface 2.1), every field valid; each `variant` changes every field."""
    permission = ("organization", "public", "private")[variant % 3]
    return {
        "workspaceId": str(uuid.uuid4()),
        "name": f"{run_prefix}-{label}-{variant}",
        # Long, non-ASCII and multi-line: a server that cuts or re-encodes text shows it.
        "description": f"Scenario KB {variant}: café ☕ — naïve 東京\nline two " + "x" * 300,
        "permission": permission,
        "type": "standard",
        "recall": {"topK": 5 + variant, "score": 0.25 + variant / 10},
        "parserConfig": {
            "chunkSize": 120 + variant,
            "chunkOverlap": 10 + variant,
            "delimiter": "\n\n .",
        },
        "integrationId": str(uuid.uuid4()),
        "extKnowledgebaseId": f"{run_prefix}-ext-{variant}",
        "copilotModel": {
            "copilotId": str(uuid.uuid4()),
            "modelType": "text-embedding",
            "model": f"embedding-model-{variant}",
        },
    }


def document_bodies(run_prefix: str, count: int) -> list[dict[str, Any]]:
    """KnowledgeDocuments (the suite's interpreted shape) carrying text to process."""
    text = "Knowledge bases hold documents. Processing splits them into chunks. " * 8
    return [
        {
            "name": f"{run_prefix}-doc-{i}.txt",
            "category": "text",
            "type": "txt",
            "mimeType": "text/plain",
            "content": f"Document {i}. {text}",
            "metadata": {"run": run_prefix, "index": i},
        }
        for i in range(count)
    ]


def create_kb(api: httpx.Client, ledger: Ledger, prefix: str, body: dict[str, Any]) -> str:
    """Create a knowledge base (201) and track its delete; answer its id."""
    return created_kb(api, ledger, prefix, body)[0]


def created_kb(
    api: httpx.Client, ledger: Ledger, prefix: str, body: dict[str, Any]
) -> tuple[str, httpx.Response]:
    """Create a knowledge base (201) and track its delete; answer its id and the answer (the
    control of a check that the same operation rejects bad input)."""
    response = api.post(prefix, json=body)
    findings.require_success(STATUS_REQ[prefix], response, 201)
    kb_id = identifier(response)
    ledger.track("DELETE", f"{prefix}/{kb_id}")
    return kb_id, response


def track_if_created(ledger: Ledger, prefix: str, response: httpx.Response) -> None:
    """A create that should have been rejected but succeeded: remove what it stored."""
    body = json_of(response)
    if is_success(response) and isinstance(body, dict) and isinstance(body.get("id"), str):
        ledger.track("DELETE", f"{prefix}/{body['id']}")


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
    api: httpx.Client, prefix: str, kb_id: str, doc_ids: list[str], timeout: float
) -> tuple[httpx.Response, dict[str, Any] | None, bool]:
    """Poll status with `ids` until every named document is terminal or `timeout` passes."""

    def read() -> httpx.Response:
        return api.get(status_url(prefix, kb_id), params={"ids": ",".join(doc_ids)})

    # nothing more to learn by waiting: all terminal, or no status answer
    response, _ = poll(read, {"kind": "documents-settled", "ids": doc_ids}, timeout)
    statuses = read_statuses(response) if response.status_code == 200 else None
    terminal = statuses is not None and all(statuses.get(i) in TERMINAL for i in doc_ids)
    return response, statuses, terminal


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


def read_kb(api: httpx.Client, prefix: str, kb_id: str) -> dict[str, Any] | None:
    """The knowledge base as read back, where the target has a read (none in the contract)."""
    response = api.get(f"{prefix}/{kb_id}")
    body = json_of(response)
    if response.status_code == 200 and isinstance(body, dict) and body.get("id") == kb_id:
        return body
    return None
