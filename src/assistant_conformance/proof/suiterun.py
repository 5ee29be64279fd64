"""The suite in a child process, as the kill table and the matrix run it against a target: the
installed suite (`python -m assistant_conformance run`), from the folder of its log, output to
that log, bounded in time, and with none of the parent's ASSISTANT_API_* settings (each run's
options are its own) but ASSISTANT_API_CONCURRENCY: how many processes a run may take is the
machine's to say, not the target's."""

from __future__ import annotations

import atexit
import contextlib
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
    """The suite with pytest arguments ARGS (`tests/...` names its checks) and `env` added, from
    the folder of its log; its exit status, or None past `timeout`."""
    clean = {**child_environment(), **(env or {})}
    argv = ["-m", "assistant_conformance", "run", "--", *args]
    return run_python(argv, log_path.parent, clean, log_path, timeout)


def run_python(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    log_path: Path,
    timeout: float,
    errors_path: Path | None = None,
) -> int | None:
    """`python -m NAME ARGS` (ARGV) in `cwd` with exactly `env`, its output to `log_path` (its
    errors to `errors_path` where given): its exit status, None past `timeout`. Forked from this
    process's forker where there is one and the run would start as it did (forks.py: no start-up
    imports per run), else a process of its own."""
    if (forker := _forker()) is not None and forker.starts_like(env):
        return forker.run(argv, cwd, env, log_path, timeout, errors_path)
    with log_path.open("w", encoding="utf-8") as log, contextlib.ExitStack() as more:
        errors = (
            more.enter_context(errors_path.open("w", encoding="utf-8")) if errors_path else None
        )
        try:
            done = subprocess.run(
                [sys.executable, *argv],
                cwd=cwd,
                env=env,
                stdout=log,
                stderr=errors or subprocess.STDOUT,
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
