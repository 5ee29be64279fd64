"""The test that is running, in one scope: one context variable holds what the doors record of it
(its exchanges in order, its trail; what they observed) and the polling loop its requests are
part of. The judging room's record of a test (suite/judging/findings.py's TestRecord) is such a
scope, with its findings; a fixture's set-up and a replay follow their exchanges in a scope of
their own (`following`). Outside any, nothing is kept.

A thread started with its starter's context (the live stream reader, a replay's stream) records
into the same scope; a polling loop is its block's alone (a thread started before it is not
part of it).

RunLoad: the suite's own load on one target: how many runs it keeps in flight at once, counted
by every process of the run (config/shared.py), and bounded.

A server's run queue is part of what it offers, not an endless resource: runs the suite starts
from every worker at once queue behind each other there, and a `runs/wait` sent behind them
answers when they have run. So a request that makes a run (create, stream, wait) takes a place
first: while RUNS_AT_ONCE are out, it waits until one is given back, for at most RUN_PLACE_WAIT
seconds (then it goes, counted above the bound); a test that holds a place already takes more
without waiting (it would wait for itself). A place is given back when the run's answer is whole
(a wait, a stream read to its end) or, for a run started in the background, when the test that
started it ends. The most seen in flight at once is kept for the report's header.
"""

from __future__ import annotations

import contextvars
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from assistant_conformance.suite.config.shared import SharedCounts
from assistant_conformance.suite.http.observe import SILENT, SLOW, AnswerFault, Observation
from assistant_conformance.suite.http.trail import Entry

Answered = TypeVar("Answered")


@dataclass(kw_only=True)
class Scope:
    """What the doors record of the running test: its exchanges in order, what they observed."""

    exchanges: list[Entry] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    places: list[Callable[[], None]] = field(default_factory=list)  # runs' places (RunLoad)


# The running test's scope, and the polling loop (its words) its requests are part of.
_running: ContextVar[tuple[Scope | None, dict[str, Any] | None]] = ContextVar(
    "conformance_running", default=(None, None)
)


def current_scope() -> Scope | None:
    """The running test's scope (None outside a test, a set-up or a replay)."""
    return _running.get()[0]


@contextmanager
def within(scope: Scope) -> Iterator[Scope]:
    """The requests of this block (and of threads started with its context) record into `scope`."""
    token = _running.set((scope, None))
    try:
        yield scope
    finally:
        _running.reset(token)
        while scope.places:  # the runs it started in the background: their places back
            scope.places.pop()()


def hold_place(give: Callable[[], None]) -> bool:
    """Keep a run's place until the running test ends (`give` gives it back); False outside one."""
    scope = current_scope()
    if scope is None:
        return False
    scope.places.append(give)
    return True


def holds_place() -> bool:
    """Whether the running test holds a place for a run of its own already."""
    scope = current_scope()
    return scope is not None and bool(scope.places)


def following(into: list[Entry]) -> AbstractContextManager[Scope]:
    """The exchanges of this block go `into` (a fixture's set-up, a replay): a scope of its own."""
    return within(Scope(exchanges=into))


@contextmanager
def polling(until: dict[str, Any], within: float) -> Iterator[None]:
    """The requests of this block are one polling loop: read again until the check `until` holds
    on the answer or `within` seconds pass (a replay polls the same way)."""
    scope, _ = _running.get()
    loop = {"until": until, "within": within, "loop": uuid.uuid4().hex[:8]}
    token = _running.set((scope, loop))
    try:
        yield
    finally:
        _running.reset(token)


def enter(entry: Entry) -> Entry:
    """Append a request to the running test's trail, with the streams still open as it goes out
    (a replay waits for as many of their events) and its polling loop."""
    scope, loop = _running.get()
    if scope is not None:
        entry.during = [(e, e.events) for e in scope.exchanges if e.open]
        entry.poll = loop
        scope.exchanges.append(entry)
    return entry


def seen(observation: Observation) -> None:
    """Hand an observation to the running test (dropped outside one)."""
    scope = current_scope()
    if scope is not None:
        scope.observations.append(observation)


AT_ONCE = 8  # requests in flight at once, at most


def at_once(calls: Sequence[Callable[[], Answered]]) -> list[Answered]:
    """Run independent requests side by side (across a network each waits on its answer, not on
    the others; at most AT_ONCE in flight), each in a copy of this context: they record into the
    running test's scope in the order they go out. Their results in the order of `calls`; the
    first error raises."""
    if len(calls) < 2:
        return [call() for call in calls]
    context = contextvars.copy_context()
    with ThreadPoolExecutor(max_workers=min(len(calls), AT_ONCE)) as pool:
        return list(pool.map(lambda call: context.copy().run(call), calls))


# --- the suite's runs in flight ------------------------------------------------------------

RUNS_AT_ONCE = 2  # runs of the suite in flight on one target at once, across its processes
RUN_PLACE_WAIT = 60.0  # seconds a request waits for a place at most
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

        until = time.monotonic() + RUN_PLACE_WAIT
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

    def delayed(self, fault: AnswerFault, waits_for_run: bool) -> AnswerFault:
        """A wait for a run's end that ran out of time while other runs of the suite were in
        flight: the suite's own load may explain it (the fault says so; it is not judged)."""
        if not waits_for_run or fault.kind not in (SLOW, SILENT) or self.runs is None:
            return fault
        others = max(self.with_it, self.runs.in_flight()) - 1
        if others > 0:
            fault.loaded = (
                f"{others} other run(s) of the suite were in flight on the target (at most "
                f"{self.runs.at_once} at once): its answer waited behind the suite's own load"
            )
        return fault


@contextmanager
def run_place(runs: RunLoad | None, operation: str) -> Iterator[Place]:
    """A place for the run the request of `operation` makes, if it makes one (see the module)."""
    if runs is None or not makes_run(operation):
        yield Place(None)
        return
    place = Place(runs, runs.take(holds_place()))
    kept = operation != RUN_WAIT and hold_place(runs.give)  # a run left running
    try:
        yield place
    finally:
        if not kept:
            runs.give()
