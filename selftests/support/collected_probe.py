"""A pytest plugin for the self-tests (`-p collected_probe`): each process of a run writes how
many items it collected, before any deselection, into the folder COLLECTED_INTO names (one file
per process: `main`, or the pytest-xdist worker's id)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

FOLDER = "COLLECTED_INTO"


@pytest.hookimpl(tryfirst=True)  # before -k takes items away
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if folder := os.environ.get(FOLDER):
        name = os.environ.get("PYTEST_XDIST_WORKER", "main")
        Path(folder, name).write_text(str(len(items)), encoding="utf-8")


def counts(folder: Path) -> dict[str, int]:
    """What each process of the run wrote."""
    return {p.name: int(p.read_text(encoding="utf-8")) for p in sorted(folder.iterdir())}
