"""SQLite persistence for the reference server: a small document store plus ordered logs.

Every resource is a JSON document in `resources`, keyed by kind and id and owned by one principal;
`parent` links a child (a run, a document, a message) to its parent for listing. Run events and
thread checkpoints are append-only logs with a per-parent sequence number.

Searches read through `scan`: newest first, narrowed by equality on indexed fields (`fields`: each
top-level string of a document, and each string one level down, as "metadata.key" or
"namespace.0"), on a connection of their own (WAL: readers do not wait for the writer), so a
search over 100,000 threads takes milliseconds and can run off the event loop.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
import threading
from collections.abc import Generator, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS resources (
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    owner TEXT NOT NULL,
    parent TEXT,
    seq INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (kind, id)
);
CREATE INDEX IF NOT EXISTS resources_by_owner ON resources (kind, owner, parent, seq);
CREATE TABLE IF NOT EXISTS logs (
    stream TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (stream, seq)
);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS resources_by_seq ON resources (kind, owner, seq);
CREATE TABLE IF NOT EXISTS fields (
    kind TEXT NOT NULL,
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    seq INTEGER NOT NULL,
    id TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS fields_by_value ON fields (kind, owner, name, value, seq);
CREATE INDEX IF NOT EXISTS fields_by_id ON fields (kind, id);
"""
FIELDS_VERSION = 1  # PRAGMA user_version once `fields` covers every resource

Doc = dict[str, Any]


class Database:
    """One SQLite connection shared by the server's event loop and worker threads."""

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL (with WAL): an acknowledged write survives a killed server, as the suite's
        # restarts check; FULL would also outlive a power cut at an fsync per write, a wait on
        # every create of a run.
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.executescript(SCHEMA)
        self._readers: builtins.list[sqlite3.Connection] = []
        self._local = threading.local()
        if self._conn.execute("PRAGMA user_version").fetchone()[0] < FIELDS_VERSION:
            self._index_all()  # a database written before `fields` existed

    def close(self) -> None:
        with self._lock:
            self._conn.close()
            for reader in self._readers:
                reader.close()

    def _index_all(self) -> None:
        with self.transaction() as conn:
            conn.execute("DELETE FROM fields")
            rows = conn.execute("SELECT kind, id, owner, seq, data FROM resources").fetchall()
            for kind, id, owner, seq, data in rows:
                _index(conn, kind, id, owner, seq, json.loads(data))
            conn.execute(f"PRAGMA user_version={FIELDS_VERSION}")

    def _reader(self) -> sqlite3.Connection:
        """This thread's read connection (the shared one for an in-memory database)."""
        reader = getattr(self._local, "reader", None)
        if reader is None:
            if self.path == ":memory:":
                return self._conn
            reader = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            with self._lock:
                self._readers.append(reader)
            self._local.reader = reader
        return reader

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def next_seq(self, name: str = "resources") -> int:
        with self.transaction() as conn:
            return _bump(conn, name)

    # --- resources -------------------------------------------------------------------------

    def put(self, kind: str, id: str, owner: str, data: Doc, parent: str | None = None) -> Doc:
        """Insert or replace a resource, keeping its original sequence number on replace."""
        with self.transaction() as conn:
            row = conn.execute(
                "SELECT seq FROM resources WHERE kind=? AND id=?", (kind, id)
            ).fetchone()
            seq = row[0] if row else _bump(conn, "resources")
            conn.execute(
                "INSERT OR REPLACE INTO resources (kind, id, owner, parent, seq, data)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (kind, id, owner, parent, seq, json.dumps(data)),
            )
            conn.execute("DELETE FROM fields WHERE kind=? AND id=?", (kind, id))
            _index(conn, kind, id, owner, seq, data)
        return data

    def get(self, kind: str, id: str, owner: str | None) -> Doc | None:
        """The resource, or None when it does not exist or belongs to another principal."""
        with self._lock:
            row = self._conn.execute(
                "SELECT owner, data FROM resources WHERE kind=? AND id=?", (kind, id)
            ).fetchone()
        if row is None or (owner is not None and row[0] != owner):
            return None
        return json.loads(row[1])

    def list(self, kind: str, owner: str | None, parent: str | None = None) -> list[Doc]:
        """Resources of a kind in creation order, optionally only the children of `parent`."""
        sql = "SELECT data FROM resources WHERE kind=?"
        args: list[Any] = [kind]
        if owner is not None:
            sql += " AND owner=?"
            args.append(owner)
        if parent is not None:
            sql += " AND parent=?"
            args.append(parent)
        with self._lock:
            rows = self._conn.execute(sql + " ORDER BY seq", args).fetchall()
        return [json.loads(r[0]) for r in rows]

    def scan(
        self, kind: str, owner: str, equals: dict[str, Any] | None = None
    ) -> Generator[Doc, None, None]:
        """Resources of `owner`, newest first, whose indexed fields equal `equals` (names as
        `fields` spells them, values compared as JSON); read lazily on this thread's connection."""
        conditions = sorted((equals or {}).items())
        if not conditions:
            sql, args = "SELECT data FROM resources WHERE kind=? AND owner=?", [kind, owner]
            sql += " ORDER BY seq DESC"
        else:
            (name, value), rest = conditions[0], conditions[1:]
            sql = (
                "SELECT r.data FROM fields f JOIN resources r ON r.kind=f.kind AND r.id=f.id"
                " WHERE f.kind=? AND f.owner=? AND f.name=? AND f.value=?"
            )
            args = [kind, owner, name, _canonical(value)]
            for name, value in rest:
                sql += (
                    " AND EXISTS (SELECT 1 FROM fields g WHERE g.kind=f.kind AND g.owner=f.owner"
                    " AND g.name=? AND g.value=? AND g.id=f.id)"
                )
                args += [name, _canonical(value)]
            sql += " ORDER BY f.seq DESC"
        cursor = self._reader().execute(sql, args)
        try:
            while rows := cursor.fetchmany(256):
                for (data,) in rows:
                    yield json.loads(data)
        finally:
            cursor.close()

    def delete(self, kind: str, id: str, owner: str | None) -> bool:
        sql = "DELETE FROM resources WHERE kind=? AND id=?"
        args: list[Any] = [kind, id]
        if owner is not None:
            sql += " AND owner=?"
            args.append(owner)
        with self.transaction() as conn:
            deleted = conn.execute(sql, args).rowcount > 0
            if deleted:
                conn.execute("DELETE FROM fields WHERE kind=? AND id=?", (kind, id))
            return deleted

    def delete_children(self, kind: str, parent: str) -> int:
        with self.transaction() as conn:
            conn.execute(
                "DELETE FROM fields WHERE kind=? AND id IN"
                " (SELECT id FROM resources WHERE kind=? AND parent=?)",
                (kind, kind, parent),
            )
            return conn.execute(
                "DELETE FROM resources WHERE kind=? AND parent=?", (kind, parent)
            ).rowcount

    # --- ordered logs (run events, checkpoints) --------------------------------------------

    def append(self, stream: str, kind: str, data: Any) -> int:
        """Append an entry to a log and answer its sequence number (1, 2, ...)."""
        with self.transaction() as conn:
            seq = _bump(conn, f"log:{stream}")
            conn.execute(
                "INSERT INTO logs (stream, seq, kind, data) VALUES (?, ?, ?, ?)",
                (stream, seq, kind, json.dumps(data)),
            )
        return seq

    def read_log(self, stream: str, after: int = 0) -> builtins.list[tuple[int, str, Any]]:
        """Entries of a log with a sequence number greater than `after`, in order."""
        # builtins.list above: inside the class, `list` names the method (mypy).
        with self._lock:
            rows = self._conn.execute(
                "SELECT seq, kind, data FROM logs WHERE stream=? AND seq>? ORDER BY seq",
                (stream, after),
            ).fetchall()
        return [(seq, kind, json.loads(data)) for seq, kind, data in rows]

    def copy_log(self, source: str, target: str) -> None:
        for _, kind, data in self.read_log(source):
            self.append(target, kind, data)

    def drop_log(self, stream: str) -> None:
        with self.transaction() as conn:
            conn.execute("DELETE FROM logs WHERE stream=?", (stream,))


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


INDEXED_LENGTH = 256  # longer strings are not indexed (a search by one reads every document)


def narrows(value: Any) -> bool:
    """Whether `scan` can narrow by this value: a short string (numbers and booleans are not
    indexed: JSON spells 1, 1.0 and true apart where a filter's equality does not)."""
    return isinstance(value, str) and len(value) <= INDEXED_LENGTH


def index_names(data: Doc) -> Iterator[tuple[str, Any]]:
    """The fields of a document `scan` can narrow by: top-level strings, and strings one level
    down ("metadata.key", "namespace.0")."""
    for key, value in data.items():
        if isinstance(value, dict):
            children: Iterable[tuple[Any, Any]] = value.items()
        elif isinstance(value, list):
            children = enumerate(value)
        else:
            children = [(None, value)]
        for child, inner in children:
            if narrows(inner):
                yield (key if child is None else f"{key}.{child}"), inner


def _index(conn: sqlite3.Connection, kind: str, id: str, owner: str, seq: int, data: Doc) -> None:
    conn.executemany(
        "INSERT INTO fields (kind, owner, name, value, seq, id) VALUES (?, ?, ?, ?, ?, ?)",
        [(kind, owner, name, _canonical(v), seq, id) for name, v in index_names(data)],
    )


def _bump(conn: sqlite3.Connection, name: str) -> int:
    conn.execute(
        "INSERT INTO counters (name, value) VALUES (?, 1)"
        " ON CONFLICT(name) DO UPDATE SET value = value + 1",
        (name,),
    )
    row = conn.execute("SELECT value FROM counters WHERE name=?", (name,)).fetchone()
    return int(row[0])
