"""Robustness (RFC 9110): unknown identifiers and malformed bodies, on the document's operations.

- every operation on an identifier, with random UUIDs for every path parameter, and (for nested
  resources) a random child in a real parent: 404, with a JSON body;
- every operation with a JSON body, sent a handful of malformed bodies: a 4xx with a JSON body,
  never a 5xx, never accepted.
Operations and their parameters come from spec/openapi.yaml (flows/operations.py).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from assistant_conformance.suite.findings import expect
from assistant_conformance.suite.flows import is_client_error, json_of
from assistant_conformance.suite.flows.auth import RUN_INPUT, Resources, Unavailable, track_created
from assistant_conformance.suite.flows.operations import Operation, operations, sample, send
from assistant_conformance.suite.ledger import Ledger
from assistant_conformance.suite.settings import SuiteSettings

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
def owned(api: httpx.Client, ledger: Ledger, suite_settings: SuiteSettings) -> Resources:
    return Resources(api, ledger, suite_settings.process_timeout)


def _real(owned: Resources, op: Operation, **kwargs: Any) -> Any:
    try:
        return owned.real(op, **kwargs)
    except Unavailable as exc:
        pytest.skip(str(exc))


def _expect_json_error(response: httpx.Response) -> None:
    if is_client_error(response):
        expect(
            ERROR_JSON,
            json_of(response) is not None,
            "a 4xx answer with a JSON body",
            response,
            response,
        )


def _expect_404(
    op: Operation, owned: Resources, ids: dict[str, str], extra: dict[str, Any]
) -> None:
    response = send(owned.api, op, **op.request(ids, owned.marker, extra))
    expect(
        UNKNOWN,
        response.status_code == 404,
        f"HTTP 404: {op.target} {op.url(ids).rsplit('/', 1)[-1]!r} does not exist",
        response,
        response,
    )
    _expect_json_error(response)


@pytest.mark.parametrize("op", [pytest.param(op, id=op.label) for op in BY_ID])
@pytest.mark.req(UNKNOWN, ERROR_JSON)
def test_unknown_identifier_answers_404(op: Operation, owned: Resources) -> None:
    # Valid body values (a real assistant, a run input), so only the identifier is wrong.
    extra: dict[str, Any] = {"input": RUN_INPUT}
    if (assistant := owned.assistant_id()) is not None:
        extra["assistant_id"] = assistant
    _expect_404(op, owned, {}, extra)


@pytest.mark.parametrize("op", [pytest.param(op, id=op.label) for op in NESTED])
@pytest.mark.req(UNKNOWN, ERROR_JSON)
def test_unknown_child_of_a_real_parent_answers_404(op: Operation, owned: Resources) -> None:
    real = _real(owned, op, keep_last=False)
    _expect_404(op, owned, real.ids, real.extra)


@pytest.mark.parametrize(
    ("op", "body"),
    [pytest.param(op, name, id=f"{op.label}-{name}") for op in JSON_BODY for name in BAD_BODIES],
)
@pytest.mark.req(NO_5XX, BAD_INPUT, ERROR_JSON)
def test_malformed_body_is_refused(
    op: Operation, body: str, owned: Resources, ledger: Ledger
) -> None:
    real = _real(owned, op)  # real parents: the body is what the server has to judge
    args = op.request(real.ids, owned.marker, real.extra)
    args.pop("json", None)
    headers = {**args.pop("headers", {}), "Content-Type": "application/json"}
    response = send(owned.api, op, **args, headers=headers, content=BAD_BODIES[body](op))
    track_created(ledger, op, response)
    expect(NO_5XX, response.status_code < 500, "no 5xx for a malformed body", response, response)
    expect(
        BAD_INPUT, is_client_error(response), f"HTTP 4xx: the body is {body}", response, response
    )
    _expect_json_error(response)
