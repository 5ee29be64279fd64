"""Findings: what a test observed about one requirement, and the verdict that follows.

Tests call `expect` (soft: record and go on) or `require` (record, and stop the test when the
condition fails because nothing after it can be checked). The plugin turns the findings of a test
into its outcome: a failed MUST (or any failed requirement under --strict-conformance) fails the
test; a failed SHOULD is a warning.

A pass rests on a behaviour seen: a requirement passes only where a test recorded it held. Where a
test cannot judge one, it says why (`not_judged`): a rejection is judged only against a control
request of the same operation that the target accepted (`expect_rejected`), and a test stopped by a
failed requirement names that requirement for the rest.

The record of the test that is running is its scope (suite/http/running_test.py, `recording`): a
thread a test starts with its context (the live stream reader) records into the same test.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

from assistant_conformance.contract.catalogue import load
from assistant_conformance.contract.openapi import by_label, match_path, operation_label
from assistant_conformance.report.exchange_record import ExchangeRecord
from assistant_conformance.report.model import FAIL, PASS, SKIP, WARN, Finding
from assistant_conformance.suite.http import absent, running_test, trail
from assistant_conformance.suite.http.answer_bounds import label_of
from assistant_conformance.suite.http.exchange import describe, evidence_record, of_response
from assistant_conformance.suite.http.observe import NotJudged
from assistant_conformance.suite.http.running_test import Scope
from assistant_conformance.suite.judging import checks
from assistant_conformance.suite.judging.error_bodies import error_in

Check = checks.Check  # how a replay judges a finding again (suite/evidence/replay.py)


@dataclass
class Traced:
    """A failed finding, the exchanges that led to it (the test's trail[start:end]), its check."""

    finding: Finding
    start: int
    end: int
    check: Check


@dataclass
class TestRecord(Scope):
    """The running test's scope (suite/http/running_test.py: what the doors exchanged and observed
    during it), with its findings."""

    allowed: frozenset[str]
    strict: bool
    nodeid: str = ""
    findings: list[Finding] = field(default_factory=list)
    window: int = 0  # where the exchanges of the current case begin (the property layer's)
    traced: list[Traced] = field(default_factory=list)
    finalizers: list[Callable[[], None]] = field(default_factory=list)  # run as the test ends

    def entry(self, of: object) -> int:
        """The trail index of an answer's exchange (else the latest exchange)."""
        found = of.extensions.get(trail.ENTRY) if isinstance(of, httpx.Response) else of
        for index in range(len(self.exchanges) - 1, -1, -1):
            if self.exchanges[index] is found:
                return index
        return len(self.exchanges) - 1

    def checked(self) -> frozenset[str]:
        return self.allowed

    def finish(self) -> None:
        for finalize in self.finalizers:
            finalize()


def recording(record: TestRecord) -> AbstractContextManager[Scope]:
    """Findings, exchanges and observations of this block (a test's call) go to `record`."""
    return running_test.within(record)


class Blocked(NotJudged):
    """A test cannot go on after a failed precondition; recorded findings decide its verdict."""


def recorded() -> TestRecord | None:
    """The running test's record (None outside a test: a fixture's set-up, a replay)."""
    scope = running_test.current_scope()
    return scope if isinstance(scope, TestRecord) else None


def current() -> TestRecord:
    record = recorded()
    if record is None:
        raise RuntimeError("a finding recorded outside a conformance test")
    return record


def _record(
    req_id: str,
    ok: bool,
    expected: str,
    actual: object,
    response: object,
    check: Check | None = None,
    span: tuple[int, int] | None = None,
    operation: str | None = None,
) -> Finding:
    record = current()
    requirement = load()[req_id]
    if req_id not in record.allowed:
        raise RuntimeError(f"test checks {req_id} but does not name it in @pytest.mark.req")
    failed = FAIL if requirement.level == "MUST" or record.strict else WARN
    verdict = PASS if ok else failed
    finding = Finding(
        req_id,
        verdict,
        expected,
        "" if ok else describe(actual),
        None if ok else _evidence(response),
    )
    finding.operation = operation or _label(response)
    record.findings.append(finding)
    if not ok:  # by default, judged again by its test's own code
        start, end = span or (record.window, len(record.exchanges))
        kept = check if check is not None else checks.OwnTestCheck()
        record.traced.append(Traced(finding, start, end, kept))
    return finding


def _evidence(response: object) -> ExchangeRecord | None:
    """A failed finding's exchange, redacted (a pass keeps none: most findings pass)."""
    if isinstance(response, httpx.Response):
        return evidence_record(of_response(response))
    if isinstance(response, trail.Entry):
        return evidence_record(response)
    return None


def expect(
    req_id: str,
    ok: bool,
    expected: str,
    actual: object = "",
    response: object = None,
    *,
    check: Check | None = None,
    span: tuple[int, int] | None = None,
    operation: str | None = None,
) -> bool:
    """Record whether requirement `req_id` held here; answer `ok` so callers can branch on it.
    `check` says how a replay judges it again (by default: its test, run again); `operation`
    (`METHOD /path`) which operation it was judged on, where `response` does not say."""
    _record(req_id, bool(ok), expected, actual, response, check, span, operation)
    return bool(ok)


def _label(response: object) -> str:
    """`METHOD /path/{template}` of the request behind an answer or exchange ("" for none)."""
    if isinstance(response, httpx.Response):
        return label_of(response.request)
    if isinstance(response, trail.Entry):
        return operation_label(response.method, urlsplit(response.url).path)
    return ""


def index(of: object) -> int:
    """The trail index of an answer (an httpx.Response, a stream's trail.Entry) in this test."""
    return current().entry(of)


def judge(req_id: str, check: Check, expected: str, evidence: object = None) -> bool:
    """Record whether requirement `req_id` held by a declared check (suite/judging/checks.py) of the
    test's exchanges (`index` gives their places): the words a replay judges it by again."""
    ok, actual = checks.evaluate(check, current().exchanges)
    return expect(req_id, ok, expected, actual, evidence, check=check)


def require(
    req_id: str, ok: bool, expected: str, actual: object = "", response: object = None
) -> None:
    """Like expect, but a failed condition ends the test: what follows depends on it."""
    if not expect(req_id, ok, expected, actual, response):
        raise Blocked(f"not judged: {req_id} failed first (expected {expected})")


def charged(
    req_id: str,
    expected: str,
    actual: object,
    response: object,
    check: Check | None = None,
    *,
    ok: bool = False,
) -> None:
    """A failure (or, `ok`, a pass) the judge (suite/judging/answer_charges.py) charges from what
    the doors saw, whichever test sent the request: no test has to name the requirement. Outside a
    test (a fixture's set-up) there is no record to charge, and it is dropped."""
    record = recorded()
    if record is None:
        return
    record.allowed = record.allowed | {req_id}
    _record(req_id, ok, expected, actual, response, check)


def not_judged(req_id: str, reason: str) -> None:
    """Record that this test could not judge `req_id`, and why (a skip, never a pass)."""
    if req_id not in current().allowed:
        raise RuntimeError(f"test checks {req_id} but does not name it in @pytest.mark.req")
    current().findings.append(Finding(req_id, SKIP, "", describe(reason)))


def refused_control(control: httpx.Response | None) -> str | None:
    """Why a control request proves nothing: None when the target accepted it (a 2xx)."""
    if control is None:
        return "no valid request of the operation was answered"
    if 200 <= control.status_code < 300:
        return None
    return f"{label_of(control.request)} answered {control.status_code} to a valid request"


def expect_rejected(
    req_id: str, response: httpx.Response, what: str, control: httpx.Response | None
) -> bool | None:
    """A 4xx for input that breaks the document, judged only where `control` (the same operation
    with valid input, in this run) was accepted: a rejection proves nothing where the operation
    refuses everything (or does not exist). None when not judged."""
    why = refused_control(control)
    if why is not None:
        not_judged(req_id, f"not judged: {why}")
        return None
    ok = 400 <= response.status_code < 500
    return expect(req_id, ok, f"{what}: HTTP 4xx", response, response)


def expect_status(req_id: str, response: httpx.Response, *statuses: int) -> bool:
    """The status expected. Where that is a success: a 2xx carrying an error object instead is
    no success (its message quoted); a 4xx to a body the document leaves unspecified is no finding
    (the suite sent its own reading of it: not judged); a 5xx is never a refusal of input."""
    success_wanted = all(200 <= s < 300 for s in statuses)
    wanted = " or ".join(str(s) for s in statuses)
    check = checks.StatusCheck(entry=current().entry(response), statuses=statuses)
    if success_wanted and (why := absent.unimplemented(response)):
        expected = f"HTTP {wanted}: the operation implemented"
        return expect(req_id, False, expected, why, response, check=check)
    if success_wanted and refused_reading(response):
        not_judged(req_id, f"not judged: {_refused_guess(response)}")
        return False
    error = error_in(response) if success_wanted else None
    if error is not None:
        actual = f"HTTP {response.status_code} carrying an error instead of a result: {error}"
        return expect(req_id, False, f"HTTP {wanted} with its result", actual, response)
    ok = response.status_code in statuses
    return expect(req_id, ok, f"HTTP {wanted}", response, response, check=check)


def expect_success(req_id: str, response: httpx.Response, what: str) -> bool:
    """A 2xx with its result (not an error object under a success status), for `what`."""
    error = error_in(response)
    if error is not None:
        actual = f"HTTP {response.status_code} carrying an error instead of a result: {error}"
        return expect(req_id, False, f"{what}: HTTP 2xx with its result", actual, response)
    ok = 200 <= response.status_code < 300
    return expect(req_id, ok, f"{what}: HTTP 2xx", response, response)


def refused_reading(response: httpx.Response) -> bool:
    """A 4xx to a body the document leaves unspecified (the suite's reading of it): the target
    may read that body otherwise. A 5xx is a fault, never such a refusal."""
    return (
        400 <= response.status_code < 500
        and guessed_body(response)
        and absent.unimplemented(response) is None
    )


def require_success(req_id: str, response: httpx.Response, status: int) -> None:
    """Record the status requirement; go on after any 2xx (a 200 for a 201 is reported)."""
    if not expect_status(req_id, response, status) and error_in(response) is not None:
        raise Blocked(f"not judged: {req_id} failed first (an error under HTTP 2xx)")
    if not 200 <= response.status_code < 300:
        why = absent.unimplemented(response) or (
            _refused_guess(response)
            if refused_reading(response)
            else f"{label_of(response.request)} answered {response.status_code} to a valid request "
            f"({req_id})"
        )
        raise Blocked(f"not judged: {why}")


def guessed_body(response: httpx.Response) -> bool:
    """Whether the request carried a body the document leaves unspecified (the suite's reading)."""
    request = response.request
    found = match_path(request.url.path)
    op = by_label().get(f"{request.method} {found[0]}") if found else None
    try:
        sent = bool(request.content)
    except httpx.RequestNotRead:
        sent = True
    return op is not None and op.body_kind == "interpreted" and sent


def _refused_guess(response: httpx.Response) -> str:
    return (
        f"{label_of(response.request)} refused the suite's reading of a body the document leaves "
        f"unspecified (HTTP {response.status_code})"
    )
