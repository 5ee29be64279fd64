"""Removing what a run created, and saying what could not be removed.

What stays on the target is a Leftover: its kind, why it stays, and until when when the target
said so. Some cannot be removed at all (the interface has no delete for a chat-kit session; a
create answered without an id, or not at all, made something the run cannot name); some could
and were not (a delete refused or unanswered: `removable`, which a sweep's exit status reports).
"""

from __future__ import annotations

import contextvars
import json
import math
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any, TypedDict, cast

import httpx

from assistant_conformance.contract.resources import resource_at
from assistant_conformance.report import redact
from assistant_conformance.report.conformance_json import CleanupRecord, LeftGroup
from assistant_conformance.suite.http.observe import AnswerFault, Overdue

__all__ = [
    "Leftover",
    "Removal",
    "Removals",
    "base_path",
    "cleanup_summary",
    "expiry_of",
    "grouped",
    "kind_of",
    "remove_entries",
]

MAIN, ANONYMOUS = "main", "anonymous"
GONE = (404, 410)
REMOVERS = 8  # removals in flight at once
NO_DELETE = "the interface has no delete"
NO_ANSWER = "its create got no answer: what it made is unknown"
UNANSWERED = "its create got no answer"
NO_ID = "its create answered no id: it cannot be named"


def kind_of(path: str) -> str:
    """The kind of resource a create or delete path is about (contract/resources.py's name; its
    path, when no row's pattern matches)."""
    found = resource_at(path)
    return found.name if found is not None else path


@dataclass(frozen=True)
class Leftover:
    kind: str
    reason: str
    what: str  # the request that created it, or the delete that failed
    removable: bool = False  # a delete exists and failed: a sweep may try again
    expires: str | None = None  # when the target says it goes by itself (ISO 8601, UTC)
    unfound: bool = False  # may have been made, has a delete, and could not be looked for

    def as_dict(self) -> LeftoverJson:
        return cast(LeftoverJson, asdict(self))  # the same fields


class LeftoverJson(TypedDict):
    """A Leftover as the ledger and the clean-up's record keep it (JSON)."""

    kind: str
    reason: str
    what: str
    removable: bool
    expires: str | None
    unfound: bool


class CleanupJson(TypedDict):
    """What one process's end of run did (session.py), as it reaches the controller."""

    run: str
    ledger: str
    removed: int
    kept: int
    left: list[LeftoverJson]


def expiry_of(body: Any, answered: datetime) -> str | None:
    """When an answer says what it created goes away: `expires_at` (epoch seconds or
    milliseconds, or ISO 8601), else `expires_after` seconds from the answer; None if neither."""
    if not isinstance(body, dict):
        return None
    at, after = body.get("expires_at"), body.get("expires_after")
    moment: datetime | None = None
    if isinstance(at, int | float) and not isinstance(at, bool) and math.isfinite(at):
        moment = datetime.fromtimestamp(at / 1000 if at > 1e11 else at, UTC)
    elif isinstance(at, str):
        try:
            moment = datetime.fromisoformat(at.replace("Z", "+00:00")).astimezone(UTC)
        except ValueError:
            moment = None
    elif isinstance(after, int | float) and not isinstance(after, bool) and math.isfinite(after):
        moment = datetime.fromtimestamp(answered.timestamp() + after, UTC)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z") if moment else None


def grouped(leftovers: Iterable[Leftover]) -> list[LeftGroup]:
    """Leftovers by kind and reason: how many, whether removable, the latest expiry known."""
    groups: dict[tuple[str, str, bool], list[Leftover]] = {}
    for item in leftovers:
        groups.setdefault((item.kind, item.reason, item.removable), []).append(item)
    return [
        LeftGroup(
            kind=kind,
            count=len(items),
            reason=reason,
            removable=removable,
            expires_by=max((i.expires for i in items if i.expires), default=None),
            examples=sorted({i.what for i in items})[:3],
        )
        for (kind, reason, removable), items in sorted(groups.items())
    ]


def cleanup_summary(records: list[CleanupJson]) -> CleanupRecord:
    """The report's `cleanup`, from what each process's end of run recorded (session.py)."""
    return CleanupRecord(
        runs=[r["run"] for r in records],
        ledgers=[r["ledger"] for r in records],
        removed=sum(r["removed"] for r in records),
        kept=sum(r["kept"] for r in records),
        left=grouped(Leftover(**item) for r in records for item in r["left"]),
    )


# --- removing -------------------------------------------------------------------------------------


@dataclass
class Removal:
    """A created resource, by the request that removes it (and its JSON body, if any)."""

    seq: int
    principal: str
    method: str
    path: str
    json: Any = None

    def key(self) -> tuple[str, str, str, str]:
        return (self.principal, self.method, self.path, json.dumps(self.json, sort_keys=True))

    def describe(self) -> str:
        return f"{self.method} {self.path}" + (f" {json.dumps(self.json)}" if self.json else "")


class Removals(list[Removal]):
    """The removals a run tracks, in order, each once: its key found in a set (the property
    layer tracks hundreds; a scan of the list per new one cost seconds)."""

    def __init__(self) -> None:
        super().__init__()
        self.keys: set[tuple[str, str, str, str]] = set()

    def add(self, entry: Removal) -> bool:
        """Append `entry` unless one with its key is there; answer whether it was added."""
        key = entry.key()
        if key in self.keys:
            return False
        self.keys.add(key)
        self.append(entry)
        return True


@cache
def base_path(target: str) -> str:
    """The path a target's URL puts before each operation's (parsed once: asked per request)."""
    return httpx.URL(target).path.rstrip("/")


def remove_entries(
    entries: list[Removal], clients: Mapping[str, httpx.Client], write: Callable[[dict], None]
) -> list[Leftover]:
    """Remove each entry: the deepest paths first (a feedback before its message, a message
    before its conversation), the entries of one depth REMOVERS at a time (newest first): across
    a network the removals wait on answers, not on each other. Answer what stays."""
    waves: dict[int, list[Removal]] = {}
    for entry in sorted(entries, key=lambda e: e.seq, reverse=True):
        waves.setdefault(entry.path.count("/"), []).append(entry)
    left: list[Leftover] = []
    context = contextvars.copy_context()  # the run's (its secrets): each removal in a copy
    with ThreadPoolExecutor(max_workers=REMOVERS) as pool:
        for depth in sorted(waves, reverse=True):
            outcomes = pool.map(
                lambda e: context.copy().run(_remove, e, clients, write), waves[depth]
            )
            left += [item for item in outcomes if item is not None]
    return left


def _remove(
    entry: Removal, clients: Mapping[str, httpx.Client], write: Callable
) -> Leftover | None:
    """Send the entry's removal; answer what stays (None when it was removed)."""

    def stays(why: str) -> Leftover:
        what = redact.text(f"{entry.describe()} ({entry.principal})")
        return Leftover(kind_of(entry.path), why, what, removable=True)

    client = clients.get(entry.principal)
    if client is None and entry.principal == ANONYMOUS:
        client = clients.get(MAIN)  # a target that let a request without a token create
    if client is None:
        return stays("no token of this principal")
    try:
        response = client.request(entry.method, entry.path, json=entry.json)
    except httpx.HTTPError as exc:
        return stays(f"its delete got no answer ({type(exc).__name__})")
    except AnswerFault as fault:  # no answer within the run's bounds
        return stays(f"its delete got no answer ({fault.what.partition(': ')[2]})")
    except Overdue as late:  # the delete ran past its deadline twice in this run already
        return stays(f"its delete was not sent ({late.msg.removeprefix('not judged: ')})")
    if response.is_success or response.status_code in GONE:
        write({"event": "removed", "seq": entry.seq, "status": response.status_code})
        return None
    return stays(f"its delete answered HTTP {response.status_code}")
