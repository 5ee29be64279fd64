"""The suite in a child process, as the kill table and the matrix run it against a target: the
installed suite (`python -m assistant_conformance run`), from the folder of its log, output to
that log, bounded in time, and with none of the parent's ASSISTANT_API_* settings (each run's
options are its own) but ASSISTANT_API_CONCURRENCY: how many processes a run may take is the
machine's to say, not the target's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
    exit status, or None past `timeout`."""
    clean = child_environment()
    command = [sys.executable, "-m", "assistant_conformance", "run", "--", *args]
    try:
        with log_path.open("w", encoding="utf-8") as log:
            done = subprocess.run(
                command,
                cwd=log_path.parent,
                env={**clean, **(env or {})},
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=timeout,
            )
    except subprocess.TimeoutExpired:
        return None
    return done.returncode
