"""The import rules are import-linter contracts in pyproject.toml (`[tool.importlinter]`): the
package's rooms and the suite's floors as layers, the audit's and the doors' forbidden imports,
and a core that imports no pytest (nor pytest-xdist, Allure, pluggy, nor the face's modules).
CI and tox's lint run `lint-imports`; here the tree keeps them, and each contract is shown broken
by an import it forbids, in a copy of the package.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
# One import each contract forbids, appended to a module of the copy: (module, line).
FORBIDDEN = {
    "rooms": ("contract/files.py", "from ..report import model"),
    "audit": ("audit/judge.py", "def late():\n    import assistant_conformance.reference.app"),
    "floors": ("suite/judging/checks.py", "from assistant_conformance.suite.safety import ledger"),
    "doors": ("suite/property/compat.py", "from assistant_conformance.suite.judging import checks"),
    "core": ("suite/evidence/replay.py", "def late():\n    import pytest"),
}


def contracts() -> list[dict[str, Any]]:
    with (ROOT / "pyproject.toml").open("rb") as config:
        found: list[dict[str, Any]] = tomllib.load(config)["tool"]["importlinter"]["contracts"]
    return found


def lint_imports(where: Path, *options: str, path: str | None = None) -> tuple[int, str]:
    env = {**os.environ, **({"PYTHONPATH": path} if path else {})}
    done = subprocess.run(
        [str(LINT_IMPORTS), "--no-logo", *options],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, done.stdout + done.stderr


def test_the_tree_keeps_the_contracts() -> None:
    code, said = lint_imports(ROOT)
    assert code == 0, said


def test_each_contract_sees_what_it_forbids(tmp_path: Path) -> None:
    """Not vacuous: a copy of the package with one forbidden import per contract (one of them
    inside a function) breaks every contract, each naming the importing module."""
    assert {c["id"] for c in contracts()} == set(FORBIDDEN), "a forbidden import per contract"
    package = tmp_path / "src" / "assistant_conformance"
    pristine = ROOT / "src" / "assistant_conformance"
    shutil.copytree(pristine, package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    for module, line in FORBIDDEN.values():
        with (package / module).open("a", encoding="utf-8") as source:
            source.write(f"\n{line}\n")
    code, said = lint_imports(tmp_path, "--no-cache", path=str(tmp_path / "src"))
    assert code == 1, said
    for contract in contracts():
        assert f"{contract['name']} BROKEN" in " ".join(said.split()), said
    for module, _ in FORBIDDEN.values():
        dotted = "assistant_conformance." + module.removesuffix(".py").replace("/", ".")
        assert f"{dotted} ->" in said, (dotted, said)
