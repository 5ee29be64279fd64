"""What a run measured of its target bounds what it waits for: a run wait's deadline
is the wait for a run, an operation's deadline grows with its answers (within a bound), the
suite's runs in flight are counted across processes, a wait behind them is no finding, and a poll
that waited out its bound once is not waited out again. Counts and flags only: no timing."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from assistant_conformance.suite.config.shared import SharedCounts
from assistant_conformance.suite.flows import Waits, poll
from assistant_conformance.suite.http import running, trail
from assistant_conformance.suite.http.exchange import Exchange
from assistant_conformance.suite.http.observe import SILENT, AnswerFault, Deadlines
from assistant_conformance.suite.http.running import RUN_WAIT, RunLoad
from assistant_conformance.suite.judging import findings

CREATE = "POST /api/ai/threads"


def test_a_run_wait_is_given_the_wait_for_a_run_and_others_grow_with_their_answers() -> None:
    late = Deadlines(SharedCounts(None), run_wait=30.0, run_waits=frozenset({RUN_WAIT}))
    assert late.deadline_of(RUN_WAIT, 10.0) == 30.0
    assert late.deadline_of(CREATE, 10.0) == 10.0
    late.took(CREATE, 4.0, 10.0)  # twice 4 s is under the deadline: nothing to grow
    assert late.deadline_of(CREATE, 10.0) == 10.0
    late.took(CREATE, 7.0, 10.0)
    assert late.deadline_of(CREATE, 10.0) == 14.0
    late.took(CREATE, 60.0, 10.0)  # grown at most twice --request-timeout
    assert late.deadline_of(CREATE, 10.0) == 20.0


def test_runs_in_flight_are_counted_by_every_process_and_the_most_kept(tmp_path: Path) -> None:
    shared = tmp_path / running.LOAD_FILE
    one, other = RunLoad(SharedCounts(shared), at_once=2), RunLoad(SharedCounts(shared), at_once=2)
    assert one.take(holding=False) == 1 and other.take(holding=False) == 2
    assert one.take(holding=True) == 3  # a test holding a place does not wait for itself
    other.give()
    assert one.in_flight() == 2 and other.most() == 3
    assert json.loads(shared.read_text()) == {"in flight": 2, "most": 3}


def _silent() -> AnswerFault:
    evidence = Exchange("POST", "http://t/api/ai/threads/x/runs/wait", {}, None, None, {}, "")
    return AnswerFault(SILENT, "POST runs/wait: no answer within 30 s", evidence)


def test_a_run_wait_behind_the_suites_own_runs_is_no_finding() -> None:
    runs = RunLoad(SharedCounts(None))
    with running.run_place(runs, RUN_WAIT) as alone:
        fault = _silent()
        alone.delayed(fault, waits_for_run=True)
        assert fault.loaded == ""  # nothing of the suite's ahead of it: the target's
    runs.take(holding=False)  # another test's run
    with running.run_place(runs, RUN_WAIT) as behind:
        fault = _silent()
        behind.delayed(fault, waits_for_run=True)
        assert "1 other run(s) of the suite were in flight" in fault.loaded
    assert runs.in_flight() == 1  # the wait's place given back with its answer
    late = Deadlines(SharedCounts(None))
    late.done(RUN_WAIT, held=False, fault=fault)
    assert late.counts.get(RUN_WAIT) == 0  # not counted as a deadline missed


def _status_answer(statuses: dict[str, str]) -> httpx.Response:
    body = json.dumps([{"id": i, "status": s} for i, s in statuses.items()]).encode()
    entry = trail.Entry("GET", "http://t/status", {}, None, status=200)
    entry.response_headers = {"content-type": "application/json"}
    entry.take(body)
    return httpx.Response(200, content=body, extensions={trail.ENTRY: entry})


def test_a_poll_that_waited_out_its_bound_is_not_waited_again_nor_judged() -> None:
    waits = Waits(SharedCounts(None))
    until = {"kind": "documents-settled", "ids": ["d"]}
    reads: list[int] = []

    def read() -> httpx.Response:
        reads.append(1)
        return _status_answer({"d": "waiting"})

    assert poll(read, until, 0.0, waits)[1] is False  # waited its (nil) bound: said for the run
    assert waits.spent("documents-settled")
    before = len(reads)
    with pytest.raises(findings.Blocked, match="waited once, not again"):
        poll(read, until, 3600.0, waits)  # an hour's bound, not waited: one read
    assert len(reads) == before + 1
    settled = poll(lambda: _status_answer({"d": "finish"}), until, 3600.0, waits)
    assert settled[1] is True  # one that holds is judged as ever
