"""Counts the processes of one run share while it runs (pytest-xdist workers, the controller):
one small JSON file per count set in the run's folder, `<report dir>/.run/<session>/NAME.json`,
read and changed under an exclusive lock. A merge at the run's end (run/state.py) comes too late
for what must hold during the run: the run's budget of what cannot be removed, the operations
that ran past their deadline twice. Without a folder (a replay, a self-test), the counts live in
this process alone.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

if sys.platform != "win32":
    import fcntl

RUN_FOLDER = ".run"
T = TypeVar("T")


def run_folder(report_dir: Path, session: str) -> Path:
    """Where the processes of the run `session` share their counts."""
    return report_dir / RUN_FOLDER / session


def discard(folder: Path | None) -> None:
    """The run is over: its shared counts go (the report holds what they caused)."""
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


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
