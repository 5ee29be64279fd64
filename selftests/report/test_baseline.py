"""The baseline: listed failures are `known` and pass the gate; a stale entry (now passing, or
expired) fails the run; an entry naming an unknown requirement is a usage error."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from tiny_suite import ALT_TOKEN, TOKEN, Run, run_tiny_suite

from assistant_conformance.contract.catalogue import load
from assistant_conformance.reference import embedded
from assistant_conformance.report import baseline, model
from assistant_conformance.report.baseline import BaselineError
from assistant_conformance.report.model import FAIL, PASS, WARN, Finding, TestResult
from assistant_conformance.report.verdicts import build

TODAY = dt.date(2026, 6, 1)


def _build(entries: dict[str, baseline.BaselineEntry], *tests: TestResult) -> model.Run:
    return build(load(), list(tests), info={}, capabilities={}, baseline=entries, today=TODAY)


def _test(rid: str, verdict: str) -> TestResult:
    """A test that saw `verdict` on `rid` (a pass: on every operation it names)."""
    ops = load().operations.get(rid, ("",)) if verdict == PASS else ("",)
    found = [Finding(rid, verdict, "x", "y", operation=op) for op in ops]
    return TestResult(f"test_{rid}", [rid], "passed", found)


def test_listed_failure_is_known_and_passes_the_gate() -> None:
    entries = {
        "THR-STATUS": baseline.BaselineEntry("THR-STATUS", "fixed in 2.4", dt.date(2026, 7, 1))
    }
    run = _build(entries, _test("THR-STATUS", FAIL))
    assert run.requirements["THR-STATUS"].verdict == "known"
    assert run.requirements["THR-STATUS"].reason == "baseline: fixed in 2.4"
    assert run.gate.exit_status == 0
    assert run.certification.parts["core"] == "not met"  # a known failure is still a failure


def test_listed_warning_is_known_too() -> None:
    run = _build({"AUTH-401": baseline.BaselineEntry("AUTH-401", "403")}, _test("AUTH-401", WARN))
    assert run.requirements["AUTH-401"].verdict == "known"


def test_entry_that_now_passes_is_stale() -> None:
    run = _build(
        {"THR-STATUS": baseline.BaselineEntry("THR-STATUS", "r")}, _test("THR-STATUS", PASS)
    )
    assert run.requirements["THR-STATUS"].verdict == "pass"
    assert run.gate.exit_status == 1
    assert run.gate.problems == [
        "stale baseline entry THR-STATUS in : it passes now: remove the entry"
    ]


def test_expired_entry_is_stale_and_the_failure_counts() -> None:
    entries = {"THR-STATUS": baseline.BaselineEntry("THR-STATUS", "r", dt.date(2026, 5, 31))}
    run = _build(entries, _test("THR-STATUS", FAIL))
    assert run.requirements["THR-STATUS"].verdict == "fail"
    assert run.baseline[0].status == "stale"
    assert run.baseline[0].note == "the entry expired on 2026-05-31"
    assert run.gate.exit_status == 1


def test_entry_not_exercised_changes_nothing() -> None:
    run = _build({"THR-STATUS": baseline.BaselineEntry("THR-STATUS", "r")}, _test("AUTH-401", PASS))
    assert run.baseline[0].status == "not exercised"
    assert run.gate.exit_status == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("NOPE-1: r\n", "unknown requirement ID 'NOPE-1'"),
        ("THR-STATUS: {expires: 2026-01-01}\n", "THR-STATUS needs a reason"),
        ("THR-STATUS: {reason: r, expires: soon}\n", "expires must be YYYY-MM-DD"),
        ("THR-STATUS: {reason: r, until: 2026-01-01}\n", "unknown key 'until'"),
        ("- THR-STATUS\n", "expected a mapping"),
    ],
)
def test_malformed_baseline_is_an_option_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "baseline.yaml"
    path.write_text(text)
    with pytest.raises(BaselineError, match=message):
        baseline.load_baseline(path, load())


def test_both_entry_forms_load(tmp_path: Path) -> None:
    path = tmp_path / "baseline.yaml"
    path.write_text("AUTH-401: answers 403\nTHR-STATUS: {reason: r, expires: 2026-03-31}\n")
    assert baseline.load_baseline(path, load()) == {
        "AUTH-401": baseline.BaselineEntry("AUTH-401", "answers 403"),
        "THR-STATUS": baseline.BaselineEntry("THR-STATUS", "r", dt.date(2026, 3, 31)),
    }


# --- through pytest: exit codes ---------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[embedded.RunningServer]:
    running = embedded.start([TOKEN, ALT_TOKEN], tmp_path_factory.mktemp("ref") / "ref.db")
    yield running
    running.stop()


def _run_with(workdir: Path, server: embedded.RunningServer, text: str) -> Run:
    """The tiny suite with THR-STATUS failing and AUTH-401 warning, and this baseline."""
    workdir.mkdir()
    (workdir / "baseline.yaml").write_text(text)
    args = ("--baseline", "baseline.yaml")
    return run_tiny_suite(workdir, server.base_url, *args, must_status=418, should_status=403)


def test_known_failure_does_not_fail_the_run(
    tmp_path: Path, server: embedded.RunningServer
) -> None:
    run = _run_with(tmp_path / "known", server, "THR-STATUS: answers 200 (ticket 12)\n")
    assert run.returncode == 0, run.output
    assert run.verdicts()["THR-STATUS"] == "known"
    assert run.verdicts()["AUTH-401"] == "warn"
    assert "1 xfailed" in run.output  # JUnit and Allure show it as an expected failure


def test_stale_entries_fail_the_run(tmp_path: Path, server: embedded.RunningServer) -> None:
    text = (
        "THR-STATUS: answers 200 (ticket 12)\n"
        "AUTH-MISSING-REJECTED: was broken\n"  # passes now
        "AUTH-401: {reason: old, expires: 2020-01-01}\n"  # still warns, but expired
    )
    run = _run_with(tmp_path / "stale", server, text)
    assert run.returncode == 1, run.output
    assert run.verdicts()["THR-STATUS"] == "known"
    assert "stale: AUTH-MISSING-REJECTED: it passes now: remove the entry" in run.output
    assert "stale: AUTH-401: the entry expired on 2020-01-01" in run.output
    statuses = {e["requirement"]: e["status"] for e in run.json()["baseline"]["entries"]}
    assert statuses == {
        "THR-STATUS": "applied",
        "AUTH-MISSING-REJECTED": "stale",
        "AUTH-401": "stale",
    }


def test_unknown_requirement_in_baseline_is_a_usage_error(
    tmp_path: Path, server: embedded.RunningServer
) -> None:
    run = _run_with(tmp_path / "unknown", server, "THR-STATSU: typo\n")
    assert run.returncode == 4
    assert "--baseline baseline.yaml: unknown requirement ID 'THR-STATSU'" in run.output
