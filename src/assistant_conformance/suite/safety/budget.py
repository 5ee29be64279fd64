"""The run's budget of what it makes and cannot remove (a create the ledger knows no delete for:
a chat-kit session): at most LIMIT of each kind per run, its pytest-xdist workers together.

A create of such a kind takes a place before it is sent (the ledger's intent) and keeps it when
the answer may have made something (a 2xx, or no answer at all); a refusal gives it back. A
create meant to make one may take all places but SPARE: those are kept for the creates a
conformant target refuses (no credential, input that breaks the document), which give theirs
back as they are refused, so that checking refusals does not wait for a budget the valid ones
spent; a place held by a create still out is waited for (it may be given back). A check
whose create finds no place left is not judged (BudgetSpent), never passed. What
was made stays in this process's memory (`made`: the answer, its client secret among it), for
the checks that can run on one made already.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from assistant_conformance.suite.config.shared import SharedCounts

LIMIT = 3  # made and not removable, per kind, per run
SPARE = 1  # of those, kept for creates a conformant target refuses (each gives it back)
BUDGET_FILE = "budget.json"
# Seconds a create waits for places other creates hold while out (workers at once: refusals in
# flight would otherwise spend a valid create's place): theirs end within the request timeout.
PLACE_WAIT = 30.0


class BudgetSpent(pytest.skip.Exception):  # type: ignore[name-defined]
    """A create the run could not remove afterwards finds the run's budget spent: not sent, the
    check that needed it not judged."""


@dataclass(frozen=True)
class Made:
    """One thing made that stays: its answer (kept in memory only) and when it goes."""

    kind: str
    answer: dict[str, Any]
    expires: str | None  # ISO 8601, UTC; None: the target did not say
    response: Any = None  # the create's answer as its client gave it (a control of the create)

    def expires_by(self) -> float | None:
        """The latest it goes, in epoch seconds (`expires` is kept to the second, cut)."""
        return _instant(self.expires) + 1 if self.expires else None


@dataclass
class Allowance:
    counts: SharedCounts
    limit: int = LIMIT
    made: list[Made] = field(default_factory=list)  # by this process
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def reserve(self, kind: str, refusal: bool = False) -> None:
        """A place for one create of `kind`, before it is sent (`refusal`: one a conformant target
        refuses, which may take a spare place); BudgetSpent when none is left."""
        asked = f"{kind} (asked)"
        places = self.limit if refusal else self.limit - SPARE

        def take(counts: dict[str, int]) -> str:
            if counts.get(kind, 0) >= places:
                return "spent"
            if counts.get(kind, 0) + counts.get(asked, 0) >= places:
                return "taken"  # by creates still out: a refused one gives its place back
            counts[asked] = counts.get(asked, 0) + 1
            return "held"

        given_up = time.monotonic() + PLACE_WAIT
        while (place := self.counts.change(take)) == "taken" and time.monotonic() < given_up:
            time.sleep(0.05)
        if place != "held":
            raise BudgetSpent(f"not judged: {spent(kind, self.limit)}")

    def settle(self, kind: str, made: bool) -> None:
        """The create's answer came (`made`: it may have made one): its place kept or given back."""

        def settled(counts: dict[str, int]) -> None:
            counts[f"{kind} (asked)"] = max(0, counts.get(f"{kind} (asked)", 0) - 1)
            if made:
                counts[kind] = counts.get(kind, 0) + 1

        self.counts.change(settled)

    def keep(self, kind: str, answer: Any, expires: str | None, response: Any = None) -> None:
        if isinstance(answer, dict):
            with self._lock:
                self.made.append(Made(kind, answer, expires, response))

    def live(self, kind: str, lasting: float = 0.0) -> Made | None:
        """One `kind` this process made that lives `lasting` seconds more (the longest-lived);
        None when there is none."""
        now = datetime.now(UTC).timestamp()
        found = [m for m in self._dated(kind) if _instant(m.expires) - now >= lasting]
        return max(found, key=lambda m: _instant(m.expires), default=None)

    def soonest(self, kind: str) -> Made | None:
        """The `kind` this process made that expires first (None: none with a known expiry)."""
        return min(self._dated(kind), key=lambda m: _instant(m.expires), default=None)

    def _dated(self, kind: str) -> list[Made]:
        """What this process made of `kind` with a known expiry."""
        with self._lock:
            return [m for m in self.made if m.kind == kind and m.expires]

    def first(self, kind: str) -> Made | None:
        """The first `kind` this process made (its create accepted: a control of the create)."""
        with self._lock:
            return next((m for m in self.made if m.kind == kind), None)

    def count(self, kind: str) -> int:
        """How many of `kind` the run made (may have made) so far, all its processes."""
        return self.counts.get(kind)

    def already(self, kind: str) -> str:
        """What the run made of `kind` ("" if none), a probe or create of it still out waited for
        (it may make one)."""
        with self.probing(kind) as made:
            return made

    @contextmanager
    def probing(self, kind: str) -> Iterator[str]:
        """Around a probe that need not make another `kind`: what the run made of it, or "" when
        nothing, and then this process probes alone: the probe is claimed in one step with the
        look (workers probing at the same moment: two probes would spend the places the checks
        need), until the block ends. Another's probe or create still out is waited for."""
        probe, asked = f"{kind} (probe)", f"{kind} (asked)"

        def claim(counts: dict[str, int]) -> str:
            if counts.get(kind, 0):
                return "made"
            if counts.get(probe, 0) or counts.get(asked, 0):
                return "out"
            counts[probe] = 1
            return "claimed"

        given_up = time.monotonic() + PLACE_WAIT
        state = self.counts.change(claim) if kind else "none"
        while state == "out" and time.monotonic() < given_up:
            time.sleep(0.05)
            state = self.counts.change(claim)
        made = self.count(kind) if kind else 0
        try:
            yield f"not sent again: the run made {made} {kind}{'s' * (made > 1)}" if made else ""
        finally:
            if state == "claimed":
                self.counts.change(lambda counts: counts.pop(probe, None))


def spent(kind: str, limit: int = LIMIT) -> str:
    """`the run's budget of 3 chat-kit sessions is spent`."""
    return f"the run's budget of {limit} {kind}{'s' if limit != 1 else ''} is spent"


def _instant(iso: str | None) -> float:
    return datetime.fromisoformat(str(iso).replace("Z", "+00:00")).timestamp()
