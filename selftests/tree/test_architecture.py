"""The package is eight rooms, and imports only go down: cli -> matrix -> proof -> suite -> report
and reference; cli -> audit -> suite; every room -> contract.

- contract/: the OpenAPI document, the requirement catalogue, where the packaged files are;
  imports no room, and every room may import it;
- report/: the result model, verdicts, redaction and every writer; imports only the contract;
- reference/: the server; imports only the contract;
- suite/: what runs inside a user's pytest; imports report and reference (to start it);
- proof/: mutants, variants, kill table; may import everything but the matrix;
- matrix/: the suite against several targets, one grid; starts the proof's local targets, reads
  the reports; may import everything but the command;
- audit/: judging traffic the suite did not send (HAR files, the live proxy); imports the suite
  and report rooms, and only the command imports it;
- cli/: the `assistant-conformance` command (run, matrix); may import everything, and nothing
  imports it. Beside the rooms only the package's `__init__.py` and `__main__.py`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "assistant_conformance"
ROOMS = ("contract", "suite", "report", "reference", "proof", "matrix", "audit", "cli")
MAY_IMPORT = {
    "contract": {"contract"},
    "report": {"report", "contract"},
    "reference": {"reference", "contract"},
    "suite": {"suite", "report", "reference", "contract"},
    "proof": {"proof", "suite", "report", "reference", "contract"},
    "audit": {"audit", "suite", "report", "contract"},
    "matrix": set(ROOMS) - {"cli", "audit"},
    "cli": set(ROOMS),
}
MAX_LINES = 320  # the style notes' ~300


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def imported_rooms(source: str, where: tuple[str, ...]) -> set[str]:
    """The rooms a module at `where` (its path parts in the package) imports from: absolute and
    relative imports, also inside functions."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level:
            base = ["assistant_conformance", *where[: len(where) - node.level]]
            names = [".".join([*base, *([node.module] if node.module else [])])]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "assistant_conformance" and len(parts) > 1 and parts[1] in ROOMS:
                found.add(parts[1])
    return found


def test_every_module_lives_in_a_room() -> None:
    loose = [p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert loose == [], f"modules outside the rooms {ROOMS}"
    assert {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"} == set(
        ROOMS
    )


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_only_go_down(path: Path) -> None:
    room = path.relative_to(PACKAGE).parts[0]
    if room not in ROOMS:
        return
    found = imported_rooms(path.read_text(encoding="utf-8"), path.relative_to(PACKAGE).parts)
    assert found <= MAY_IMPORT[room], f"{room} may import {MAY_IMPORT[room]}"


@pytest.mark.parametrize(
    "source",
    [
        "from assistant_conformance.suite import findings",
        "from ..suite.findings import expect",
        "def late():\n    import assistant_conformance.proof.killtable",
    ],
)
def test_an_upward_import_is_seen(source: str) -> None:
    """The rule is not vacuous: the report room importing upward, in any spelling, is found; and
    the contract room importing any other room."""
    assert imported_rooms(source, ("report", "model.py")) - MAY_IMPORT["report"]
    assert imported_rooms(source, ("contract", "files.py")) - MAY_IMPORT["contract"]


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_are_short(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{lines} lines: split it"
