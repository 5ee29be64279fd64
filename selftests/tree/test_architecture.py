"""The package is eight rooms (docs/architecture.md): beside them only the package's `__init__.py`
and `__main__.py`; and no module is longer than MAX_LINES. Which room may import which is the
`rooms` contract in pyproject.toml (selftests/tree/test_import_contracts.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "assistant_conformance"
ROOMS = ("contract", "suite", "report", "reference", "proof", "matrix", "audit", "cli")
MAX_LINES = 320  # the style notes' ~300


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_every_module_lives_in_a_room() -> None:
    loose = [p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert loose == [], f"modules outside the rooms {ROOMS}"
    assert {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"} == set(
        ROOMS
    )


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_are_short(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{lines} lines: split it"
