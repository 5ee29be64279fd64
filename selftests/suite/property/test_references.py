"""What the property layer judges a generated case by: references the run owns (a path id, the
status query's `ids`, the process body's strings) or a robustness case; and a status pass kept per
operation, so that each operation a status requirement names is seen exercised."""

from __future__ import annotations

import pytest

from assistant_conformance.contract.catalogue import load
from assistant_conformance.report import verdicts
from assistant_conformance.report.model import TestResult
from assistant_conformance.suite.judging import findings
from assistant_conformance.suite.property import owned_bodies
from assistant_conformance.suite.property.generation import schema
from assistant_conformance.suite.property.judge import Judge

KB, DOC, OTHER = "kb-of-the-run", "doc-of-the-run", "doc-of-the-run-2"
OWNED = {KB, DOC, OTHER}


def process(body: object) -> object:
    return schema()["/api/ai/v1/kb/{id}/process"]["POST"].Case(
        path_parameters={"id": KB}, body=body
    )


def status(ids: str) -> object:
    return schema()["/api/ai/knowledges/{id}/status"]["GET"].Case(
        path_parameters={"id": KB}, query={"ids": ids}
    )


@pytest.mark.parametrize(
    ("case", "linked", "linked_body", "owned"),
    [
        (process([DOC]), (), False, True),
        (process([]), (), False, True),  # names nothing: no reference to nothing either
        (process(["", "\u0089\uc463"]), (), False, False),  # drawn: names no document
        (process(["LPT1"]), ("id",), True, True),  # a link of the run's own answers filled it
        (process([DOC, 1]), (), False, False),
        (status(f"{DOC},{OTHER}"), (), False, True),
        (status("LPT1"), (), False, False),
        (status(""), (), False, False),  # names "", which is no document of the run
        (status("LPT1"), ("id", "ids"), False, True),
    ],
)
def test_a_reference_the_run_does_not_own_makes_a_robustness_case(
    case, linked, linked_body, owned
) -> None:
    assert owned_bodies.names_owned(case, OWNED, linked, linked_body) is owned


def test_a_path_id_the_run_does_not_own_still_makes_one() -> None:
    case = schema()["/api/ai/v1/kb/{id}/process"]["POST"].Case(
        path_parameters={"id": "0"}, body=[DOC]
    )
    assert not owned_bodies.names_owned(case, OWNED, (), False)
    assert owned_bodies.names_owned(case, OWNED, ("id",), False)


SEARCH = "POST /api/ai/conversations/{conversation_id}/messages/search"
CREATE = "POST /api/ai/conversations/{conversation_id}/messages"


def test_a_status_pass_is_kept_for_each_operation_of_one_test() -> None:
    """A state machine's steps pass MSG-STATUS on one operation, then on another: both are kept,
    so the verdict (which rests on every operation it names) sees the search exercised."""
    record = findings.TestRecord(frozenset({"MSG-STATUS"}), strict=False, nodeid="t::machine")
    with findings.recording(record):
        judge = Judge()
        judge.judge("createMessage", "MSG-STATUS", True)
        judge.judge("searchMessages", "MSG-STATUS", True)
        judge.judge("searchMessages", "MSG-STATUS", True)  # once per operation
    kept = [f.operation for f in record.findings if f.requirement == "MSG-STATUS"]
    assert kept == [CREATE, SEARCH]
    test = TestResult("t::machine", ["MSG-STATUS"], "passed", list(record.findings))
    result = verdicts.requirement_results(load(), [test])["MSG-STATUS"]
    assert SEARCH not in result.reason
