"""What the suite created on the target, so it can remove exactly that and nothing else.

One ledger file per run, `<report dir>/ledger/<run prefix>.jsonl`, append-only, one JSON object a
line; it names principals ("main", "alt"), never their tokens:

    {"event": "run", "run": "conformance-1a2b3c4d", "target": "https://...", "started": "..."}
    {"event": "intent", "seq": 1, "principal": "main", "method": "POST", "path": "/api/ai/threads"}
    {"event": "created", "seq": 1, "principal": "main", "delete": {"method": "DELETE", "path": ...}}
    {"event": "failed", "seq": 2, "status": 400}          (the create was refused: nothing made)
    {"event": "left", "seq": 3, "kind": "chat-kit session", "reason": "the interface has no
     delete", "expires": "2026-11-24T11:05:02Z"}           (made, and no way to remove it)
    {"event": "removed", "seq": 1, "status": 202}
    {"event": "closed", "left": [...]}                     (or "kept", under --no-cleanup)

The suite's clients write the intent before a create is sent and the delete request as soon as
the answer names the id (guarded.py, for the creates in CREATES); tests add what
only they know with `track`. At the end the session deletes what is recorded, newest first; a
404 or 410 means a test removed it already. `sweep` does the same for the open ledgers of earlier
runs against the same target, and also removes threads and conversations those runs marked with
their prefix (metadata `conformance_run`, title) whose create never got an answer.
"""

from __future__ import annotations

import json
import re
import secrets
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote, unquote

import httpx

from assistant_conformance.contract.openapi import KB_PREFIXES
from assistant_conformance.report import redact
from assistant_conformance.suite.safety.removal import (
    ANONYMOUS,
    MAIN,
    NO_ANSWER,
    NO_DELETE,
    NO_ID,
    Leftover,
    Removal,
    expiry_of,
    kind_of,
    remove_entries,
)

if sys.platform != "win32":
    import fcntl

__all__ = ["ALT", "ANONYMOUS", "LEDGER_DIR", "MAIN", "Ledger", "Leftover", "Removal", "read_ledger"]

ALT = "alt"
LEDGER_DIR = "ledger"
# Creating requests: (method, path pattern) -> (delete path template, answer field with the id).
# An id field of None: nothing to delete (a chat-kit session expires); "@body": the delete
# request takes the store item's reference from the create's body.
CREATES: list[tuple[str, re.Pattern[str], str, str | None]] = [
    ("POST", re.compile(r"/api/ai/threads"), "/api/ai/threads/{}", "thread_id"),
    ("POST", re.compile(r"/api/ai/threads/[^/]+/copy"), "/api/ai/threads/{}", "thread_id"),
    ("POST", re.compile(r"/api/ai/conversations"), "/api/ai/conversations/{}", "id"),
    ("POST", re.compile(f"(?P<kb>{KB_PREFIXES})"), "{kb}/{}", "id"),
    ("POST", re.compile(r"/api/ai/contexts/file"), "/api/ai/contexts/file/{}", "id"),
    # No delete in the contract for /v1/file: the context-file delete is tried (the reference's
    # removes any file); where it fails, the file is reported as left behind.
    ("POST", re.compile(r"/api/ai/v1/file"), "/api/ai/contexts/file/{}", "id"),
    ("PUT", re.compile(r"/api/ai/store/items"), "/api/ai/store/items", "@body"),
    ("POST", re.compile(r"/api/ai/v1/chatkit/sessions"), "", None),
]


@dataclass
class Intent:
    seq: int
    principal: str
    template: str
    id_field: str | None
    body: Any = None
    announced: bool = True
    what: str = ""  # the create request: METHOD /path


def new_prefix() -> str:
    return f"conformance-{secrets.token_hex(4)}"


def now() -> str:
    return _utc_now().isoformat(timespec="seconds")


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class Ledger:
    """The ledger of this run. `run_prefix` goes into the names and metadata of what it creates."""

    directory: Path
    target: str = ""
    run_prefix: str = field(default_factory=new_prefix)
    entries: list[Removal] = field(default_factory=list)
    pending: dict[int, str] = field(default_factory=dict)  # seq -> request still unanswered
    owned: set[str] = field(default_factory=set)  # identifiers of what the run created
    undeletable: list[Leftover] = field(default_factory=list)  # made, with no way to remove it
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
                self._write({**head, "started": now()})
            return True

    def release(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def _write(self, record: dict[str, Any]) -> None:
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
            if any(e.key() == entry.key() for e in self.entries):
                return
            entry.seq = entry.seq or self._next()
            self.entries.append(entry)
            self.owned.add(unquote(entry.path.rstrip("/").rsplit("/", 1)[-1]))
            delete = {"method": entry.method, "path": entry.path, "json": entry.json}
            what = {"seq": entry.seq, "principal": entry.principal, "delete": delete}
            self._write({"event": "created", **what})

    def intend(
        self, request: httpx.Request, principal: str, announce: bool = True
    ) -> Intent | None:
        """Before a request that may create something is sent: write down that it will be (unless
        `announce` is off: a request without a valid credential that should create nothing)."""
        store = request.method == "PUT" and request.url.path.endswith("/store/items")
        body = _body(request) if store else None
        return self.intend_path(request.method, request.url.path, body, principal, announce)

    def intend_path(
        self,
        method: str,
        path: str,
        body: Any = None,
        principal: str = MAIN,
        announce: bool = True,
    ) -> Intent | None:
        """`intend` for a request given by method, path and JSON body (for clients other than
        the suite's httpx ones, e.g. the property layer's): None when it creates nothing known.
        Send the request after this, then pass its answer to `created`."""
        path = self._relative(path)
        for create, pattern, template, id_field in CREATES:
            match = pattern.fullmatch(path)
            if method.upper() == create and match:
                seq = self._next()
                delete = template.replace("{kb}", match.groupdict().get("kb") or "")
                request = f"{create} {path}"
                if announce:
                    with self._lock:
                        self.pending[seq] = request
                    sent = {"principal": principal, "method": create, "path": path}
                    self._write({"event": "intent", "seq": seq, **sent})
                reference = body if id_field == "@body" else None
                return Intent(seq, principal, delete, id_field, reference, announce, request)
        return None

    def created(self, intent: Intent, status: int, body: Any) -> None:
        """The answer to an intended create: record its delete request, or that nothing was made."""
        with self._lock:
            self.pending.pop(intent.seq, None)
        principal = intent.principal
        if not intent.announced and not 200 <= status < 300:
            return  # refused, as expected: nothing to record
        if not 200 <= status < 300:
            self._write({"event": "failed", "seq": intent.seq, "status": status})
            return
        kind = kind_of(intent.what.partition(" ")[2])
        if intent.id_field is None:  # nothing can remove it: said with what the answer tells
            stays = Leftover(kind, NO_DELETE, intent.what, expires=expiry_of(body, _utc_now()))
            self._leave(intent.seq, stays)
            return
        if intent.id_field == "@body":
            ref = intent.body if isinstance(intent.body, dict) else {}
            reference = {k: ref[k] for k in ("namespace", "key") if k in ref}
            self._add(Removal(intent.seq, principal, "DELETE", intent.template, reference))
            return
        value = body.get(intent.id_field) if isinstance(body, dict) else None
        if isinstance(value, str | int) and str(value):
            path = intent.template.format(quote(str(value), safe=""))
            self._add(Removal(intent.seq, principal, "DELETE", path))
        else:
            self._leave(intent.seq, Leftover(kind, NO_ID, intent.what))

    def _leave(self, seq: int, stays: Leftover) -> None:
        with self._lock:
            self.undeletable.append(stays)
        self._write({"event": "left", "seq": seq, **stays.as_dict()})

    def _relative(self, path: str) -> str:
        base = httpx.URL(self.target).path.rstrip("/") if self.target else ""
        return path[len(base) :] if base and path.startswith(base) else path

    # --- removing ----------------------------------------------------------------------------

    def clean_up(self, clients: Mapping[str, httpx.Client]) -> list[Leftover]:
        """Delete everything tracked, newest first; answer what stays on the target."""
        with self._lock:
            entries, self.entries = list(self.entries), []
            unanswered = list(self.pending.values())
            undeletable = list(self.undeletable)
        left = remove_entries(entries, clients, self._write)
        left += [Leftover(kind_of(w.partition(" ")[2]), NO_ANSWER, w) for w in unanswered]
        if entries or unanswered or undeletable:
            self._write({"event": "closed", "left": [item.as_dict() for item in left]})
        return left + undeletable

    def keep(self) -> int:
        """--no-cleanup: leave everything, say so in the ledger; answer how many resources."""
        with self._lock:
            count = len(self.entries)
            self.entries = []
        if count:
            self._write({"event": "kept", "count": count})
        return count


def _body(request: httpx.Request) -> Any:
    try:
        return json.loads(request.content or b"null")
    except (ValueError, RecursionError, httpx.RequestNotRead):
        return None


def read_ledger(path: Path) -> list[dict[str, Any]]:
    """A ledger's records, one a line (a line cut by a killed run left out)."""
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue  # a line cut by a killed run
    return records
