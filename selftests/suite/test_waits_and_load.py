"""What a run measured of its target bounds what it waits for: a run wait's deadline
is the wait for a run, an operation's deadline grows with its answers (within a bound), the
suite's runs in flight are counted across processes, a wait behind them is no finding, and a poll
that waited out its bound once is not waited out again. Counts and flags only: no timing."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import httpx
import pytest
from conftest import TOKEN_A

from assistant_conformance.reference import embedded
from assistant_conformance.suite.config.run_folder import SharedCounts
from assistant_conformance.suite.flows import Waits, poll
from assistant_conformance.suite.http import clients, observe, runs_in_flight, trail
from assistant_conformance.suite.http.observe import SILENT, AnswerFault, Deadlines
from assistant_conformance.suite.http.policy import Policy
from assistant_conformance.suite.http.runs_in_flight import RUN_WAIT, RunLoad
from assistant_conformance.suite.http.trail import Entry
from assistant_conformance.suite.judging import checks, findings

CREATE = "POST /api/ai/threads"


def test_a_run_wait_is_given_the_wait_for_a_run_and_others_grow_with_their_answers() -> None:
    late = Deadlines(SharedCounts(None), run_wait=30.0, run_waits=frozenset({RUN_WAIT}))
    assert late.deadline_of(RUN_WAIT, 10.0) == 30.0
    assert observe.said(late.deadline_of(RUN_WAIT, 10.0)).startswith("30 s (--process-timeout")
    assert late.deadline_of(CREATE, 10.0) == 10.0
    assert observe.said(late.deadline_of(CREATE, 10.0)) == "10 s (--request-timeout)"
    late.took(CREATE, 4.0, 10.0)  # twice 4 s is under the deadline: nothing to grow
    assert late.deadline_of(CREATE, 10.0) == 10.0
    late.took(CREATE, 7.0, 10.0)
    grown = late.deadline_of(CREATE, 10.0)
    assert grown == 14.0 and "twice the longest answer of this operation" in grown.source
    late.took(CREATE, 60.0, 10.0)  # grown at most twice --request-timeout
    assert late.deadline_of(CREATE, 10.0) == 20.0


def test_a_wait_behind_the_suites_runs_is_given_their_time_within_a_bound() -> None:
    late = Deadlines(SharedCounts(None), run_wait=30.0, run_waits=frozenset({RUN_WAIT}))
    behind = late.deadline_of(RUN_WAIT, 10.0, ahead=1, longest_run=12.0)
    assert behind == 42.0
    assert "1 run(s) of the suite ahead of it" in behind.source and "12 s" in behind.source
    assert late.deadline_of(RUN_WAIT, 10.0, ahead=1, longest_run=500.0) == 60.0  # each at most 30
    assert late.deadline_of(RUN_WAIT, 10.0, ahead=1, longest_run=0.0) == 30.0  # none measured


def test_runs_in_flight_never_pass_the_bound_across_processes(tmp_path: Path) -> None:
    shared = tmp_path / runs_in_flight.LOAD_FILE
    one, other = RunLoad(SharedCounts(shared), at_once=2), RunLoad(SharedCounts(shared), at_once=2)
    assert one.take() == 1 and other.take() == 2
    third = threading.Thread(target=one.take)
    third.start()
    third.join(0.5)
    assert third.is_alive()  # no place: it waits, whoever asks
    other.give()
    third.join(60)
    assert not third.is_alive() and one.in_flight() == 2
    assert other.summary() == {"most": 2, "over": 0}
    impatient = RunLoad(SharedCounts(shared), at_once=2, patience=0.0)
    assert impatient.take() == 3  # waited its longest: goes, counted over the bound
    assert json.loads(shared.read_text())["over the bound"] == 1 and one.summary()["most"] == 3


RUNS = "http://t/api/ai/threads/th/runs"


class Followed(RunLoad):
    """A run load whose followers read `statuses` one after another (the last one again)."""

    def __init__(self, statuses: list[tuple[int, object]]) -> None:
        super().__init__(SharedCounts(None))
        self.statuses, self.reads = statuses, []

    def read(self, url: str, headers: Mapping[str, str]) -> tuple[int, object]:
        self.reads.append((url, dict(headers)))
        return self.statuses[min(len(self.reads), len(self.statuses)) - 1]


def _place(runs: Followed, operation: str, tail: str = "") -> runs_in_flight.RunPlace:
    headers = {"Authorization": "Bearer x", "Content-Type": "application/json"}
    return runs_in_flight.take_place(runs, operation, RUNS + tail, headers, runs.read)


def _given_back(runs: RunLoad) -> bool:
    until = time.monotonic() + 60  # a bound on the wait, not a timing: the follower ends first
    while runs.in_flight() and time.monotonic() < until:
        time.sleep(0.05)
    return runs.in_flight() == 0


def test_a_run_left_running_holds_its_place_until_it_is_seen_to_end() -> None:
    runs = Followed([(200, {"status": "pending"}), (200, {"status": "running"}),
                     (200, {"status": "success"})])  # fmt: skip
    place = _place(runs, "POST /api/ai/threads/{thread_id}/runs")
    place.answered(200, {}, b'{"run_id": "r1", "status": "pending"}')
    assert _given_back(runs)
    assert runs.reads == [(f"{RUNS}/r1", {"Authorization": "Bearer x"})] * 3  # its credential only
    assert runs.longest_run() > 0  # seen to end: its time measured


def test_a_run_whose_id_is_unknown_is_followed_by_its_threads_runs() -> None:
    runs = Followed([(200, [{"status": "success"}, {"status": "running"}]),
                     (200, [{"status": "success"}, {"status": "interrupted"}])])  # fmt: skip
    _place(runs, "POST /api/ai/threads/{thread_id}/runs", "/stream").closed(False, {}, b": hi\n\n")
    assert _given_back(runs)
    assert [url for url, _ in runs.reads] == [f"{RUNS}?limit=1000&offset=0"] * 2


def test_a_run_known_to_have_ended_or_never_made_gives_its_place_back_at_once() -> None:
    runs = Followed([(200, {"status": "running"})])  # a follower would never end
    _place(runs, RUN_WAIT, "/wait").answered(200, {}, b"{}")  # a wait answered: its run ended
    _place(runs, "POST /api/ai/threads/{thread_id}/runs", "/stream").closed(True, {}, None)
    _place(runs, "POST /api/ai/threads/{thread_id}/runs").answered(422, {}, b"{}")  # none made
    assert runs.in_flight() == 0 and runs.reads == []
    gone = Followed([(404, {"detail": "not found"})])
    _place(gone, "POST /api/ai/threads/{thread_id}/runs").answered(
        201, {"Content-Location": "/api/ai/threads/th/runs/r2"}, b"{}"
    )
    assert _given_back(gone)


def test_a_run_over_gives_no_count_back() -> None:
    runs = Followed([(200, {"status": "running"})])
    place = _place(runs, "POST /api/ai/threads/{thread_id}/runs")
    runs.stopped = True  # the run's end: its shared counts are gone
    place.answered(201, {}, b'{"run_id": "r3"}')
    place.give()
    assert runs.in_flight() == 1  # nothing written after the end


def _silent() -> AnswerFault:
    evidence = Entry("POST", "http://t/api/ai/threads/x/runs/wait", {}, None)
    return AnswerFault(SILENT, "POST runs/wait: no answer within 30 s", evidence)


def test_a_run_wait_behind_the_suites_own_runs_is_no_finding() -> None:
    runs = Followed([(200, [])])
    alone = _place(runs, RUN_WAIT, "/wait")
    fault = alone.delayed(_silent(), waits_for_run=True)
    assert fault.loaded == ""  # nothing of the suite's ahead of it: the target's
    alone.give()
    runs.take()  # another test's run
    behind = _place(runs, RUN_WAIT, "/wait")
    fault = behind.delayed(_silent(), waits_for_run=True)
    assert "1 other run(s) of the suite were in flight" in fault.loaded
    assert "1 ahead of it" in fault.loaded
    behind.answered(200, {}, b"{}")
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
    until = checks.DocumentsSettledCheck(entry=checks.LOOP_ANSWER, ids=("d",))
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


def test_the_doors_hold_a_runs_place_until_the_target_says_it_ended(
    reference_server: embedded.RunningServer,
) -> None:
    """Through the real doors (httpx's and requests'): a run started in the background, or a
    stream closed before its end, keeps its place until GET of the run says it has ended (here:
    cancelled); a wait answered gives its place back with the answer."""
    policy = Policy()
    api = clients.client(policy, reference_server.base_url, TOKEN_A)
    thread = api.post("/api/ai/threads", json={}).json()["thread_id"]
    runs = f"/api/ai/threads/{thread}/runs"
    long_run = {"assistant_id": "echo", "input": {"text": " ".join(["w"] * 3000)}}  # 30 s

    def cancelled(run_id: str) -> bool:
        assert policy.runs.in_flight() == 1  # still running: its place held
        api.post(f"{runs}/{run_id}/cancel")
        return _given_back(policy.runs)

    assert cancelled(api.post(runs, json=long_run).json()["run_id"])
    sse = {"Accept": "text/event-stream"}
    with api.stream("POST", f"{runs}/stream", json=long_run, headers=sse) as stream:
        streamed = stream.headers["content-location"].rsplit("/", 1)[-1]
        next(stream.iter_bytes())
    assert cancelled(streamed)  # a stream left before its end: followed
    session = clients.session(policy)
    session.headers["Authorization"] = f"Bearer {TOKEN_A}"
    created = session.post(f"{reference_server.base_url}{runs}", json=long_run)
    assert cancelled(created.json()["run_id"])
    answered = api.post(f"{runs}/wait", json={**long_run, "input": {"text": "w"}})
    assert answered.status_code < 300 and policy.runs.in_flight() == 0
    assert policy.runs.summary() == {"most": 1, "over": 0}
