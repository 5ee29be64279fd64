"""From pytest's test reports to the result model (results.TestResult), findings decide outcomes.

The plugin calls `settle` while pytest builds each report: failed findings fail the test (with
the requirement / expected / actual / curl text), failures the baseline knows become xfail, and
what the result model needs is put on the report as a plain dict (`report.conformance`), which
pytest-xdist carries from the workers to the controller with the rest of the report.

A check not judged raises the suite's NotJudged (http/observe.py), no pytest's: `NotJudgedSkips`
makes it pytest's skip with its reason and the place it was raised, which the reports read as a
skip raised by pytest.skip was read.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Generator
from typing import Any

import pytest

from assistant_conformance.report import integrations, redact
from assistant_conformance.report.baseline import BaselineEntry
from assistant_conformance.report.model import FAIL, Finding, GroupStatus, TestResult
from assistant_conformance.suite.http.observe import NotJudged
from assistant_conformance.suite.judging.findings import Blocked

ATTR = "conformance"


def requirement_ids(item: pytest.Item) -> list[str]:
    """The requirement IDs a test names (its `req` markers), in order."""
    return list(dict.fromkeys(rid for mark in item.iter_markers("req") for rid in mark.args))


def _skip_reason(report: pytest.TestReport) -> str:
    if isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    return ""


def body_outcome(report: pytest.TestReport, call: pytest.CallInfo[None]) -> tuple[str, str]:
    """How the test itself ended, before findings change its outcome; and why."""
    if report.passed:
        return "passed", ""
    if report.skipped:
        blocked = call.excinfo is not None and isinstance(call.excinfo.value.__cause__, Blocked)
        message = getattr(call.excinfo.value, "msg", None) if call.excinfo else None
        return ("blocked" if blocked else "skipped"), str(message or _skip_reason(report))
    reason = call.excinfo.exconly().splitlines()[0][:300] if call.excinfo else "failed"
    return ("failed" if report.when == "call" else "error"), f"{report.when}: {reason}"


def skipped(not_judged: NotJudged, at_test: bool = False) -> BaseException:
    """`not_judged` as pytest's skip: its reason, where it was raised (`at_test`: the test's place,
    as pytest gives a fixture's skip) and, as its cause, itself (a Blocked test is told apart)."""
    skip = pytest.skip.Exception(not_judged.msg, _use_item_location=at_test)
    skip.__cause__ = not_judged
    return skip.with_traceback(not_judged.__traceback__)


class NotJudgedSkips:
    """NotJudged into pytest's skip: raised in a test function, before schemathesis' wrapper
    (which would take the standard library's SkipTest for its own); in any phase, before the
    report is made (a fixture's, at the test's place, as pytest places a fixture's skip)."""

    @pytest.hookimpl(wrapper=True, trylast=True)  # innermost: before schemathesis' wrapper
    def pytest_pyfunc_call(self) -> Generator[None, object, object]:
        try:
            return (yield)
        except NotJudged as not_judged:
            raise skipped(not_judged) from not_judged

    @pytest.hookimpl(wrapper=True, tryfirst=True)  # before any other reads the call
    def pytest_runtest_makereport(
        self, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        if call.excinfo is not None and isinstance(call.excinfo.value, NotJudged):
            skip = skipped(call.excinfo.value, at_test=call.when == "setup")
            call.excinfo = pytest.ExceptionInfo.from_exception(skip)
        return (yield)


def redact_report(report: pytest.TestReport, call: pytest.CallInfo[None]) -> None:
    """Mask secrets in what pytest, JUnit and Allure show of a test: its exception, its longrepr,
    its captured output."""
    if call.excinfo is not None:
        redact.exception(call.excinfo.value)
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        report.longrepr = (longrepr[0], longrepr[1], redact.text(str(longrepr[2])))
    elif longrepr is not None:
        text = str(longrepr)
        masked = redact.text(text)
        if masked != text:
            report.longrepr = masked
    report.sections = [(title, redact.text(content)) for title, content in report.sections]


def decide_outcome(
    report: pytest.TestReport,
    call: pytest.CallInfo[None],
    requirement_ids: list[str],
    recorded: list[Finding],
    baseline: dict[str, BaselineEntry],
    extra: dict[str, Any],
) -> None:
    outcome, reason = body_outcome(report, call)
    door = [f.requirement for f in recorded if f.requirement not in requirement_ids]
    requirement_ids = [*requirement_ids, *dict.fromkeys(door)]  # charged by the door to any test
    failed = [f for f in recorded if f.verdict == FAIL]
    if failed:
        text = "\n\n".join(f.render() for f in failed)
        report.longrepr = text if not report.failed else f"{text}\n\n{report.longrepr}"
        report.outcome = "failed"
        integrations.attach(failed)
        _known(report, failed, baseline, outcome)
    setattr(
        report,
        ATTR,
        {
            "requirements": requirement_ids,
            "outcome": outcome,
            "reason": redact.text(reason),
            "findings": [f.as_json() for f in recorded],
            **extra,
        },
    )


def _known(
    report: pytest.TestReport,
    failed: list[Finding],
    baseline: dict[str, BaselineEntry],
    outcome: str,
) -> None:
    """A test that fails only on requirements the baseline lists is an expected failure."""
    today = dt.date.today()
    entries = [baseline.get(f.requirement) for f in failed]
    if outcome in ("passed", "blocked") and all(e and not e.expired(today) for e in entries):
        report.outcome = "skipped"
        listed = sorted({f.requirement for f in failed})
        report.wasxfail = "known (baseline): " + ", ".join(listed)


def test_result(report: pytest.TestReport) -> TestResult | None:
    data = getattr(report, ATTR, None)
    if not data or not data["requirements"]:
        return None
    if report.when != "call" and data["outcome"] == "passed":
        return None  # set-up and tear-down that went well say nothing
    return TestResult(
        nodeid=report.nodeid,
        requirements=list(data["requirements"]),
        outcome=data["outcome"],
        findings=[Finding.of_json(f) for f in data["findings"]],
        reason=data["reason"],
        duration=report.duration,
    )


class Collector:
    """Gathers the results of the run where reports arrive (the controller under xdist)."""

    def __init__(self, caps: dict[str, GroupStatus]) -> None:
        self.caps = caps
        self.results: list[TestResult] = []
        self.unattributed: list[str] = []  # failed tests that name no requirement

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = getattr(report, ATTR, None) or {}
        for group, status in data.get("capabilities", {}).items():  # probed on a worker
            self.caps.setdefault(group, GroupStatus.of_json(status))
        result = test_result(report)
        if result is not None:
            self.results.append(result)
        elif report.failed and not data.get("requirements"):
            self.unattributed.append(report.nodeid)
