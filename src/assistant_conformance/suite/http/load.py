"""The suite's own load on one target: how many runs it keeps in flight at once, counted by every
process of the run (config/shared.py), and bounded.

A server's run queue is part of what it offers, not an endless resource: runs the suite starts
from every worker at once queue behind each other there, and a `runs/wait` sent behind them
answers when they have run. So a request that makes a run (create, stream, wait) takes a place
first: while RUNS_AT_ONCE are out, it waits until one is given back, for at most PLACE_WAIT
seconds (then it goes, counted above the bound); a test that holds a place already takes more
without waiting (it would wait for itself). A place is given back when the run's answer is whole
(a wait, a stream read to its end) or, for a run started in the background, when the test that
started it ends. The most seen in flight at once is kept for the report's header.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from assistant_conformance.suite.config.shared import SharedCounts
from assistant_conformance.suite.http import running
from assistant_conformance.suite.http.observe import SILENT, SLOW, AnswerFault

RUNS_AT_ONCE = 2  # runs of the suite in flight on one target at once, across its processes
PLACE_WAIT = 60.0  # seconds a request waits for a place at most
LOAD_FILE = "runs.json"
RUNS, MOST = "in flight", "most"
# The operations that make a run, and the one that waits for its end.
RUN_WAIT = "POST /api/ai/threads/{thread_id}/runs/wait"
RUN_MAKERS = frozenset(f"POST /api/ai/threads/{{thread_id}}/runs{tail}" for tail in ("", "/stream"))
RUN_MAKERS |= {RUN_WAIT}


@dataclass
class RunLoad:
    """The runs the suite has in flight on its target, shared by the run's processes."""

    counts: SharedCounts
    at_once: int = RUNS_AT_ONCE
    wait: float = 0.05  # seconds between two looks at the places

    def take(self, holding: bool) -> int:
        """A place for a run about to be made (`holding`: the asking test holds one already);
        answer how many of the suite's runs are in flight with it."""

        def place(counts: dict[str, int]) -> int | None:
            if counts.get(RUNS, 0) >= self.at_once and not holding and time.monotonic() < until:
                return None
            counts[RUNS] = counts.get(RUNS, 0) + 1
            counts[MOST] = max(counts.get(MOST, 0), counts[RUNS])
            return counts[RUNS]

        until = time.monotonic() + PLACE_WAIT
        while (taken := self.counts.change(place)) is None:
            time.sleep(self.wait)
        return taken

    def give(self) -> None:
        """A run's place back."""

        def back(counts: dict[str, int]) -> None:
            counts[RUNS] = max(0, counts.get(RUNS, 0) - 1)

        self.counts.change(back)

    def in_flight(self) -> int:
        return self.counts.get(RUNS)

    def most(self) -> int:
        """The most runs the suite had in flight at once in this run."""
        return self.counts.get(MOST)

    def summary(self) -> dict[str, int]:
        """For the report: the bound and the most seen."""
        return {"runs_at_once": self.at_once, "most_runs_in_flight": self.most()}


def makes_run(label: str) -> bool:
    """Whether a request of operation `label` (METHOD /path template) makes a run."""
    return label in RUN_MAKERS


@dataclass
class Place:
    """A request's place among the suite's runs in flight (none for one that makes no run)."""

    runs: RunLoad | None
    with_it: int = 0  # the suite's runs in flight when it was taken, this one included

    def delayed(self, fault: AnswerFault, waits_for_run: bool) -> None:
        """A wait for a run's end that ran out of time while other runs of the suite were in
        flight: the suite's own load may explain it (the fault says so; it is not judged)."""
        if not waits_for_run or fault.kind not in (SLOW, SILENT) or self.runs is None:
            return
        others = max(self.with_it, self.runs.in_flight()) - 1
        if others > 0:
            fault.loaded = (
                f"{others} other run(s) of the suite were in flight on the target (at most "
                f"{self.runs.at_once} at once): its answer waited behind the suite's own load"
            )


@contextmanager
def run_place(runs: RunLoad | None, operation: str) -> Iterator[Place]:
    """A place for the run the request of `operation` makes, if it makes one (see the module)."""
    if runs is None or not makes_run(operation):
        yield Place(None)
        return
    place = Place(runs, runs.take(running.holds_place()))
    kept = operation != RUN_WAIT and running.hold_place(runs.give)  # a run left running
    try:
        yield place
    finally:
        if not kept:
            runs.give()
