"""Verdicts that rest only on the run's own doing: a collection read as what the run made (its
filter in the check's data, so a replay judges alike), a read after a request read again until
it is quiet, a run's status read until two reads agree and judged by where it ends."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from assistant_conformance.contract.openapi import MARKER_KEY
from assistant_conformance.suite import flows
from assistant_conformance.suite.flows import owner_reads, runs
from assistant_conformance.suite.flows.owner_reads import AroundRequest, OwnerRead
from assistant_conformance.suite.http import trail
from assistant_conformance.suite.judging import checks

RUNS = "http://t/api/ai/threads/t1/runs"
OURS = {"key": "thread_id", "equals": "t1", "unnamed": "keep"}
MARKED = {"key": f"metadata.{MARKER_KEY}", "equals": "m1", "unnamed": "drop"}


def read(body: Any, method: str = "GET", url: str = RUNS) -> trail.Entry:
    entry = trail.Entry(method, url, {}, None, status=200)
    entry.take(json.dumps(body).encode())
    return entry


def run(run_id: str, thread: str | None = "t1") -> dict[str, Any]:
    return {"run_id": run_id, "status": "success", **({"thread_id": thread} if thread else {})}


def test_a_run_list_is_compared_by_the_runs_of_its_thread() -> None:
    """A list holding every thread's runs: another thread's runs added between the reads are no
    effect; a run of this thread is one."""
    before = read([run("a"), run("x", "t2")])
    others = read([run("y", "t2"), run("a"), run("x", "t2")])
    ours = read([run("b"), run("a"), run("x", "t2")])
    check = checks.SameReadsCheck(entries=(0, 1), filters=(OURS,))
    assert checks.evaluate(check, [before, others])[0]
    ok, said = checks.evaluate(check, [before, ours])
    assert not ok and "thread_id is 't1'" in said[0]
    unfiltered = checks.SameReadsCheck(entries=(0, 1))
    assert not checks.evaluate(unfiltered, [before, others])[0]  # what the filter is for


def test_runs_that_name_no_thread_are_kept_and_a_search_keeps_only_the_marked() -> None:
    unnamed = read([run("a", None)])
    assert not checks.evaluate(
        checks.SameReadsCheck(entries=(0, 1), filters=(OURS,)), [unnamed, read([])]
    )[0]
    search = "http://t/api/ai/threads/search"
    thread = {"thread_id": "t1", "metadata": {MARKER_KEY: "m1"}}
    neighbour = {"thread_id": "n1", "metadata": {"neighbour": 1}}
    copy = {"thread_id": "c1", "metadata": {MARKER_KEY: "m1"}}
    before = read([thread], "POST", search)
    check = checks.SameReadsCheck(entries=(0, 1), filters=(MARKED,))
    assert checks.evaluate(check, [before, read([neighbour, thread], "POST", search)])[0]
    assert not checks.evaluate(check, [before, read([copy, thread], "POST", search)])[0]


def test_the_filter_and_the_request_are_in_the_checks_trail_indexes() -> None:
    check = checks.SameReadsCheck(entries=(1, 3), idle=(2,), filters=(OURS,), request=4)
    assert sorted(check.reads()) == [1, 2, 3, 4]
    moved = check.rebased(lambda i: i + 10)
    assert moved.request == 14 and moved.filters == (OURS,)


class Reads:
    """A target whose answers to one read are, in turn, `bodies` (the last one from then on)."""

    def __init__(self, *bodies: Any) -> None:
        self.bodies: Iterator[Any] = iter(bodies)
        self.last: Any = None

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.last = next(self.bodies, self.last)
        return httpx.Response(200, json=self.last)


def around(*after: Any, before: Any = ()) -> AroundRequest:
    api = httpx.Client(transport=httpx.MockTransport(Reads(*before, *before, *after)))
    reads = [OwnerRead("runs", "GET", RUNS, None, OURS)]
    found = AroundRequest.read_before(api, reads)
    found.read_after()
    return found


@pytest.fixture(autouse=True)
def no_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """What is read, not how long between: the settle is the loops' business, not this test's."""
    monkeypatch.setattr(owner_reads, "AGREE_APART", 0.0)
    monkeypatch.setattr(flows, "AGREE_APART", 0.0)
    monkeypatch.setattr(flows, "POLL_INTERVAL", 0.0)


def test_a_read_after_the_request_that_differs_is_read_again_until_two_agree() -> None:
    a, b, c = [run("a")], [run("b"), run("a")], [run("c"), run("b"), run("a")]
    stayed = around(b, b, before=[a])
    assert stayed.after[0] is not None and stayed.after[0].json() == b and not stayed.unquiet
    back = around(b, a, before=[a])  # a moment's difference, gone again: no effect
    assert back.after[0] is not None and back.after[0].json() == a
    moving = around(b, c, b, c, b, c, before=[a])  # never the same twice: other traffic
    assert moving.after == [None] and "never read the same twice" in moving.unquiet[0]


def answer(status: str) -> httpx.Response:
    entry = read({"run_id": "r1", "status": status})
    return httpx.Response(200, json={"status": status}, extensions={trail.ENTRY: entry})


def settled(*statuses: str, was: str | None = None) -> tuple[str, list[Any], bool]:
    answers = iter(statuses)
    until = runs.UNTIL_RUN_ENDED
    last, seen, stayed = flows.settled(lambda: answer(next(answers)), until, "status", 10.0, was)
    return last.json()["status"], seen, stayed


def test_a_terminal_status_is_where_the_reads_end() -> None:
    """A queue-backed server's cancelled run: `success` read first, `interrupted` a moment later
    and from then on. Judged by where it ends, the statuses read in order in the evidence."""
    status, seen, stayed = settled("running", "success", "interrupted", "interrupted")
    assert (status, stayed) == ("interrupted", True)
    assert flows.in_order(seen) == "running, success, interrupted x2"
    assert settled("success", "success")[::2] == ("success", True)
    never = settled(*["success", "interrupted"] * (flows.AGREE_TRIES + 1))
    assert never[2] is False
    # read again after a second cancel: one read that agrees with where it settled is enough
    assert settled("interrupted", was="interrupted") == ("interrupted", ["interrupted"], True)
    assert settled("success", "interrupted", "interrupted", was="interrupted")[::2] == (
        "interrupted",
        True,
    )
