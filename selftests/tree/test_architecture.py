"""The package is eight rooms (docs/architecture.md): beside them only the package's `__init__.py`
and `__main__.py`. Which room may import which is the `rooms` contract in pyproject.toml
(selftests/tree/test_import_contracts.py). No line count: a module is split where its parts
differ (the developers' guide), not packed to meet a number.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "assistant_conformance"
ROOMS = ("contract", "suite", "report", "reference", "proof", "matrix", "audit", "cli")


def test_every_module_lives_in_a_room() -> None:
    loose = [p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert loose == [], f"modules outside the rooms {ROOMS}"
    assert {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"} == set(
        ROOMS
    )
