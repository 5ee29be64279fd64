"""The suite in a child process, as the kill table and the matrix run it against a target: the
installed suite (`python -m assistant_conformance run`), from the folder of its log, output to
that log, bounded in time, and with none of the parent's ASSISTANT_API_* settings (each run's
options are its own) but ASSISTANT_API_CONCURRENCY: how many processes a run may take is the
machine's to say, not the target's."""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import threading
from pathlib import Path

from assistant_conformance.proof.forks import SuiteForks

MACHINE_SETTINGS = ("ASSISTANT_API_CONCURRENCY",)


def child_environment() -> dict[str, str]:
    """This process's environment without the suite's settings of a target (ASSISTANT_API_*),
    the machine's (MACHINE_SETTINGS) kept."""
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("ASSISTANT_API_") or k in MACHINE_SETTINGS
    }


def run_pytest(
    args: list[str], log_path: Path, timeout: float, env: dict[str, str] | None = None
) -> int | None:
    """The suite with pytest arguments ARGS (`tests/...` names its checks) and `env` added; its
    exit status, or None past `timeout`. Forked from the process's forker where there is one
    (forks.py: no start-up imports per run), else a process of its own."""
    clean = {**child_environment(), **(env or {})}
    argv = ["-m", "assistant_conformance", "run", "--", *args]
    if (forker := _forker()) is not None:
        return forker.run(argv, log_path.parent, clean, log_path, timeout)
    command = [sys.executable, *argv]
    try:
        with log_path.open("w", encoding="utf-8") as log:
            done = subprocess.run(
                command,
                cwd=log_path.parent,
                env=clean,
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=timeout,
            )
    except subprocess.TimeoutExpired:
        return None
    return done.returncode


_forks: list[SuiteForks] = []  # this process's forker, started by its first run
_starting = threading.Lock()


def _forker() -> SuiteForks | None:
    """This process's forker (started once, ended at exit); None where there is no fork."""
    if not hasattr(os, "fork"):
        return None
    with _starting:
        if not _forks or not _forks[-1].alive():
            _forks.append(SuiteForks(child_environment()))
            if len(_forks) == 1:
                atexit.register(lambda: _forks[-1].close())
        return _forks[-1]
