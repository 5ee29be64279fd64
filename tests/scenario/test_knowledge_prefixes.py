"""Knowledge bases across the two prefixes (interface 4.1, 9.2): one store, identical answers.

A check across the prefixes compares them (KB-PREFIXES-SHARED: what one prefix did, the other
answers alike); whether what it did held (a deleted knowledge base is gone) is that behaviour's own
requirement, judged under each prefix.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from assistant_conformance.suite.config.settings import SuiteSettings
from assistant_conformance.suite.flows import (
    SHAPE,
    Waits,
    is_success,
    items_of,
    json_of,
    knowledge,
    processing,
)
from assistant_conformance.suite.judging import findings
from assistant_conformance.suite.safety.ledger import Ledger

SHARED = "KB-PREFIXES-SHARED"


@pytest.fixture
def bodies(ledger: Ledger, suite_settings: SuiteSettings) -> knowledge.Bodies:
    """This test's Knowledgebase bodies: names of its own, references only as the user gave."""
    return knowledge.Bodies(ledger.run_prefix, suite_settings.kb_references)


def use(
    api: httpx.Client, prefix: str, method: str, path: str, status: int, **kw: Any
) -> httpx.Response:
    """A request under `prefix` on a KB made under the other: a 2xx shows sharing."""
    response = api.request(method, prefix + path, **kw)
    findings.require(
        SHARED, is_success(response), f"{method} {prefix}{path}: HTTP 2xx", response, response
    )
    findings.expect_status(knowledge.STATUS_REQ[prefix], response, status)
    return response


@pytest.mark.parametrize(
    "home",
    [
        pytest.param(
            p,
            marks=pytest.mark.req(
                SHARED, SHAPE, knowledge.VALID, "KB-DELETE-GONE", *knowledge.STATUS_REQ.values()
            ),
            id=f"{knowledge.PREFIX_NAMES[p]}-used-under-{knowledge.PREFIX_NAMES[knowledge.other_prefix(p)]}",
        )
        for p in knowledge.PREFIXES
    ],
)
def test_knowledge_base_is_shared_by_both_prefixes(
    api: httpx.Client,
    ledger: Ledger,
    suite_settings: SuiteSettings,
    bodies: knowledge.Bodies,
    home: str,
    waits: Waits,
) -> None:
    away, run = knowledge.other_prefix(home), ledger.run_prefix
    kb_id, written = knowledge.created_kb(api, ledger, home, bodies, "shared")
    base = f"/{kb_id}"
    # A body of the kind the home prefix took: a refused valid body is KB-VALID-ACCEPTED's.
    update = (
        bodies.valid(away, "shared", variant=1)
        if written.valid_accepted
        else bodies.minimal(away, "shared")
    )
    use(api, away, "PUT", base, 200, json=update)
    created = use(api, away, "POST", f"{base}/bulk", 201, json=knowledge.document_bodies(run, 2))
    doc_ids = [d.get("id") for d in items_of(created) if isinstance(d, dict)]
    findings.require(SHAPE, len(doc_ids) == 2, "two documents with ids", doc_ids, created)
    use(api, away, "POST", f"{base}/process", 201, json=doc_ids)

    timeout = suite_settings.process_timeout
    polled, statuses, _ = processing.poll_until_terminal(api, away, kb_id, doc_ids, timeout, waits)
    findings.expect(
        SHARED,
        statuses is not None and set(doc_ids) <= set(statuses),
        f"status under {away} names the documents fed there",
        statuses,
        polled,
    )
    at_home = api.get(processing.status_url(home, kb_id), params={"ids": ",".join(doc_ids)})
    findings.expect(
        SHARED,
        processing.read_statuses(at_home) == statuses,
        f"status under {home} answers what {away} does",
        processing.read_statuses(at_home),
        at_home,
    )

    use(api, away, "DELETE", base, 200)
    # Compared across the prefixes (one store: both answer alike); that the deleted is gone is
    # KB-DELETE-GONE's, whichever prefix it is read under.
    ids = {"ids": ",".join(doc_ids)}
    gone = {p: api.get(processing.status_url(p, kb_id), params=ids) for p in (away, home)}
    findings.expect(
        SHARED,
        answered(gone[home]) == answered(gone[away]),
        f"deleted under {away}: status under {home} answers as under {away}: "
        f"{answered(gone[away])}",
        answered(gone[home]),
        gone[home],
    )
    for prefix, response in gone.items():
        findings.expect(
            "KB-DELETE-GONE",
            400 <= response.status_code < 500,
            f"deleted under {away}: status under {prefix} answers 4xx",
            response,
            response,
        )


def answered(response: httpx.Response) -> tuple[int, object]:
    """A status answer as compared across the prefixes: its status and the documents it names."""
    return response.status_code, processing.read_statuses(response)


def shape(response: httpx.Response) -> object:
    """The status and the set of top-level fields of an answer (of its elements, for an array)."""
    body = json_of(response)
    if isinstance(body, dict):
        fields: object = sorted(body)
    elif isinstance(body, list):
        fields = ["<array>", *sorted({k for e in body if isinstance(e, dict) for k in e})]
    else:
        fields = type(body).__name__ if response.content else "<empty>"
    return response.status_code, fields


def script(
    api: httpx.Client, ledger: Ledger, bodies: knowledge.Bodies, prefix: str
) -> list[tuple[str, httpx.Response]]:
    """The same requests, in the same order, under one prefix; answers named by step."""
    run, steps = ledger.run_prefix, []

    def step(name: str, method: str, path: str, **kw: Any) -> httpx.Response:
        response = api.request(method, prefix + path, **kw)
        steps.append((name, response))
        return response

    valid, minimal = bodies.valid(prefix, "same"), bodies.minimal(prefix, "same")
    written = knowledge.write_kb(api, "POST", prefix, valid, minimal, 201)
    steps.append(("create", written.answer))
    if written.accepted is None:
        raise findings.Blocked(f"not judged: {prefix} created no knowledge base")
    created = written.accepted
    kb_id = json_of(created).get("id") if isinstance(json_of(created), dict) else None
    findings.require(SHAPE, isinstance(kb_id, str), "a knowledge base with an id", created, created)
    ledger.track("DELETE", f"{prefix}/{kb_id}")
    for name, field, value in (
        ("bad enum", "permission", "secret"),
        ("bad uuid", "workspaceId", "x"),
    ):
        knowledge.track_if_created(
            ledger, prefix, step(f"create {name}", "POST", "", json={field: value})
        )
    step("update", "PUT", f"/{kb_id}", json=bodies.valid(prefix, "same", variant=1))
    step("update wrong type", "PUT", f"/{kb_id}", json={"recall": "high"})
    docs = json_of(step("bulk", "POST", f"/{kb_id}/bulk", json=knowledge.document_bodies(run, 2)))
    doc_ids = [d.get("id") for d in docs if isinstance(d, dict)] if isinstance(docs, list) else []
    step("bulk not an array", "POST", f"/{kb_id}/bulk", json={"name": "doc"})
    step("process", "POST", f"/{kb_id}/process", json=doc_ids[:1])
    step("process non-strings", "POST", f"/{kb_id}/process", json=[1])
    step("status", "GET", f"/{kb_id}/status", params={"ids": ",".join(map(str, doc_ids))})
    step("status without ids", "GET", f"/{kb_id}/status")
    step("update unknown id", "PUT", f"/{uuid.uuid4()}", json=bodies.valid(prefix, "same"))
    step("delete", "DELETE", f"/{kb_id}")
    step("status after delete", "GET", f"/{kb_id}/status", params={"ids": ",".join(doc_ids)})
    return steps


@pytest.mark.req("KB-PREFIXES-IDENTICAL", SHAPE, knowledge.VALID, *knowledge.STATUS_REQ.values())
def test_both_prefixes_answer_identically(
    api: httpx.Client, ledger: Ledger, bodies: knowledge.Bodies
) -> None:
    v1, knowledges = (script(api, ledger, bodies, p) for p in knowledge.PREFIXES)
    for (name, a), (_, b) in zip(v1, knowledges, strict=True):
        findings.expect(
            "KB-PREFIXES-IDENTICAL",
            shape(a) == shape(b),
            f"{name}: the same status and top-level fields as under {knowledge.V1}: {shape(a)}",
            f"under {knowledge.KNOWLEDGES}: {shape(b)}",
            b,
        )
