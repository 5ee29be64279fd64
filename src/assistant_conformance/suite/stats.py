"""What the run measured beside verdicts (runs started and what they cost, requests throttled),
gathered across pytest-xdist workers: each process appends records under a name, a worker writes
them to the report directory as its session ends, and the controller merges them for the report.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from pathlib import Path
from typing import Any

import pytest

SESSION = "assistant_conformance_session"
_RECORDS = pytest.StashKey[dict[str, list[dict[str, Any]]]]()
_TOKEN = pytest.StashKey[str]()


def start(config: pytest.Config) -> None:
    workerinput = getattr(config, "workerinput", None)
    token = workerinput.get(SESSION) if workerinput else None
    config.stash[_TOKEN] = token or secrets.token_hex(6)
    config.stash[_RECORDS] = {}


def token(config: pytest.Config) -> str:
    return config.stash[_TOKEN]


def add(config: pytest.Config, name: str, *records: dict[str, Any]) -> None:
    config.stash[_RECORDS].setdefault(name, []).extend(records)


def _directory(report_dir: Path, config: pytest.Config) -> Path:
    return report_dir / ".stats" / token(config)


def save(config: pytest.Config, report_dir: Path) -> None:
    """A worker's records, for the controller to merge."""
    records = config.stash[_RECORDS]
    if records:
        directory = _directory(report_dir, config)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"{os.getpid()}.json").write_text(json.dumps(records), encoding="utf-8")


def merged(config: pytest.Config, report_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """This process's records and every worker's of the same session (the files are removed)."""
    result = {name: list(items) for name, items in config.stash[_RECORDS].items()}
    directory = _directory(report_dir, config)
    for path in sorted(directory.glob("*.json")) if directory.exists() else []:
        for name, items in json.loads(path.read_text(encoding="utf-8")).items():
            result.setdefault(name, []).extend(items)
        path.unlink()
    if directory.exists():
        directory.rmdir()
    return result


def peak_memory_mib() -> float | None:
    """This process's peak resident memory so far (None where the OS does not say)."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return round(peak / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)
