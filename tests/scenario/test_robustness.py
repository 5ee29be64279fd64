"""Robustness (RFC 9110): unknown identifiers and malformed bodies, on the document's operations.

- every operation on an identifier, with random UUIDs for every path parameter, and (for nested
  resources) a random child in a real parent: 404, with a JSON body;
- every operation with a JSON body, sent a handful of malformed bodies: a 4xx with a JSON body,
  never a 5xx, never accepted.
Each is judged against a control: the same operation on real ids with a valid body, accepted in
the same test (a 404 from an operation the target lacks says nothing about unknown ids).
Operations and their parameters come from spec/openapi.yaml (contract/openapi.py).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from assistant_conformance.contract.openapi import Operation, by_id, operations, placeholder, sample
from assistant_conformance.suite.config.settings import SuiteSettings
from assistant_conformance.suite.flows import is_client_error, is_success, json_of, send
from assistant_conformance.suite.flows.agent import Agent
from assistant_conformance.suite.flows.auth import Real, Resources, Unavailable, track_created
from assistant_conformance.suite.http.observe import breaking_input
from assistant_conformance.suite.judging.findings import (
    expect,
    expect_rejected,
    not_judged,
    refused_control,
)
from assistant_conformance.suite.safety.ledger import Ledger

UNKNOWN, ERROR_JSON = "ROBUST-UNKNOWN-ID-404", "ROBUST-ERROR-JSON"
NO_5XX, BAD_INPUT = "ROBUST-NO-5XX", "ROBUST-BAD-INPUT-4XX"
BAD_UTF8 = b"\xc3\x28\xff"  # an invalid two-byte sequence and a byte UTF-8 never uses
DEPTH = 50_000


def _bad_utf8(op: Operation) -> bytes:
    """The op's own sample body with invalid UTF-8 in place of its marker (or in a key)."""
    assert op.body_schema is not None
    text = json.dumps(sample(op.body_schema, "@MARK@", {}))
    if "@MARK@" not in text:
        text = '{"@MARK@": "@MARK@"}'
    return text.encode().replace(b"@MARK@", BAD_UTF8)


# Each a body no declared shape admits: a server must refuse it, not fail on it or store it.
BAD_BODIES: dict[str, Any] = {
    "invalid-json": lambda op: b'{"name": "unterminated',
    "json-string": lambda op: b'"a JSON string where an object or array belongs"',
    "null": lambda op: b"null",
    "deep-nesting": lambda op: b"[" * DEPTH + b"]" * DEPTH,
    "huge-numbers": lambda op: b"[1e999999, -1e999999, 1" + b"0" * 5000 + b"]",
    "invalid-utf8": _bad_utf8,
}
JSON_BODY = [op for op in operations() if op.body_media == "application/json"]
BY_ID = [op for op in operations() if op.path_params]
NESTED = [op for op in BY_ID if len(op.path_params) > 1]


@pytest.fixture(scope="module")
def owned(
    api: httpx.Client, ledger: Ledger, suite_settings: SuiteSettings, agent: Agent
) -> Resources:
    return Resources(api, ledger, suite_settings.process_timeout, agent)


def _real(owned: Resources, op: Operation, isolated: bool = False, ran: bool = False) -> Real:
    try:
        return owned.isolated(op) if isolated else owned.real(op, ran=ran)
    except Unavailable as exc:
        pytest.skip(f"not judged: {exc}")


def _expect_json_error(response: httpx.Response) -> None:
    if is_client_error(response):
        expect(
            ERROR_JSON,
            json_of(response) is not None,
            "a 4xx answer with a JSON body",
            response,
            response,
        )


def _unknown(op: Operation, ids: dict[str, str]) -> tuple[dict[str, str], str]:
    """`ids` with every parameter it lacks set to a random id; and the unknown ones as sent."""
    sent = {p: ids.get(op.key(p)) or placeholder() for p in op.path_params}
    unknown = [f"{p} {v!r}" for p, v in sent.items() if op.key(p) not in ids]
    return {op.key(p): v for p, v in sent.items()}, " and ".join(unknown)


def _expect_404(op: Operation, owned: Resources, real: Real, keep: tuple[str, ...]) -> None:
    """An unknown id answers 404, judged where the same operation on real ids was accepted."""
    control = send(owned.api, op, **op.request(real.ids, owned.marker, real.extra))
    known = {k: v for k, v in real.ids.items() if k in keep}
    ids, unknown = _unknown(op, known)
    response = send(owned.api, op, **op.request(ids, owned.marker, real.extra))
    _expect_json_error(response)
    why = refused_control(control)
    if why is not None:
        not_judged(UNKNOWN, f"not judged: {why}")
        return
    expect(
        UNKNOWN,
        response.status_code == 404,
        f"HTTP 404: no resource has {unknown}",
        response,
        response,
    )


@pytest.mark.parametrize("op", [pytest.param(op, id=op.label) for op in BY_ID])
@pytest.mark.req(UNKNOWN, ERROR_JSON)
def test_unknown_identifier_answers_404(op: Operation, owned: Resources) -> None:
    # The control: the same request on real ids (a fresh one for a delete) is accepted.
    _expect_404(op, owned, _real(owned, op, isolated=True), keep=())


@pytest.mark.parametrize("op", [pytest.param(op, id=op.label) for op in NESTED])
@pytest.mark.req(UNKNOWN, ERROR_JSON)
def test_unknown_child_of_a_real_parent_answers_404(op: Operation, owned: Resources) -> None:
    real = _real(owned, op, isolated=True)
    _expect_404(op, owned, real, keep=op.keys[:-1])


@pytest.mark.parametrize(
    ("op", "body"),
    [pytest.param(op, name, id=f"{op.label}-{name}") for op in JSON_BODY for name in BAD_BODIES],
)
@pytest.mark.req(NO_5XX, BAD_INPUT, ERROR_JSON)
def test_malformed_body_is_refused(
    op: Operation, body: str, owned: Resources, ledger: Ledger
) -> None:
    # Real parents: the body is what the server has to judge. A thread is read otherwise once it
    # has run: half the bodies go to a thread that has (the same number of requests).
    ran = "thread_id" in op.keys and list(BAD_BODIES).index(body) % 2 == 1
    real = _real(owned, op, ran=ran)
    args = op.request(real.ids, owned.marker, real.extra)
    args.pop("json", None)
    headers = {**args.pop("headers", {}), "Content-Type": "application/json"}
    with breaking_input(BAD_INPUT):  # no answer to it is not the success status's fault
        response = send(owned.api, op, **args, headers=headers, content=BAD_BODIES[body](op))
    track_created(ledger, op, response)
    _expect_json_error(response)
    if response.status_code >= 500:  # a 5xx is a finding whatever the operation does otherwise
        expect(NO_5XX, False, f"no 5xx for a {body} body", response, response)
        return
    if is_success(response):  # taken: a finding whatever a valid request gets (no control)
        expect(BAD_INPUT, False, f"a {body} body: HTTP 4xx", response, response)
        expect(NO_5XX, True, f"no 5xx for a {body} body")
        return
    control = made_by_the_run(ledger, op)
    if control is None and (elsewhere := made_elsewhere(ledger, op)):
        not_judged(NO_5XX, f"not judged: {elsewhere}")  # another is not made for a control
        return
    control = control or send(owned.api, op, **op.request(real.ids, owned.marker, real.extra))
    track_created(ledger, op, control)
    if expect_rejected(BAD_INPUT, response, f"a {body} body", control) is not None:
        expect(NO_5XX, True, f"no 5xx for a {body} body")
    else:
        not_judged(NO_5XX, f"not judged: {refused_control(control)}")


def made_by_the_run(ledger: Ledger, op: Operation) -> httpx.Response | None:
    """The answer to a valid create of `op` the run made already, where what it makes nothing
    removes (a chat-kit session): the control, instead of making another."""
    kind = ledger.unremovable(op.method, op.path)
    made = ledger.budget.first(kind) if kind else None
    return made.response if made and isinstance(made.response, httpx.Response) else None


def made_elsewhere(ledger: Ledger, op: Operation) -> str:
    """Where what a valid create of `op` makes nothing removes and another of the run's workers
    made one (its answer is in that process): why no control is made here ("" otherwise)."""
    kind = ledger.unremovable(op.method, op.path)
    made = ledger.budget.already(kind) if kind else ""
    return f"the run's valid create was made by another worker ({made})" if made else ""


# Operations that read chat messages (the state's values, a run's input), and a body whose
# messages no reading admits: sent to a thread that has run, where a server reads them against
# what the thread holds.
READS_MESSAGES = ("updateThreadState", "createRun", "streamRun", "waitRun")
BAD_MESSAGES = [42, "not a message", {"type": 7, "content": {"nested": True}}, {"role": None}]


@pytest.mark.parametrize("operation_id", READS_MESSAGES)
@pytest.mark.req(NO_5XX, ERROR_JSON)
def test_malformed_messages_on_a_thread_that_has_run(
    operation_id: str, owned: Resources, ledger: Ledger
) -> None:
    op = by_id(operation_id)
    real = _real(owned, op, ran=True)
    args = op.request(real.ids, owned.marker, real.extra)
    body = dict(args.pop("json", None) or {})
    key = "values" if op.operation_id == "updateThreadState" else "input"
    body[key] = {"messages": BAD_MESSAGES}
    with breaking_input(NO_5XX):
        response = send(owned.api, op, **args, json=body)
    track_created(ledger, op, response)
    _expect_json_error(response)
    expect(NO_5XX, response.status_code < 500, "no 5xx for malformed messages", response, response)
