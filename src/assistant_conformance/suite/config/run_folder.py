"""How the processes of one run (pytest-xdist's controller and workers) share data: one folder,
`<report dir>/.run/<session>/`, the only place they pass anything through. Two kinds of data:

- counts that must hold while the run runs (the run's budget of what cannot be removed, the
  operations that ran past their deadline twice, runs in flight, polls that waited out their
  bound): `RunFolder.counts(NAME)`, a `SharedCounts` of one small JSON file `NAME.json`, read and
  changed under an exclusive lock;
- measurements each process reports at its end (throttled and resent requests, runs started,
  the clean-up, ...): put under a typed key (`Measure[T]`: its name and the type of one record)
  into the process's `Measurements`, published by a worker as `measured/<pid>.json` as its
  session ends and gathered by the controller for the report.

The controller discards the folder once it gathered what the workers published. Without a folder
(a replay, a self-test, a run that does not share counts) the counts live in this process alone.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

if sys.platform != "win32":
    import fcntl

RUN_FOLDER = ".run"
MEASURED_FOLDER = "measured"  # the folder of each process's measurements, one file per process
T = TypeVar("T")
R = TypeVar("R", covariant=True)  # a kind of measurement's record
V = TypeVar("V")


@dataclass(frozen=True)
class Measure(Generic[R]):
    """The key of one kind of measurement: its name in the report's records and (statically) the
    type of one record, a JSON object."""

    name: str


@dataclass
class Measurements:
    """What one process measured, under typed keys; merged across the run's processes."""

    records: dict[str, list[Any]] = field(default_factory=dict)

    def add(self, key: Measure[V], *records: V) -> None:
        self.records.setdefault(key.name, []).extend(records)

    def get(self, key: Measure[V]) -> list[V]:
        return list(self.records.get(key.name, []))

    def as_dict(self) -> dict[str, list[Any]]:
        """The records by name, as results.json keeps them."""
        return {name: list(items) for name, items in self.records.items()}

    def joined(self, other: dict[str, list[Any]]) -> Measurements:
        """These and `other`'s records (another process's, read back)."""
        merged = self.as_dict()
        for name, items in other.items():
            merged.setdefault(name, []).extend(items)
        return Measurements(merged)


@dataclass(frozen=True)
class RunFolder:
    """Where the processes of one run share data; `path` None: this process alone."""

    path: Path | None = None

    @classmethod
    def of(cls, report_dir: Path, session: str) -> RunFolder:
        """The folder of the run `session` (a token its controller hands its workers)."""
        return cls(report_dir / RUN_FOLDER / session)

    def counts(self, name: str) -> SharedCounts:
        """The counts every process of the run sees under `name`."""
        return SharedCounts(self.path / name if self.path else None)

    def publish(self, measured: Measurements) -> None:
        """A worker's measurements, for the controller to gather."""
        if self.path is not None and measured.records:
            folder = self.path / MEASURED_FOLDER
            folder.mkdir(parents=True, exist_ok=True)
            text = json.dumps(measured.as_dict())
            (folder / f"{os.getpid()}.json").write_text(text, encoding="utf-8")

    def gather(self, own: Measurements) -> Measurements:
        """`own` and what every other process of the run published."""
        folder = self.path / MEASURED_FOLDER if self.path else None
        found = sorted(folder.glob("*.json")) if folder and folder.exists() else []
        for path in found:
            own = own.joined(json.loads(path.read_text(encoding="utf-8")))
        return own

    def discard(self) -> None:
        """The run is over: what its processes shared goes (the report holds what it caused)."""
        if self.path is not None:
            shutil.rmtree(self.path, ignore_errors=True)


class SharedCounts:
    """Named counts every process of the run sees; in memory when `path` is None."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._counts: dict[str, int] = {}
        self._stamp: tuple[int, int] | None = None  # the file's (mtime, size) when last read
        self._lock = threading.Lock()

    def get(self, name: str) -> int:
        """The count now (the file is read again only when it changed)."""
        with self._lock:
            if self.path is not None:
                self._refresh()
            return self._counts.get(name, 0)

    def add(self, name: str, by: int = 1) -> int:
        """Count `by` more of `name`; answer the count now."""

        def more(counts: dict[str, int]) -> int:
            counts[name] = counts.get(name, 0) + by
            return counts[name]

        return self.change(more)

    def change(self, update: Callable[[dict[str, int]], T]) -> T:
        """Apply `update` to the counts in one step no other process comes between; its answer."""
        with self._lock, self._locked() as counts:
            return update(counts)

    def _refresh(self) -> None:
        assert self.path is not None
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return
        if (stat.st_mtime_ns, stat.st_size) != self._stamp:
            self._stamp = (stat.st_mtime_ns, stat.st_size)
            self._counts = _read(self.path.read_bytes())

    @contextmanager
    def _locked(self) -> Iterator[dict[str, int]]:
        if self.path is None:
            yield self._counts
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if sys.platform != "win32":
                fcntl.flock(fd, fcntl.LOCK_EX)
            counts = _read(os.read(fd, 1 << 20))
            yield counts
            os.lseek(fd, 0, os.SEEK_SET)
            os.ftruncate(fd, 0)
            os.write(fd, json.dumps(counts, sort_keys=True).encode())
            self._counts = counts
        finally:
            os.close(fd)  # the lock goes with it


def _read(data: bytes) -> dict[str, int]:
    try:
        found = json.loads(data or b"{}")
    except ValueError:
        return {}
    return {k: v for k, v in found.items() if isinstance(v, int)} if isinstance(found, dict) else {}
