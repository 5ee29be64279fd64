"""The run's budget of what it makes and cannot remove (a create the ledger knows no delete for:
a chat-kit session): at most LIMIT of each kind per run, its pytest-xdist workers together.

A create of such a kind takes a place before it is sent (the ledger's intent) and keeps it when
the answer may have made something (a 2xx, or no answer at all); a refusal gives it back. A
create meant to make one may take all places but SPARE: those are kept for the creates a
conformant target refuses (no credential, input that breaks the document), which give theirs
back as they are refused, so that checking refusals does not wait for a budget the valid ones
spent; a place held by a create still out is waited for (it may be given back).

Scarce places go first to the requirements they exist for: a place is kept, across the run's
processes, for each MUST whose check needs one made (kept_for), until a valid create of a test
that checks it takes it; a probe's, a SHOULD's, a generated or a robustness case's create may
not have it, whichever worker sends it first. Refusals of one kind go one at a time, and none
after the target made something of one. A check whose create finds no place left is not judged
(BudgetSpent), never passed. What was made stays in this process's memory (`made`: the answer,
its client secret among it), for the checks that can run on one made already.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from typing import Any

from assistant_conformance.contract.catalogue import load
from assistant_conformance.suite.config.run_folder import SharedCounts
from assistant_conformance.suite.http import running_test
from assistant_conformance.suite.http.observe import NotJudged
from assistant_conformance.suite.safety.removal import kind_of

LIMIT = 3  # made and not removable, per kind, per run
SPARE = 1  # of those, kept for creates a conformant target refuses (each gives it back)
BUDGET_FILE = "budget.json"
# Seconds a create waits for places other creates hold while out (workers at once: refusals in
# flight would otherwise spend a valid create's place): theirs end within the request timeout.
PLACE_WAIT = 30.0


class BudgetSpent(NotJudged):
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


@dataclass(frozen=True)
class Place:
    """A place one create holds in the budget: of what kind, and the refusal it is ("": a valid
    create; `credential`: sent without a valid one; `input`: input that breaks the document)."""

    kind: str
    refusal: str = ""


@dataclass
class Allowance:
    counts: SharedCounts
    limit: int = LIMIT
    made: list[Made] = field(default_factory=list)  # by this process
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def reserve(self, kind: str, refusal: str = "") -> Place:
        """A place for one create of `kind`, before it is sent (`refusal`: one a conformant target
        refuses, which may take a spare place, see Place); BudgetSpent when none is left.

        A place is kept for each MUST whose check needs one made (kept_for), until a valid create
        of a test checking it takes it: no other create may have it, whichever worker sends it
        first; but a request without a valid credential may (AUTH's MUSTs: a conformant target
        gives it back). Refusals of one kind go one at a time, and none after one made something:
        the target has shown it (the finding is that one's), and another spends a place for
        nothing."""
        asked = out_key(Place(kind, refusal))
        checking = () if refusal else tuple(kept_for(kind) & running_test.checked_requirements())

        def take(counts: dict[str, int]) -> str:
            waiting = [r for r in sorted(kept_for(kind)) if not counts.get(served(kind, r))]
            mine = [r for r in waiting if r in checking][:1]
            places = self.limit if refusal or mine else self.limit - SPARE
            if refusal != "credential":  # that refusal is a MUST's check: it may take any place
                places -= len(waiting) - len(mine)  # kept for the MUSTs it does not check
            if counts.get(kind, 0) >= places or (refusal and counts.get(made_by(kind, refusal))):
                return "spent"
            if counts.get(kind, 0) + out(counts, kind) >= places or (refusal and counts.get(asked)):
                return "taken"  # by creates still out: a refused one gives its place back
            counts[asked] = counts.get(asked, 0) + 1
            counts.update({served(kind, r): 1 for r in mine})
            return "held"

        given_up = time.monotonic() + PLACE_WAIT
        while (state := self.counts.change(take)) == "taken" and time.monotonic() < given_up:
            time.sleep(0.05)
        if state == "held":
            return Place(kind, refusal)
        if refusal and self.counts.get(made_by(kind, refusal)):
            made = f"the target made a {kind} of a request it should have refused ({refusal})"
            raise BudgetSpent(f"not judged: {made} already: another is not risked")
        kept = sorted(self.waiting(kind) - set(checking)) if refusal != "credential" else []
        why = f" but the places kept for {', '.join(kept)} (MUST)" if kept else ""
        raise BudgetSpent(f"not judged: {spent(kind, self.limit)}{why}")

    def settle(self, place: Place, made: bool) -> None:
        """The create's answer came (`made`: it may have made one): its place kept or given back."""
        kind, asked = place.kind, out_key(place)

        def settled(counts: dict[str, int]) -> None:
            counts[asked] = max(0, counts.get(asked, 0) - 1)
            if made:
                counts[kind] = counts.get(kind, 0) + 1
            if made and place.refusal:
                counts[made_by(kind, place.refusal)] = 1

        self.counts.change(settled)

    def waiting(self, kind: str) -> frozenset[str]:
        """The MUSTs whose place is still kept: no create of a test checking them took it yet."""
        return frozenset(r for r in kept_for(kind) if not self.counts.get(served(kind, r)))

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
        probe = f"{kind} (probe)"

        def claim(counts: dict[str, int]) -> str:
            if counts.get(kind, 0):
                return "made"
            if counts.get(probe, 0) or out(counts, kind):
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


@cache
def kept_for(kind: str) -> frozenset[str]:
    """The MUST requirements that name a create of `kind` (a chat-kit session: CHATKIT-STATUS):
    their checks need one made, so the run keeps a place for each."""
    catalogue = load()
    return frozenset(
        req.id
        for req in catalogue.requirements.values()
        if req.level == "MUST"
        and any(
            method in ("POST", "PUT") and kind_of(path) == kind
            for method, _, path in (
                op.partition(" ") for op in catalogue.operations.get(req.id, ())
            )
        )
    )


def out_key(place: Place) -> str:
    """The shared count of creates of a place's kind (and refusal) sent and not yet answered."""
    return f"{place.kind} (asked{f', {place.refusal} refusal' if place.refusal else ''})"


def out(counts: dict[str, int], kind: str) -> int:
    """Creates of `kind` sent and not yet answered, valid and refusals."""
    return sum(n for name, n in counts.items() if name.startswith(f"{kind} (asked"))


def made_by(kind: str, refusal: str) -> str:
    """The shared count that says a create the target should have refused made a `kind`."""
    return f"{kind} (made by a {refusal} refusal)"


def served(kind: str, req_id: str) -> str:
    """The shared count that says a create checking `req_id` took the place kept for it."""
    return f"{kind} (for {req_id})"


def spent(kind: str, limit: int = LIMIT) -> str:
    """`the run's budget of 3 chat-kit sessions is spent`."""
    return f"the run's budget of {limit} {kind}{'s' if limit != 1 else ''} is spent"


def _instant(iso: str | None) -> float:
    return datetime.fromisoformat(str(iso).replace("Z", "+00:00")).timestamp()
