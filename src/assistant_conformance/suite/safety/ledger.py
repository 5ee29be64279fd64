"""What the suite created on the target, so it can remove exactly that and nothing else.

One ledger file per run, `<report dir>/ledger/<run prefix>.jsonl`, append-only, one JSON object a
line; it names principals ("main", "alt"), never their tokens:

    {"event": "run", "run": "conformance-1a2b3c4d", "target": "https://...", "started": "..."}
    {"event": "intent", "seq": 1, "principal": "main", "method": "POST", "path": "/api/ai/threads",
     "marker": {"metadata": {"conformance_run": "conformance-1a2b3c4d"}}}
    {"event": "created", "seq": 1, "principal": "main", "delete": {"method": "DELETE", "path": ...}}
    {"event": "failed", "seq": 2, "status": 400}          (the create was refused: nothing made)
    {"event": "unsent", "seq": 4}                          (stopped before it went out)
    {"event": "left", "seq": 3, "kind": "chat-kit session", "reason": "the interface has no
     delete", "expires": "2026-11-24T11:05:02Z"}           (made, and no way to remove it)
    {"event": "removed", "seq": 1, "status": 202}
    {"event": "closed", "left": [...]}                     (or "kept", under --no-cleanup)

The suite's clients write the intent before a create is sent, whatever credential it carries
(flushed: a killed process loses nothing the OS was given), with the run's mark its body carries
(lookup.py), and the delete request as soon as the answer names the id (guarded.py; what
creates and what deletes it: contract/resources.py);
tests add what only they know with `track`. What no delete removes takes a place in the run's
budget first (budget.py). At the end the session deletes what is recorded, newest first (a 404
or 410: a test removed it already) and looks for what unanswered creates made; `sweep` does the
same for the open ledgers of earlier runs.
"""

from __future__ import annotations

import json
import secrets
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import unquote

import httpx

from assistant_conformance.contract.resources import Resource, Route, create_at
from assistant_conformance.report import redact
from assistant_conformance.suite.config.run_folder import SharedCounts
from assistant_conformance.suite.http.observe import refusing
from assistant_conformance.suite.safety.budget import Allowance, Place
from assistant_conformance.suite.safety.lookup import (
    Unanswered,
    look_for,
    marker_of,
    sent_bytes,
    sent_json,
)
from assistant_conformance.suite.safety.removal import (
    ANONYMOUS,
    MAIN,
    NO_DELETE,
    NO_ID,
    Leftover,
    Removal,
    Removals,
    base_path,
    expiry_of,
    kind_of,
    remove_entries,
)

if sys.platform != "win32":
    import fcntl

__all__ = ["ALT", "ANONYMOUS", "LEDGER_DIR", "MAIN", "Ledger", "Leftover", "Removal", "read_ledger"]

ALT = "alt"
LEDGER_DIR = "ledger"

# One line of a ledger file, one of the events above: JSON as written, read back also from the
# ledgers of earlier runs (`sweep`), whatever version of the suite wrote them.
LedgerLine = dict[str, Any]


@dataclass
class Intent:
    seq: int
    principal: str
    resource: Resource  # what it makes (contract/resources.py)
    removed_by: Route | None  # the delete that removes it (None: nothing does)
    body: Any = None
    announced: bool = True
    what: str = ""  # the create request: METHOD /path
    budgeted: Place | None = None  # the place it took in the run's budget


def utc_timestamp() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class Ledger:
    """The ledger of this run. `run_prefix` goes into the names and metadata of what it creates."""

    directory: Path
    target: str = ""
    run_prefix: str = field(default_factory=lambda: f"conformance-{secrets.token_hex(4)}")
    entries: Removals = field(default_factory=Removals)
    pending: dict[int, Unanswered] = field(default_factory=dict)  # creates still unanswered
    owned: set[str] = field(default_factory=set)  # identifiers of what the run created
    undeletable: list[Leftover] = field(default_factory=list)  # made, with no way to remove it
    budget: Allowance = field(default_factory=lambda: Allowance(SharedCounts(None)))
    _seq: int = 0
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _file: TextIO | None = field(default=None, repr=False)

    @property
    def path(self) -> Path:
        return self.directory / f"{self.run_prefix}.jsonl"

    def hold(self) -> bool:
        """Open the ledger for appending, locked while this process lives (a sweep leaves the
        ledger of a run still going alone); False when another live process holds it."""
        with self._lock:
            if self._file is not None:
                return True
            self.directory.mkdir(parents=True, exist_ok=True)
            new = not self.path.exists()
            file = self.path.open("a", encoding="utf-8")
            if sys.platform != "win32":
                try:
                    fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    file.close()
                    return False
            self._file = file
            if new:
                head = {"event": "run", "run": self.run_prefix, "target": redact.text(self.target)}
                self._write({**head, "started": utc_timestamp()})
            return True

    def release(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def _write(self, record: LedgerLine) -> None:
        with self._lock:
            if self._file is None and not self.hold():
                raise RuntimeError(f"ledger {self.path} is held by another process")
            assert self._file is not None
            self._file.write(redact.text(json.dumps(record, ensure_ascii=False)) + "\n")
            self._file.flush()  # on disk (the OS's) before the request goes out

    def _next(self) -> int:
        with self._lock:
            self._seq += 1
            return self._seq

    # --- recording ---------------------------------------------------------------------------

    def track(self, method: str, path: str, json: Any = None, principal: str = MAIN) -> None:
        """Record a created resource by the request that removes it (and its JSON body, if any)."""
        self._add(Removal(0, principal, method, path, json))

    def _add(self, entry: Removal) -> None:
        with self._lock:
            if not self.entries.add(entry):  # tracked already
                return
            entry.seq = entry.seq or self._next()
            self.owned.add(unquote(entry.path.rstrip("/").rsplit("/", 1)[-1]))
            delete = {"method": entry.method, "path": entry.path, "json": entry.json}
            what = {"seq": entry.seq, "principal": entry.principal, "delete": delete}
            self._write({"event": "created", **what})

    def intend(
        self, request: httpx.Request, principal: str, announce: bool = True
    ) -> Intent | None:
        """Before a request that may create something is sent: write down that it will be
        (`announce` off: it carries no valid credential, and should create nothing)."""
        if create_at(request.method, self._relative(request.url.path)) is None:
            return None  # most requests create nothing: their body is not parsed (intend_path)
        content = sent_bytes(request)
        return self.intend_path(
            request.method, request.url.path, sent_json(content), principal, announce, content
        )

    def intend_path(
        self,
        method: str,
        path: str,
        body: Any = None,
        principal: str = MAIN,
        announce: bool = True,
        content: bytes = b"",
    ) -> Intent | None:
        """`intend` by method, path, JSON body and bytes sent: None when it creates nothing known
        (BudgetSpent: it would make what nothing removes, the run's budget of it spent). Its
        answer goes to `created` (none came: `unanswered`)."""
        path = self._relative(path)
        if (found := create_at(method, path)) is None:
            return None
        resource, create = found
        kind, request = kind_of(path), f"{method.upper()} {path}"
        refusal = "" if announce and not refusing() else "input" if announce else "credential"
        place = self.budget.reserve(kind, refusal) if create.removed_by is None else None
        seq, mark = self._next(), marker_of(resource, body, content, self.run_prefix)
        with self._lock:
            self.pending[seq] = Unanswered(seq, principal, request, kind, mark)
        sent: LedgerLine = {"principal": principal, "method": method.upper(), "path": path}
        sent.update({"credential": False} if not announce else {})
        sent.update({"marker": mark} if mark is not None else {})
        self._write({"event": "intent", "seq": seq, **sent})
        reference = body if resource.named_by else None
        return Intent(
            seq, principal, resource, create.removed_by, reference, announce, request, place
        )

    def unremovable(self, method: str, path: str) -> str:
        """The kind of what the request makes that nothing removes ("" when none)."""
        found = create_at(method, self._relative(path))
        return kind_of(self._relative(path)) if found and found[1].removed_by is None else ""

    def removes(self, item: Unanswered) -> bool:
        """Whether what an unanswered create may have made has a delete."""
        return not self.unremovable(*item.what.split(" ", 1))

    def unanswered(self, intent: Intent, sent: bool) -> None:
        """No answer came (`sent`: it may have made something, still pending; else: not sent)."""
        if intent.budgeted:
            self.budget.settle(intent.budgeted, made=sent)
        if not sent:
            with self._lock:
                self.pending.pop(intent.seq, None)
            self._write({"event": "unsent", "seq": intent.seq})

    def created(self, intent: Intent, status: int, body: Any, response: Any = None) -> None:
        """The answer to an intended create: record its delete request, or that nothing was made."""
        with self._lock:
            self.pending.pop(intent.seq, None)
        principal, made = intent.principal, 200 <= status < 300
        if intent.budgeted:
            self.budget.settle(intent.budgeted, made)
        if not made:
            self._write({"event": "failed", "seq": intent.seq, "status": status})
            return
        kind, delete, resource = (
            kind_of(intent.what.partition(" ")[2]),
            intent.removed_by,
            intent.resource,
        )
        if delete is None:  # nothing can remove it: said with what the answer tells
            expires = expiry_of(body, datetime.now(UTC))
            self.budget.keep(kind, body, expires, response)
            self._leave(intent.seq, Leftover(kind, NO_DELETE, intent.what, expires=expires))
            return
        if resource.named_by:  # its delete names it by fields of the create's body
            ref = intent.body if isinstance(intent.body, dict) else {}
            reference = {k: ref[k] for k in resource.named_by if k in ref}
            self._add(Removal(intent.seq, principal, delete.method, delete.path, reference))
            return
        value = (
            body.get(resource.id_field) if isinstance(body, dict) and resource.id_field else None
        )
        if isinstance(value, str | int) and str(value):
            self._add(Removal(intent.seq, principal, delete.method, delete.filled(str(value))))
        else:
            self._leave(intent.seq, Leftover(kind, NO_ID, intent.what))

    def _leave(self, seq: int, stays: Leftover) -> None:
        with self._lock:
            self.undeletable.append(stays)
        self._write({"event": "left", "seq": seq, **stays.as_dict()})

    def _relative(self, path: str) -> str:
        base = base_path(self.target) if self.target else ""
        return path[len(base) :] if base and path.startswith(base) else path

    # --- removing ----------------------------------------------------------------------------

    def clean_up(self, clients: Mapping[str, httpx.Client]) -> list[Leftover]:
        """Delete everything tracked, newest first; answer what stays on the target."""
        with self._lock:
            entries, self.entries = list(self.entries), Removals()
            unanswered = list(self.pending.values())
            undeletable = list(self.undeletable)
        found, unlooked = look_for(unanswered, clients, self._next, self.removes)
        left = remove_entries(entries + found, clients, self._write) + unlooked
        if entries or unanswered or undeletable:
            self._write({"event": "closed", "left": [item.as_dict() for item in left]})
        return left + undeletable

    def keep(self) -> int:
        """--no-cleanup: leave everything, say so in the ledger; answer how many resources."""
        with self._lock:
            count = len(self.entries)
            self.entries = Removals()
        if count:
            self._write({"event": "kept", "count": count})
        return count


def read_ledger(path: Path) -> list[LedgerLine]:
    """A ledger's records, one a line (a line cut by a killed run left out)."""
    records = []
    # "\n" only, not splitlines(): a record may hold U+2028 or U+0085 as sent (a name drawn)
    for line in path.read_text(encoding="utf-8").split("\n"):
        try:
            records.append(json.loads(line))
        except ValueError:
            continue  # a line cut by a killed run (or the empty one after the last)
    return records
