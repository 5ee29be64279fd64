"""--sweep: remove what earlier runs against this target left behind, and say what stays.

It deletes what the open ledgers of earlier runs list (and whose runs are over), and looks for
what a create whose answer never came made, by the run's mark its intent carries (lookup.py:
threads by metadata, conversations by title, store items by namespace), and removes what it
finds. What no one can remove is said, from every ledger of the target (open or closed): chat-kit
sessions (the interface has no delete) until they expire, creates whose answer named nothing;
and by name each unanswered create it could not look for (knowledge bases and files have no list
in the interface; a body without the run's mark). Its exit status: 0 only when nothing that can
be removed may remain (what cannot be is said), else 3 with the line that says why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import httpx

from assistant_conformance.report import redact
from assistant_conformance.report.document import left_lines
from assistant_conformance.report.exit_codes import Exit
from assistant_conformance.suite.config.settings import SuiteSettings
from assistant_conformance.suite.http.policy import Policy
from assistant_conformance.suite.http.target import HarnessError, Target, preflight
from assistant_conformance.suite.safety.ledger import (
    LEDGER_DIR,
    MAIN,
    Ledger,
    LedgerLine,
    Removal,
    read_ledger,
    utc_timestamp,
)
from assistant_conformance.suite.safety.lookup import Unanswered, look_for
from assistant_conformance.suite.safety.removal import (
    Leftover,
    grouped,
    kind_of,
    remove_entries,
)
from assistant_conformance.suite.safety.session import cleanup_clients


@dataclass
class SweepResult:
    runs: list[str] = field(default_factory=list)  # run prefixes of the open ledgers swept
    removed: int = 0
    left: list[Leftover] = field(default_factory=list)
    live: list[str] = field(default_factory=list)  # runs still going: their ledgers are locked


def open_entries(records: list[LedgerLine]) -> tuple[list[Removal], list[Unanswered]]:
    """What a ledger lists as created and not removed; and the creates that went unanswered."""
    entries: dict[int, Removal] = {}
    intents: dict[int, Unanswered] = {}
    for r in records:
        seq = r.get("seq", 0)
        if r.get("event") == "intent":
            what = f"{r.get('method')} {r.get('path')}"
            principal = r.get("principal", MAIN)
            intents[seq] = Unanswered(
                seq, principal, what, kind_of(str(r.get("path"))), r.get("marker")
            )
        elif r.get("event") == "created":
            d = r["delete"]
            principal = r.get("principal", MAIN)
            entries[seq] = Removal(seq, principal, d["method"], d["path"], d.get("json"))
            intents.pop(seq, None)
        elif r.get("event") in ("failed", "left", "no-id", "expires", "unsent"):
            intents.pop(seq, None)
        elif r.get("event") == "removed":
            entries.pop(seq, None)
    return list(entries.values()), list(intents.values())


def undeletable(records: list[LedgerLine], at: datetime) -> list[Leftover]:
    """What a ledger says stays with no way to remove it, and has not expired by `at`."""
    found = [
        Leftover(r["kind"], r["reason"], r["what"], False, r.get("expires"))
        for r in records
        if r.get("event") == "left"
    ]
    return [item for item in found if not item.expires or _instant(item.expires) > at]


def unfound(closing: LedgerLine, path: Path) -> list[Leftover]:
    """What a closed ledger says may remain and could not be looked for: said by every sweep
    (exit 3) until someone removes it by hand and deletes the ledger."""
    return [
        replace(Leftover(**item), what=f"{item['what']} [ledger {path}]")
        for item in closing.get("left", [])
        if item.get("unfound")
    ]


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
        if records[-1].get("event") in ("closed", "swept"):  # said again while it may be there
            result.left += undeletable(records, at) + unfound(records[-1], path)
            continue
        run = str(head.get("run", path.stem))
        earlier = Ledger(directory / LEDGER_DIR, target, run)
        if not earlier.hold():
            result.live.append(run)
            continue
        entries, unanswered = open_entries(records)
        earlier._seq = max((r.get("seq", 0) for r in records), default=0)
        found, unlooked = look_for(unanswered, clients, earlier._next, earlier.removes)
        known = {(e.principal, e.path) for e in entries}
        entries += [f for f in found if (f.principal, f.path) not in known]
        left = remove_entries(entries, clients, earlier._write)
        result.runs.append(run)
        result.removed += len(entries) - len(left)
        left += unlooked
        result.left += left + undeletable(records, at)
        earlier._write(
            {"event": "swept", "left": [i.as_dict() for i in left], "at": utc_timestamp()}
        )
        earlier.release()
    return result


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
    """What the sweep says, and its exit status: 3 when something that can be removed may remain
    (a removal failed; an unanswered create it could not look for)."""
    said = [
        f"sweep: {len(result.runs)} earlier runs with resources left "
        f"({', '.join(result.runs) or 'none'}); removed {result.removed}"
    ]
    said += left_lines(grouped(result.left))
    said += [
        f"  could not remove: {item.what}: {item.reason}" for item in result.left if item.removable
    ]
    said += [
        f"  could not look for: {item.kind} {item.what}: {item.reason}"
        for item in result.left
        if item.unfound
    ]
    said += [f"  left alone: run {run} is still going" for run in result.live]
    failed = any(item.removable or item.unfound for item in result.left)
    return SweepOutcome(Exit.HARNESS if failed else Exit.CONFORMANT, said)
