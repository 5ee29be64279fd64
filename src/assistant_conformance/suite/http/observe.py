"""What the doors saw, handed to the module that judges it (suite/judging/answer_charges.py).

The doors (the transport policy, the bounded door, the guard, the event-stream reader) bound,
count and record; they judge nothing and name no requirement. What they see that may be a
finding reaches the judge in one of two ways:
- raised: an AnswerFault, when no answer was received within the run's bounds (too slow, too
  large, incomplete): the request cannot go on;
- recorded: an Observation of the test that is running (running_test.py: `seen`), when the answer
  came and tells something every answer of its kind must keep, whichever test got it: a JSON body
  that is not strict JSON, a 2xx JSON body declared as something else, a 401 with or without a
  Bearer challenge, a deadline a plain request missed (MISSED: judged at the test's end where
  nothing judged it yet). Outside a test (a fixture's set-up, the clean-up) nothing collects them.

`Deadlines` gives each operation its deadline and counts the deadlines it missed in the run: one
late twice is not asked again (Overdue), so that a target that hangs or drips costs two deadlines
per operation; one of the two at least is a plain request's (one that follows the document, in a
test, whose fault is judged on the operation's status), whichever process sent what first: the
probes and side requests of other workers cannot leave a status requirement not judged. A
deadline follows what the run measured of the target, within a stated bound, and says where it
comes from (a `Deadline`, named in a fault):
- an operation's deadline is --request-timeout, or twice the longest whole answer it gave in this
  run (under the run's own load) where that is longer, at most GROWN_AT_MOST times
  --request-timeout;
- a request that waits for a run's end (runs/wait) is given --process-timeout, the bound of waiting
  for a run, where that is longer, plus the longest run of the suite measured so far for each run of
  the suite ahead of it (its answer waits for them: runs_in_flight.py bounds how many), at most
  --process-timeout each: at most RUNS_AT_ONCE times --process-timeout in all. One that misses even
  that while other runs of the suite were in flight is not judged (the AnswerFault's `loaded` says
  so), and not counted as missed.

A check that cannot be judged (a bound spent, the target throttling, the run's budget, --read-only,
a stopped run, a failed precondition) raises NotJudged: the test's verdict is skip, with its
reason. It is the suite's own word, no test runner's (the plugin makes it pytest's skip); the
standard library's SkipTest beneath it, so that Hypothesis passes it on as a skip, not a failure.

`breaking_input` marks the requests of a block as sent to break the document on purpose, so that
a fault of their answers is judged as the answer to such input; `refusal_expected` (which it
implies) tells the run's budget of what cannot be removed that a conformant target makes nothing
of them (suite/safety/budget.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any
from unittest import SkipTest

from assistant_conformance.report import redact
from assistant_conformance.suite.config.run_folder import SharedCounts
from assistant_conformance.suite.http.trail import Entry

LATE_TIMES = 2  # deadlines one operation may cost a run
GROWTH = 2.0  # an operation's deadline: at least twice the longest whole answer it gave
GROWN_AT_MOST = 2.0  # ... and at most this many times --request-timeout
# Kinds of fault (no answer within the bounds) and of observation.
SLOW, LARGE, CUT, SILENT = "slow", "large", "cut", "silent"
NOT_STRICT_JSON = "not strict JSON"
JSON_UNDECLARED = "JSON not declared"  # a 2xx JSON object or array under another Content-Type
CHALLENGED, NOT_CHALLENGED = "401 with a challenge", "401 without a challenge"
MISSED = "missed its deadline"  # a plain request's: judged in its test, whatever caught it


class Deadline(float):
    """Seconds for a whole answer, with where they come from (`source`, said in a fault)."""

    source: str

    def __new__(cls, seconds: float, source: str = "--request-timeout") -> Deadline:
        made = super().__new__(cls, seconds)
        made.source = source
        return made


def said(deadline: float) -> str:
    """`deadline` in a fault's words: its seconds and where they come from."""
    return f"{deadline:g} s ({getattr(deadline, 'source', '--request-timeout')})"


@dataclass(frozen=True)
class Observation:
    kind: str
    what: str  # one readable line, naming the operation
    evidence: Entry | None
    key: str = ""  # tells two observations of the same kind apart (e.g. the problem)
    entry: Any = None  # the exchange it was seen in (suite/http/trail.py), for its replay
    fault: AnswerFault | None = None  # MISSED: the fault, charged once (`charged`)


class AnswerFault(Exception):
    """The target's answer broke a bound of the door; `what` is one readable line."""

    def __init__(self, kind: str, what: str, evidence: Entry) -> None:
        super().__init__(what)
        self.kind = kind
        self.what = what
        self.evidence = evidence
        self.breaking: str | None = None  # the requirement named by breaking_input, if any
        self.loaded = ""  # why the suite's own load may explain it (a run wait behind its runs)
        self.charged = False  # a finding of the running test already rests on it

    @property
    def no_answer_yet(self) -> bool:
        """Nothing at all came back (a drip or a cut answer at least sent its status)."""
        return self.kind == SILENT or self.evidence.status is None


@contextmanager
def breaking_input(requirement: str) -> Iterator[None]:
    """Input that breaks the document is being sent: a fault of its answer is judged as the
    answer to such input (charged to `requirement`), not to one that follows the document."""
    try:
        with refusal_expected():
            yield
    except AnswerFault as fault:
        fault.breaking = fault.breaking or requirement
        raise


_refusal: ContextVar[bool] = ContextVar("conformance_refusal_expected", default=False)


@contextmanager
def refusal_expected() -> Iterator[None]:
    """The requests of this block are ones a conformant target refuses (input that breaks the
    document): what they would create, it does not."""
    token = _refusal.set(True)
    try:
        yield
    finally:
        _refusal.reset(token)


def refusing() -> bool:
    """Whether the request being sent is one a conformant target refuses (`refusal_expected`)."""
    return _refusal.get()


class NotJudged(SkipTest):
    """A check not judged: the test's verdict is skip, its reason `msg` (as pytest's skip)."""

    def __init__(self, msg: str) -> None:
        super().__init__(msg)
        self.msg = msg


class Overdue(NotJudged):
    """The operation ran past its deadline LATE_TIMES times in this run: it is not asked again,
    the check that needed it is not judged. `side`: only requests that are not plain are no
    longer asked (a plain one still may be)."""

    side = False


@dataclass
class Deadlines:
    """The deadlines each operation (METHOD /path template) missed in this run, counted by all
    its processes. An operation that missed one is asked by one request at a time (what was missed
    and what is out are one count under the file's lock), so that no two requests together make
    it miss a third; one never late is asked freely (two processes meeting it at the same moment
    may both find it late)."""

    counts: SharedCounts
    wait: float = 0.05  # seconds between two looks at a place taken
    run_wait: float = 0.0  # seconds a request that waits for a run's end is given (a bound)
    run_waits: frozenset[str] = frozenset()  # the operations that wait for a run's end

    def deadline_of(
        self, operation: str, base: float, ahead: int = 0, longest_run: float = 0.0
    ) -> Deadline:
        """`operation`'s deadline now (see the module): `base` the run's --request-timeout;
        `ahead` the suite's runs in flight before it, `longest_run` the longest measured."""
        if operation in self.run_waits and self.run_wait > base:
            if not ahead or not longest_run:
                return Deadline(self.run_wait, "--process-timeout: a wait ends with its run")
            each = min(longest_run, self.run_wait)
            return Deadline(
                self.run_wait + ahead * each,
                f"--process-timeout {self.run_wait:g} s + {ahead} run(s) of the suite ahead of it "
                f"x the longest run of the suite measured, {each:g} s",
            )
        longest = self.counts.get(_took(operation)) / 1000
        if GROWTH * longest <= base:
            return Deadline(base)
        grown = min(GROWN_AT_MOST * base, GROWTH * longest)
        return Deadline(
            grown,
            f"twice the longest answer of this operation in this run, {longest:g} s, at most "
            f"{GROWN_AT_MOST:g} x --request-timeout",
        )

    def took(self, operation: str, seconds: float, base: float) -> None:
        """A whole answer of `operation` came in `seconds`: kept where it is the longest yet and
        grows the deadline (a write only then: most answers are far quicker)."""
        key, taken = _took(operation), round(seconds * 1000)
        if GROWTH * seconds <= base or taken <= self.counts.get(key):
            return

        def longest(counts: dict[str, int]) -> None:
            counts[key] = max(counts.get(key, 0), taken)

        self.counts.change(longest)

    def ask(self, operation: str, deadline: float, plain: bool = True) -> bool:
        """Before `operation` is sent: Overdue when it missed LATE_TIMES deadlines already and
        one of them was a `plain` request's (whose fault a test judged), or when the request is
        not `plain` and such a request missed one: the requests that break the document, lack
        the run's credential or probe outside a test (judged by no status, or by none) cannot
        spend the deadline a request that follows the document is judged by, whoever sent them
        first; True when this request holds a place (give it back with `done`)."""
        if self.counts.get(operation) == 0:
            return False
        out = f"{operation} (asked)"

        def take(counts: dict[str, int]) -> str:
            missed, side = counts.get(operation, 0), counts.get(_side(operation), 0)
            # further misses the run allows: LATE_TIMES in all, one at least a plain request's
            allowed = max(LATE_TIMES - missed, 1 if missed == side else 0)
            if allowed <= 0:
                return "late"
            if not plain and side:
                return "side"
            if counts.get(out, 0) >= allowed:
                return "taken" if plain else "side"  # another request may yet make it miss
            counts[out] = counts.get(out, 0) + 1
            return "held"

        given_up = time.monotonic() + 2 * deadline + 1  # the request out has had its deadline
        while (place := self.counts.change(take)) == "taken" and time.monotonic() < given_up:
            time.sleep(self.wait)
        if place == "held":
            return True
        times = "twice" if LATE_TIMES == 2 else f"{LATE_TIMES} times"  # (at least: one reason)
        if place == "side":
            times = "already (its last deadline is kept for a request that follows the document)"
        unasked = Overdue(f"not judged: {operation} did not answer within {said(deadline)} {times}")
        unasked.side = place == "side"
        raise unasked

    def done(
        self,
        operation: str,
        held: bool,
        fault: AnswerFault | None = None,
        plain: bool = True,
    ) -> bool:
        """The request's answer came whole (`fault` None) or broke a bound: a deadline missed
        is counted (also apart when the request was not `plain`); a place held is given back.
        True when a plain request missed: its fault is a finding of the running test (MISSED),
        whatever catches it, since the operation's next requests may not be asked."""
        missed = fault is not None and fault.kind in (SLOW, SILENT) and not fault.loaded
        if not held and not missed:
            return False
        out = f"{operation} (asked)"

        def settle(counts: dict[str, int]) -> None:
            if held:
                counts[out] = max(0, counts.get(out, 0) - 1)
            if missed:
                counts[operation] = counts.get(operation, 0) + 1
                if not plain:
                    counts[_side(operation)] = counts.get(_side(operation), 0) + 1

        self.counts.change(settle)
        return missed and plain


def _side(operation: str) -> str:
    return f"{operation} (not plain)"


def _took(operation: str) -> str:
    return f"{operation} (longest ms)"


_unjudged: ContextVar[bool] = ContextVar("conformance_unjudged", default=False)


@contextmanager
def unjudged() -> Iterator[None]:
    """The requests of this block are judged by nothing (a probe outside any test)."""
    token = _unjudged.set(True)
    try:
        yield
    finally:
        _unjudged.reset(token)


def plain_request(headers: Mapping[str, str | bytes]) -> bool:
    """Whether the request being sent may be one a finding of its operation's status rests on:
    the run's credential, input that follows the document, no probe outside a test (`unjudged`).
    Whether a test sent it is the running scope's to say: running.plain_in_test."""
    return run_credential(headers) and not refusing() and not _unjudged.get()


def run_credential(headers: Mapping[str, str | bytes]) -> bool:
    """Whether request headers carry a bearer credential the run holds (registered as a secret)."""
    sent = {k.lower(): v for k, v in headers.items()}
    value = sent.get("authorization", "")
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    scheme, _, credential = text.partition(" ")
    return scheme.lower() == "bearer" and redact.is_secret(credential.strip())
