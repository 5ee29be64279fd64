"""An operation's deadlines (suite/http/observe.py: Deadlines): two per run, and the second kept
for a request a status finding may rest on (the run's credential, valid input, inside a test),
so that probes, credential checks and broken input cannot leave a hanging operation unjudged."""

from __future__ import annotations

import pytest

from assistant_conformance.suite.config.run_folder import SharedCounts
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


@pytest.mark.req("CONV-STATUS")
def test_side_requests_of_two_workers_at_once_leave_a_plain_request_its_deadline() -> None:
    """Each worker probes the capability groups at its start: two probes sent at the same moment
    both find the operation never late and both miss. A plain request is still asked once (its
    fault is the status finding: conversation-search-hangs with the default workers)."""
    deadlines = Deadlines(SharedCounts(None))
    held = [deadlines.ask(OPERATION, 2.0, plain=False) for _ in range(2)]  # both out at once
    for place in held:
        deadlines.done(OPERATION, place, AnswerFault(SILENT, "no answer", None), plain=False)  # type: ignore[arg-type]
    try:
        miss(deadlines, plain=True)
    except Overdue as unasked:  # (a skip to pytest: the verdict this test guards against)
        pytest.fail(f"the plain request was not asked: {unasked.msg}")
    for plain in (True, False):
        with pytest.raises(Overdue) as late:
            deadlines.ask(OPERATION, 2.0, plain)
        assert not late.value.side


@pytest.mark.req("CONV-STATUS")
def test_after_two_side_misses_a_side_request_is_refused_as_one() -> None:
    """Refused as a side request (the property layer withholds that case and goes on to a valid
    one), not as the operation given up (which ends the whole test not judged)."""
    deadlines = Deadlines(SharedCounts(None))
    held = [deadlines.ask(OPERATION, 2.0, plain=False) for _ in range(2)]
    for place in held:
        deadlines.done(OPERATION, place, AnswerFault(SILENT, "no answer", None), plain=False)  # type: ignore[arg-type]
    with pytest.raises(Overdue) as side:
        deadlines.ask(OPERATION, 2.0, plain=False)
    assert side.value.side


@pytest.mark.req("CONV-STATUS")
def test_a_plain_miss_a_flow_caught_is_charged_once_at_the_tests_end() -> None:
    """A test that caught the fault (to try another way) or ended not judged: the missed deadline
    is still its finding, on the operation's status, since the operation may not be asked again;
    one a finding already rests on is not charged twice."""
    import httpx

    from assistant_conformance.report import redact
    from assistant_conformance.suite.http import exchange, running_test
    from assistant_conformance.suite.judging import answer_charges, findings

    redact.register("selftest-run-token")
    url = "http://127.0.0.1:9/api/ai/conversations/search"
    request = httpx.Request("POST", url, headers={"Authorization": "Bearer selftest-run-token"})
    caught, judged = (
        AnswerFault(SILENT, f"{OPERATION}: no answer", exchange.request_evidence(request, None, {}))
        for _ in range(2)
    )
    record = findings.TestRecord(frozenset({"CONV-STATUS"}), strict=False)
    with findings.recording(record):
        assert running_test.plain_in_test(request.headers)
        running_test.missed(caught)  # caught by a flow: nothing judged it
        running_test.missed(judged)
        answer_charges.charge_fault(judged)  # what reached the plugin
        answer_charges.charge_observations(record)
    assert [(f.requirement, f.verdict) for f in record.findings] == [("CONV-STATUS", "fail")] * 2
    with running_test.following([]):  # a fixture's set-up: nothing judges what misses there
        assert not running_test.plain_in_test(request.headers)
