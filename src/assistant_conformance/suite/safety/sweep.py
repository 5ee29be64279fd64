"""--sweep: remove what earlier runs against this target left behind, and say what stays.

It deletes what the open ledgers of earlier runs list (and whose runs are over), and also the
threads and conversations those runs marked with their prefix (metadata `conformance_run`, title)
whose create never got an answer. What no one can remove is said, from every ledger of the
target (open or closed): chat-kit sessions (the interface has no delete) until they expire,
creates whose answer named nothing. Its exit status: 0 when nothing that can be removed is left
(what cannot be is said), 3 when a removal failed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from assistant_conformance.report import redact
from assistant_conformance.report.document import left_lines
from assistant_conformance.report.exits import Exit
from assistant_conformance.suite.config.settings import SuiteSettings
from assistant_conformance.suite.http.observe import AnswerFault
from assistant_conformance.suite.http.policy import Policy
from assistant_conformance.suite.http.target import HarnessError, Target, preflight
from assistant_conformance.suite.safety.ledger import (
    LEDGER_DIR,
    MAIN,
    Ledger,
    Removal,
    now,
    read_ledger,
)
from assistant_conformance.suite.safety.removal import (
    NO_ANSWER,
    Leftover,
    grouped,
    kind_of,
    remove_entries,
)
from assistant_conformance.suite.safety.session import cleanup_clients

SEARCHABLE = ("thread", "conversation")  # found again by the run's prefix when unanswered


@dataclass
class SweepResult:
    runs: list[str] = field(default_factory=list)  # run prefixes of the open ledgers swept
    removed: int = 0
    left: list[Leftover] = field(default_factory=list)
    live: list[str] = field(default_factory=list)  # runs still going: their ledgers are locked


def open_entries(records: list[dict[str, Any]]) -> tuple[list[Removal], list[str]]:
    """What a ledger lists as created and not removed; and the creates that went unanswered."""
    entries: dict[int, Removal] = {}
    intents: dict[int, str] = {}
    for r in records:
        seq = r.get("seq", 0)
        if r.get("event") == "intent":
            intents[seq] = f"{r.get('method')} {r.get('path')}"
        elif r.get("event") == "created":
            d = r["delete"]
            principal = r.get("principal", MAIN)
            entries[seq] = Removal(seq, principal, d["method"], d["path"], d.get("json"))
            intents.pop(seq, None)
        elif r.get("event") in ("failed", "left", "no-id", "expires"):
            intents.pop(seq, None)
        elif r.get("event") == "removed":
            entries.pop(seq, None)
    return list(entries.values()), list(intents.values())


def undeletable(records: list[dict[str, Any]], at: datetime) -> list[Leftover]:
    """What a ledger says stays with no way to remove it, and has not expired by `at`."""
    found = [
        Leftover(r["kind"], r["reason"], r["what"], False, r.get("expires"))
        for r in records
        if r.get("event") == "left"
    ]
    return [item for item in found if not item.expires or _instant(item.expires) > at]


def _instant(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


def sweep_ledgers(directory: Path, target: str, clients: Mapping[str, httpx.Client]) -> SweepResult:
    """Remove what earlier runs against `target` recorded and left; close their ledgers."""
    result = SweepResult()
    at = datetime.now(UTC)
    for path in sorted((directory / LEDGER_DIR).glob("conformance-*.jsonl")):
        records = read_ledger(path)
        head = records[0] if records else {}
        if head.get("target") != redact.text(target):
            continue
        if records[-1].get("event") in ("closed", "swept"):
            result.left += undeletable(records, at)  # said again while it is there
            continue
        run = str(head.get("run", path.stem))
        earlier = Ledger(directory / LEDGER_DIR, target, run)
        if not earlier.hold():
            result.live.append(run)
            continue
        entries, unanswered = open_entries(records)
        if any(kind_of(w.partition(" ")[2]) in SEARCHABLE for w in unanswered):
            entries += _marked(run, clients, earlier._next)
        left = remove_entries(entries, clients, earlier._write)
        left += [
            Leftover(kind_of(w.partition(" ")[2]), NO_ANSWER, w)
            for w in unanswered
            if kind_of(w.partition(" ")[2]) not in SEARCHABLE
        ]
        result.runs.append(run)
        result.removed += len(entries) - sum(1 for item in left if item.removable)
        result.left += left + undeletable(records, at)
        earlier._write({"event": "swept", "left": [i.as_dict() for i in left], "at": now()})
        earlier.release()
    return result


def _marked(prefix: str, clients: Mapping[str, httpx.Client], next_seq: Any) -> list[Removal]:
    """Threads and conversations carrying exactly this run's prefix (checked on each answer,
    whatever the search did with the filter): what a create left without an answer."""
    found: list[Removal] = []
    for principal, client in clients.items():
        search = {"metadata": {"conformance_run": prefix}, "limit": 1000}
        for t in _items(client, "/api/ai/threads/search", search):
            if (t.get("metadata") or {}).get("conformance_run") == prefix and t.get("thread_id"):
                path = f"/api/ai/threads/{quote(str(t['thread_id']), safe='')}"
                found.append(Removal(next_seq(), principal, "DELETE", path))
        search = {"title": prefix, "take": 1000}
        for c in _items(client, "/api/ai/conversations/search", search):
            if str(c.get("title") or "").startswith(prefix) and c.get("id"):
                path = f"/api/ai/conversations/{quote(str(c['id']), safe='')}"
                found.append(Removal(next_seq(), principal, "DELETE", path))
    return found


def _items(client: httpx.Client, path: str, search: dict[str, Any]) -> list[dict[str, Any]]:
    try:
        body = client.post(path, json=search).json()
    except (httpx.HTTPError, AnswerFault, ValueError):
        return []
    if isinstance(body, dict):
        body = body.get("items")
    return [i for i in body or [] if isinstance(i, dict)] if isinstance(body, list) else []


@dataclass
class SweepOutcome:
    exit_status: int
    lines: list[str]


def sweep(settings: SuiteSettings, policy: Policy) -> SweepOutcome:
    """--sweep: remove what earlier runs against this target recorded and left behind."""
    if not settings.base_url:
        return SweepOutcome(0, ["sweep: nothing to do, the embedded reference starts empty"])
    assert settings.token is not None  # validated with the options
    target = Target(settings.base_url.rstrip("/"), settings.token, settings.alt_token)
    redact.register(target.token, "ASSISTANT_API_TOKEN")
    redact.register(target.alt_token, "ASSISTANT_API_ALT_TOKEN")
    try:
        preflight(target, policy)
    except HarnessError as exc:
        return SweepOutcome(Exit.HARNESS, [f"harness error: {redact.text(str(exc))}"])
    with cleanup_clients(target, policy) as clients:
        return outcome(sweep_ledgers(settings.report_dir, target.base_url, clients))


def outcome(result: SweepResult) -> SweepOutcome:
    """What the sweep says, and its exit status: 3 only when a removal failed."""
    said = [
        f"sweep: {len(result.runs)} earlier runs with resources left "
        f"({', '.join(result.runs) or 'none'}); removed {result.removed}"
    ]
    said += left_lines(grouped(result.left))
    said += [f"  could not remove: {item.what}: {item.reason}" for item in result.left
             if item.removable]  # fmt: skip
    said += [f"  left alone: run {run} is still going" for run in result.live]
    failed = any(item.removable for item in result.left)
    return SweepOutcome(Exit.HARNESS if failed else Exit.CONFORMANT, said)
