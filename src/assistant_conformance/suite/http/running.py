"""The test that is running, in one scope: one context variable holds what the doors record of it
(its exchanges in order, its trail; what they observed) and the polling loop its requests are
part of. The judging room's record of a test (suite/judging/findings.py's TestRecord) is such a
scope, with its findings; a fixture's set-up and a replay follow their exchanges in a scope of
their own (`following`). Outside any, nothing is kept.

A thread started with its starter's context (the live stream reader, a replay's stream) records
into the same scope; a polling loop is its block's alone (a thread started before it is not
part of it).
"""

from __future__ import annotations

import contextvars
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from assistant_conformance.suite.http.observe import Observation
from assistant_conformance.suite.http.trail import Entry

Answered = TypeVar("Answered")


@dataclass(kw_only=True)
class Scope:
    """What the doors record of the running test: its exchanges in order, what they observed."""

    exchanges: list[Entry] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    places: list[Callable[[], None]] = field(default_factory=list)  # runs' places (load.py)


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
