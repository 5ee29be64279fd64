"""A check not judged: the suite's own NotJudged (no pytest's) is pytest's skip with its reason,
raised in a test, in a fixture (set up once, at the test's place), under Hypothesis (a skip on
the first example, not a failure it shrinks) and inside schemathesis' test (not its own skip)."""

from __future__ import annotations

import json

import pytest

CHECKS = """
import pytest
import schemathesis
from hypothesis import given, settings, strategies as st

from assistant_conformance.suite.http.policy import Throttled
from assistant_conformance.suite.judging.findings import Blocked
from assistant_conformance.suite.safety.budget import BudgetSpent

schema = schemathesis.openapi.from_dict({
    "openapi": "3.0.3", "info": {"title": "t", "version": "1"},
    "paths": {"/things": {"get": {"responses": {"200": {"description": "ok"}}}}},
})


def tally(what):
    with open(what, "a") as f:
        f.write("1")


@pytest.fixture(scope="module")
def spent():
    tally("made")
    raise BudgetSpent("not judged: the budget is spent")


def test_blocked():
    raise Blocked("not judged: a precondition failed")  # BLOCKED


def test_first(spent):  # FIRST
    pass


def test_second(spent):  # SECOND
    pass


@settings(max_examples=20, database=None)
@given(st.integers())
def test_generated(n):
    tally("generated")
    raise Throttled("not judged: still throttled")  # GENERATED


@schema.parametrize()
def test_operation(case):
    raise Blocked("not judged: blocked in schemathesis")  # OPERATION
"""

SEEN = """
import json

def pytest_runtest_logreport(report):
    if report.outcome != "passed":
        with open("seen.jsonl", "a") as f:
            data = getattr(report, "conformance", {})
            f.write(json.dumps([report.nodeid.split("::")[1], report.when, report.outcome,
                                report.longrepr if isinstance(report.longrepr, tuple) else None,
                                data.get("outcome"), data.get("reason")]) + "\\n")
"""


def test_not_judged_is_a_skip_with_its_reason_and_place(pytester: pytest.Pytester) -> None:
    """Run in this process (pytester): the plugin's hooks are what is checked."""
    tmp_path = pytester.path
    (tmp_path / "test_checks.py").write_text(CHECKS)
    (tmp_path / "conftest.py").write_text(SEEN)
    run = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider", "test_checks.py")
    assert run.ret == 0, str(run.stdout)[-3000:] + str(run.stderr)[-3000:]
    lines = (tmp_path / "test_checks.py").read_text().splitlines()
    marked = ("BLOCKED", "FIRST", "SECOND", "GENERATED", "OPERATION")
    line = {w: next(i for i, t in enumerate(lines, 1) if t.endswith(f"# {w}")) for w in marked}
    seen = {
        name: (when, outcome, tuple(longrepr), said, reason)
        for name, when, outcome, longrepr, said, reason in map(
            json.loads, (tmp_path / "seen.jsonl").read_text().splitlines()
        )
    }
    here = str(tmp_path / "test_checks.py")

    def skip(when: str, where: str, said: str, reason: str) -> tuple[object, ...]:
        return (when, "skipped", (here, line[where], f"Skipped: {reason}"), said, reason)

    assert seen == {
        "test_blocked": skip("call", "BLOCKED", "blocked", "not judged: a precondition failed"),
        "test_first": skip("setup", "FIRST", "skipped", "not judged: the budget is spent"),
        "test_second": skip("setup", "SECOND", "skipped", "not judged: the budget is spent"),
        "test_generated": skip("call", "GENERATED", "skipped", "not judged: still throttled"),
        "test_operation[GET /things]": skip(
            "call", "OPERATION", "blocked", "not judged: blocked in schemathesis"
        ),
    }
    assert (tmp_path / "made").read_text() == "1"  # the fixture's skip kept, as pytest keeps it
    assert (tmp_path / "generated").read_text() == "1"  # Hypothesis stopped at the first
