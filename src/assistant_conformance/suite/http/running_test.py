"""The test that is running, in one scope: one context variable holds what the doors record of it
(its exchanges in order, its trail; what they observed) and the polling loop its requests are
part of. The judging room's record of a test (suite/judging/findings.py's TestRecord) is such a
scope, with its findings; a fixture's set-up and a replay follow their exchanges in a scope of
their own (`following`). Outside any, nothing is kept.

A thread started with its starter's context (the live stream reader, a replay's stream) records
into the same scope; a polling loop is its block's alone (not a thread started before it).
"""

from __future__ import annotations

import contextvars
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TypeVar

from assistant_conformance.suite.http import observe
from assistant_conformance.suite.http.observe import (
    MISSED,
    AnswerFault,
    Observation,
)
from assistant_conformance.suite.http.trail import Agreement, Entry, Poll, Words

Answered = TypeVar("Answered")


@dataclass(kw_only=True)
class Scope:
    """What the doors record of the running test: its exchanges in order, what they observed."""

    exchanges: list[Entry] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)

    def checked(self) -> frozenset[str]:
        """The requirements the running test checks (none for a set-up or a replay)."""
        return frozenset()


# The running test's scope, and the polling loop (its words) its requests are part of.
_running: ContextVar[tuple[Scope | None, Poll | None]] = ContextVar(
    "conformance_running", default=(None, None)
)


def current_scope() -> Scope | None:
    """The running test's scope (None outside a test, a set-up or a replay)."""
    return _running.get()[0]


def checked_requirements() -> frozenset[str]:
    """The requirements the running test checks (none outside a test)."""
    scope = current_scope()
    return scope.checked() if scope is not None else frozenset()


@contextmanager
def within(scope: Scope) -> Iterator[Scope]:
    """The requests of this block (and of threads started with its context) record into `scope`."""
    token = _running.set((scope, None))
    try:
        yield scope
    finally:
        _running.reset(token)


def following(into: list[Entry]) -> AbstractContextManager[Scope]:
    """The exchanges of this block go `into` (a fixture's set-up, a replay): a scope of its own."""
    return within(Scope(exchanges=into))


@contextmanager
def polling(until: Words, within: float, agree: Agreement | None = None) -> Iterator[None]:
    """The requests of this block are one polling loop: read again until the check `until` holds
    on the answer or `within` seconds pass; then, with `agree`, again until two answers agree at
    its key (a replay polls the same way)."""
    scope, _ = _running.get()
    loop = Poll(until, within, uuid.uuid4().hex[:8], agree)
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


def plain_in_test(headers: Mapping[str, str | bytes]) -> bool:
    """Whether the request being sent is one a finding of its operation's status rests on
    (observe.plain_request), sent by a test that checks requirements (not a fixture's set-up:
    nothing judges what misses there)."""
    return observe.plain_request(headers) and bool(checked_requirements())


def missed(fault: AnswerFault) -> None:
    """A plain request missed its deadline (observe.Deadlines.done): the running test judges it
    at its end unless a finding already rests on it (suite/judging/answer_charges.py)."""
    seen(Observation(MISSED, fault.what, fault.evidence, fault=fault))


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
