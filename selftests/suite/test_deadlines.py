"""An operation's deadlines (suite/http/observe.py: Deadlines): two per run, and the second kept
for a request a status finding may rest on (the run's credential, valid input, inside a test),
so that probes, credential checks and broken input cannot leave a hanging operation unjudged."""

from __future__ import annotations

import pytest

from assistant_conformance.suite.config.shared import SharedCounts
from assistant_conformance.suite.http.observe import SILENT, AnswerFault, Deadlines, Overdue

OPERATION = "POST /api/ai/conversations/search"


def miss(deadlines: Deadlines, plain: bool) -> None:
    held = deadlines.ask(OPERATION, 2.0, plain)
    deadlines.done(OPERATION, held, AnswerFault(SILENT, "no answer", None), plain)  # type: ignore[arg-type]


@pytest.mark.req("ROBUST-NO-5XX")
def test_a_side_request_spends_one_deadline_and_leaves_the_last_to_a_plain_one() -> None:
    deadlines = Deadlines(SharedCounts(None))
    miss(deadlines, plain=False)  # a capability probe, or a request without the credential
    with pytest.raises(Overdue) as side:
        deadlines.ask(OPERATION, 2.0, plain=False)
    assert side.value.side
    miss(deadlines, plain=True)  # the valid request is still asked: its miss is the finding
    for plain in (True, False):
        with pytest.raises(Overdue) as late:
            deadlines.ask(OPERATION, 2.0, plain)
        assert not late.value.side and "twice" in late.value.msg


@pytest.mark.req("ROBUST-NO-5XX")
def test_two_plain_misses_end_the_operation_for_every_request() -> None:
    deadlines = Deadlines(SharedCounts(None))
    miss(deadlines, plain=True)
    miss(deadlines, plain=True)
    with pytest.raises(Overdue) as late:
        deadlines.ask(OPERATION, 2.0, plain=False)
    assert not late.value.side
