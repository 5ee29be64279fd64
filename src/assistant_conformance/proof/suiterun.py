"""The suite in a child pytest process, as the kill table and the matrix run it against a target:
from the checkout (its conftest loads the plugin), output to a log file, bounded in time, and with
none of the parent's ASSISTANT_API_* settings (each run's options are its own)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]  # the checkout: tests/ and pyproject.toml


def run_pytest(
    args: list[str], log_path: Path, timeout: float, env: dict[str, str] | None = None
) -> int | None:
    """`python -m pytest ARGS` with `env` added; its exit status, or None past `timeout`."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_API_")}
    try:
        with log_path.open("w", encoding="utf-8") as log:
            done = subprocess.run(
                [sys.executable, "-m", "pytest", *args],
                cwd=ROOT,
                env={**clean, **(env or {})},
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=timeout,
            )
    except subprocess.TimeoutExpired:
        return None
    return done.returncode
