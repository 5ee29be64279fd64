"""Findings: what a test observed about one requirement, and the verdict that follows.

Tests call `expect` (soft: record and go on) or `require` (record, and stop the test when the
condition fails because nothing after it can be checked). The plugin turns the findings of a test
into its outcome: a failed MUST (or any failed requirement under --strict-conformance) fails the
test; a failed SHOULD is a warning.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx
import pytest

from assistant_conformance.report.catalogue import load
from assistant_conformance.report.model import FAIL, PASS, WARN, Finding
from assistant_conformance.suite.exchange import Exchange, describe


@dataclass
class TestRecord:
    """Findings of the test that is running; the plugin swaps one in per test."""

    allowed: frozenset[str]
    strict: bool
    findings: list[Finding] = field(default_factory=list)


class _State:
    current: TestRecord | None = None


state = _State()


class Blocked(pytest.skip.Exception):  # type: ignore[name-defined]
    """A test cannot go on after a failed precondition; recorded findings decide its verdict."""


def _record(req_id: str, ok: bool, expected: str, actual: object, response: object) -> Finding:
    record = state.current
    if record is None:
        raise RuntimeError("expect() called outside a conformance test")
    requirement = load()[req_id]
    if req_id not in record.allowed:
        raise RuntimeError(f"test checks {req_id} but does not name it in @pytest.mark.req")
    failed = FAIL if requirement.level == "MUST" or record.strict else WARN
    verdict = PASS if ok else failed
    evidence = None
    if isinstance(response, httpx.Response):
        evidence = Exchange.of(response).as_dict()
    elif isinstance(response, Exchange):
        evidence = response.as_dict()
    finding = Finding(
        req_id, verdict, expected, "" if ok else describe(actual), evidence if not ok else None
    )
    record.findings.append(finding)
    return finding


def expect(
    req_id: str, ok: bool, expected: str, actual: object = "", response: object = None
) -> bool:
    """Record whether requirement `req_id` held here; answer `ok` so callers can branch on it."""
    _record(req_id, bool(ok), expected, actual, response)
    return bool(ok)


def require(
    req_id: str, ok: bool, expected: str, actual: object = "", response: object = None
) -> None:
    """Like expect, but a failed condition ends the test: what follows depends on it."""
    if not expect(req_id, ok, expected, actual, response):
        raise Blocked(f"cannot continue: {req_id} not met ({expected})")


def expect_status(req_id: str, response: httpx.Response, *statuses: int) -> bool:
    wanted = " or ".join(str(s) for s in statuses)
    return expect(req_id, response.status_code in statuses, f"HTTP {wanted}", response, response)


def require_success(req_id: str, response: httpx.Response, status: int) -> None:
    """Record the status requirement; go on after any 2xx (a 200 for a 201 is reported)."""
    expect_status(req_id, response, status)
    if not 200 <= response.status_code < 300:
        raise Blocked(
            f"cannot continue: {response.request.method} {response.request.url.path} "
            f"answered {response.status_code}"
        )
