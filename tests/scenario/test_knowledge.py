"""Knowledge bases (interface 4.1), under each prefix: processing, full update, delete, bad input.

Every test runs once per prefix (`/api/ai/v1/kb`, `/api/ai/knowledges`); the test id names it.
Use across the two prefixes is in test_knowledge_prefixes.py.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from assistant_conformance.suite.config.settings import SuiteSettings
from assistant_conformance.suite.flows import (
    SHAPE,
    Waits,
    is_client_error,
    is_success,
    json_of,
    knowledge,
    processing,
)
from assistant_conformance.suite.judging import findings
from assistant_conformance.suite.judging.checks import mismatches
from assistant_conformance.suite.safety.ledger import Ledger


def per_prefix(*reqs: str) -> list[Any]:
    """One param per prefix, marked with that prefix's status requirement, the acceptance of
    its valid bodies and `reqs`."""
    return [
        pytest.param(
            p,
            marks=pytest.mark.req(knowledge.STATUS_REQ[p], SHAPE, knowledge.VALID, *reqs),
            id=knowledge.PREFIX_NAMES[p],
        )
        for p in knowledge.PREFIXES
    ]


@pytest.fixture
def bodies(ledger: Ledger, suite_settings: SuiteSettings) -> knowledge.Bodies:
    """This test's Knowledgebase bodies: names of its own, references only as the user gave."""
    return knowledge.Bodies(ledger.run_prefix, suite_settings.kb_references)


@pytest.mark.parametrize(
    "prefix", per_prefix("KB-BULK-CREATES", "KB-PROCESS-COMPLETES", "KB-STATUS-EXACT")
)
def test_processed_documents_reach_a_terminal_status(
    api: httpx.Client,
    ledger: Ledger,
    suite_settings: SuiteSettings,
    bodies: knowledge.Bodies,
    prefix: str,
    waits: Waits,
) -> None:
    status_req, timeout = knowledge.STATUS_REQ[prefix], suite_settings.process_timeout
    kb_id = knowledge.create_kb(api, ledger, prefix, bodies, "process")
    doc_ids = processing.bulk(
        api, prefix, kb_id, knowledge.document_bodies(ledger.run_prefix, 3), status_req
    )
    chosen, left_out = doc_ids[:2], doc_ids[2]
    processing.process(api, prefix, kb_id, chosen, status_req)

    # KB-PROCESS-COMPLETES is judged by the poll (processing.judge_completes).
    response, _, _ = processing.poll_until_terminal(api, prefix, kb_id, chosen, timeout, waits)
    findings.expect_status(status_req, response, 200)
    # Two of three documents asked for: a server answering every document of the KB fails here.
    processing.expect_exact(response, chosen)
    alone = api.get(processing.status_url(prefix, kb_id), params={"ids": left_out})
    findings.expect_status(status_req, alone, 200)
    processing.expect_exact(alone, [left_out])


@pytest.mark.parametrize("prefix", per_prefix("KB-UPDATE-ROUNDTRIP"))
def test_full_update_round_trips_every_field(
    api: httpx.Client, ledger: Ledger, bodies: knowledge.Bodies, prefix: str
) -> None:
    kb_id = knowledge.create_kb(api, ledger, prefix, bodies, "update")
    sent = bodies.valid(prefix, "update", variant=1)
    minimal = bodies.minimal(prefix, "update")
    written = knowledge.write_kb(api, "PUT", f"{prefix}/{kb_id}", sent, minimal, 200)
    if not written.valid_accepted:
        raise findings.Blocked("not judged: the full update was refused (see its finding)")
    response = written.answer
    wrong = mismatches(sent, json_of(response))
    findings.expect(
        "KB-UPDATE-ROUNDTRIP", not wrong, "every field answered as sent", wrong, response
    )
    stored = knowledge.read_kb(
        api, prefix, kb_id
    )  # a read is no contract operation: used where it exists
    if stored is not None:
        wrong = mismatches(sent, stored)
        findings.expect("KB-UPDATE-ROUNDTRIP", not wrong, "every field read back as sent", wrong)


@pytest.mark.parametrize("prefix", per_prefix("KB-DELETE-GONE", "KB-BULK-CREATES"))
def test_deleted_knowledge_base_is_gone(
    api: httpx.Client, ledger: Ledger, bodies: knowledge.Bodies, prefix: str
) -> None:
    status_req = knowledge.STATUS_REQ[prefix]
    kb_id = knowledge.create_kb(api, ledger, prefix, bodies, "delete")
    doc_ids = processing.bulk(
        api, prefix, kb_id, knowledge.document_bodies(ledger.run_prefix, 1), status_req
    )
    findings.require_success(status_req, api.delete(f"{prefix}/{kb_id}"), 200)

    base = f"{prefix}/{kb_id}"
    after = {
        "update": api.put(base, json=bodies.valid(prefix, "delete", variant=2)),
        "bulk": api.post(f"{base}/bulk", json=knowledge.document_bodies(ledger.run_prefix, 1)),
        "process": api.post(f"{base}/process", json=doc_ids),
        "status": api.get(f"{base}/status", params={"ids": ",".join(doc_ids)}),
    }
    for operation, response in after.items():
        findings.expect(
            "KB-DELETE-GONE",
            is_client_error(response),
            f"{operation} after delete: HTTP 4xx",
            response,
            response,
        )


BAD_FIELDS = [
    ("KB-ALLOWED-VALUES", "permission", "secret"),
    ("KB-ALLOWED-VALUES", "type", "internal"),
    ("KB-UUID-FORMAT", "workspaceId", "not-a-uuid"),
    ("KB-UUID-FORMAT", "integrationId", "1234-5678"),
    ("KB-FIELD-TYPES", "name", 42),
    ("KB-FIELD-TYPES", "recall", "high"),
    ("KB-FIELD-TYPES", "recall", {"topK": "ten"}),
    ("KB-FIELD-TYPES", "parserConfig", ["chunkSize"]),
    ("KB-FIELD-TYPES", "copilotModel", "embedding"),
]


@pytest.mark.parametrize(
    ("prefix", "req", "field", "value"),
    [
        pytest.param(
            p,
            req,
            field,
            value,
            marks=pytest.mark.req(knowledge.STATUS_REQ[p], SHAPE, knowledge.VALID, req),
            id=f"{knowledge.PREFIX_NAMES[p]}-{field}={value!r}",
        )
        for p in knowledge.PREFIXES
        for req, field, value in BAD_FIELDS
    ],
)
def test_bad_field_is_rejected_and_not_stored(
    api: httpx.Client,
    ledger: Ledger,
    bodies: knowledge.Bodies,
    prefix: str,
    req: str,
    field: str,
    value: Any,
) -> None:
    # Controls first: the same create and update with every field valid are accepted.
    kb_id, written = knowledge.created_kb(api, ledger, prefix, bodies, "bad")
    valid_create = written.answer
    valid_body, minimal = bodies.valid(prefix, "bad", variant=1), bodies.minimal(prefix, "bad")
    valid_update = knowledge.write_kb(
        api, "PUT", f"{prefix}/{kb_id}", valid_body, minimal, 200
    ).answer
    # Broken in `field` only: a name of its own, references only as the user gave them.
    body = {**bodies.valid(prefix, "bad"), field: value}
    created = api.post(prefix, json=body)
    knowledge.track_if_created(ledger, prefix, created)
    findings.expect_rejected(req, created, f"create with {field}={value!r}", valid_create)

    before = knowledge.read_kb(api, prefix, kb_id)
    update = api.put(f"{prefix}/{kb_id}", json=body)
    findings.expect_rejected(req, update, f"update with {field}={value!r}", valid_update)
    if before is not None and is_success(valid_update):  # where the target reads a KB back
        after = knowledge.read_kb(api, prefix, kb_id)
        findings.expect(req, after == before, "a rejected update changes nothing", after)


@pytest.mark.parametrize("prefix", per_prefix("KB-BODY-REQUIRED"))
def test_operations_without_body_are_rejected(
    api: httpx.Client, ledger: Ledger, bodies: knowledge.Bodies, prefix: str
) -> None:
    run = ledger.run_prefix
    kb_id, written = knowledge.created_kb(api, ledger, prefix, bodies, "nobody")
    valid_create = written.answer
    base = f"{prefix}/{kb_id}"
    update = bodies.valid(prefix, "nobody", variant=1), bodies.minimal(prefix, "nobody")
    controls = {
        "PUT": knowledge.write_kb(api, "PUT", base, *update, 200).answer,
        "POST /bulk": api.post(f"{base}/bulk", json=knowledge.document_bodies(run, 1)),
    }
    doc_ids = processing.ids_of(controls["POST /bulk"])
    controls["POST /process"] = api.post(f"{base}/process", json=doc_ids[:1])
    created = api.post(prefix)
    knowledge.track_if_created(ledger, prefix, created)
    findings.expect_rejected("KB-BODY-REQUIRED", created, "create without body", valid_create)
    for (method, path), control in zip(
        (("PUT", ""), ("POST", "/bulk"), ("POST", "/process")), controls.values(), strict=True
    ):
        response = api.request(method, f"{base}{path}")
        what = f"{method} {prefix}/{{id}}{path} without body"
        findings.expect_rejected("KB-BODY-REQUIRED", response, what, control)


@pytest.mark.parametrize("prefix", per_prefix("KB-BULK-ARRAY", "KB-VALID-ACCEPTED"))
def test_bulk_takes_an_array_only(
    api: httpx.Client, ledger: Ledger, bodies: knowledge.Bodies, prefix: str
) -> None:
    kb_id = knowledge.create_kb(api, ledger, prefix, bodies, "bulk")
    url = f"{prefix}/{kb_id}/bulk"
    document = knowledge.document_bodies(ledger.run_prefix, 1)[0]
    control = api.post(url, json=[document])
    knowledge.expect_accepted(control, "bulk [document]", 201)
    empty = api.post(url, json=[])  # an empty array is still an array of documents
    knowledge.expect_accepted(empty, "bulk []", 201)
    for body in ({}, document, {"documents": [document]}, "document", 42):
        response = api.post(url, json=body)
        findings.expect_rejected("KB-BULK-ARRAY", response, f"bulk with {body!r:.40}", control)


@pytest.mark.parametrize("prefix", per_prefix("KB-PROCESS-STRINGS", "KB-BULK-CREATES"))
def test_process_takes_strings_only(
    api: httpx.Client, ledger: Ledger, bodies: knowledge.Bodies, prefix: str
) -> None:
    status_req = knowledge.STATUS_REQ[prefix]
    kb_id = knowledge.create_kb(api, ledger, prefix, bodies, "strings")
    docs = knowledge.document_bodies(ledger.run_prefix, 2)
    processed, doc_id = processing.bulk(api, prefix, kb_id, docs, status_req)
    url = f"{prefix}/{kb_id}/process"
    control = api.post(url, json=[processed])  # the other document stays unprocessed
    findings.expect_status(status_req, control, 201)
    status_of = {"ids": doc_id}
    before = processing.read_statuses(
        api.get(processing.status_url(prefix, kb_id), params=status_of)
    )
    for body in ([1], [None], [doc_id, 7], [[doc_id]], {"ids": [doc_id]}, doc_id):
        response = api.post(url, json=body)
        findings.expect_rejected(
            "KB-PROCESS-STRINGS", response, f"process with {body!r:.60}", control
        )
    after_response = api.get(processing.status_url(prefix, kb_id), params=status_of)
    after = processing.read_statuses(after_response)
    if before is None or not is_success(control):
        return  # the status query or process itself fails; the processing test reports that
    # Only the unprocessed document is compared: the processed one moves on by itself, and which
    # other documents the status query answers is KB-STATUS-EXACT's to judge.
    findings.expect(
        "KB-PROCESS-STRINGS",
        (after or {}).get(doc_id) == before.get(doc_id),
        f"rejected process requests start nothing: {doc_id} stays {before.get(doc_id)!r}",
        after,
        after_response,
    )


@pytest.mark.parametrize("prefix", per_prefix("KB-STATUS-IDS-REQUIRED", "KB-BULK-CREATES"))
def test_status_requires_ids(
    api: httpx.Client, ledger: Ledger, bodies: knowledge.Bodies, prefix: str
) -> None:
    status_req = knowledge.STATUS_REQ[prefix]
    kb_id = knowledge.create_kb(api, ledger, prefix, bodies, "ids")
    (doc_id,) = processing.bulk(
        api, prefix, kb_id, knowledge.document_bodies(ledger.run_prefix, 1), status_req
    )
    control = api.get(processing.status_url(prefix, kb_id), params={"ids": doc_id})
    findings.expect_status(status_req, control, 200)
    response = api.get(processing.status_url(prefix, kb_id))
    findings.expect_rejected("KB-STATUS-IDS-REQUIRED", response, "status without ids", control)
