"""Names that say one thing, in src/:

- no public name (a function, a class, a constant at a module's top) is defined by two modules:
  a reader who meets `load`, `Entry` or `settle` knows which one it is. A name imported from the
  module that defines it is no definition (a re-export: `from m import X`, or `X = m.X`);
- but for ROLES: names each module of a kind defines as its part of a protocol that calls it by
  that name (so they mean the same thing in each: a command's `main`, a reference module's
  `router`), and pytest's hooks (`pytest_*`);
- no import of src/, tests/ or selftests/ renames a name of the project's own
  (`from assistant_conformance.x import a as b`, `from . import m as n`): a name reads the same
  wherever it is used.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "assistant_conformance"
ROLES = {
    "main": "a command's entry point; a verb's handler (its subparser's `func`)",
    "add_verb": "a verb's subparser, added to the command's parser (cli/command.py calls each)",
    "parser": "a command's argument parser",
    "router": "a reference module's routes (reference/app.py mounts each)",
    "on_startup": "a reference module's start (reference/app.py calls each)",
    "on_shutdown": "a reference module's end (reference/app.py calls each)",
    "REGISTRY": "a proof module's cases (the mutants' registry merges each)",
}


def defined(tree: ast.Module) -> list[str]:
    """The public names a module defines at its top (re-exports left out)."""
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in target.elts if isinstance(target, ast.Tuple) else [target]:
                    reexport = isinstance(node.value, ast.Attribute) and isinstance(
                        name, ast.Name
                    ) and node.value.attr == name.id  # fmt: skip
                    if isinstance(name, ast.Name) and not reexport:
                        names.append(name.id)
    return [n for n in names if not n.startswith("_") and not n.startswith("pytest_")]


def clashes(modules: dict[str, str]) -> dict[str, list[str]]:
    """Each public name two or more modules (`path: source`) define, but the roles."""
    where: dict[str, set[str]] = defaultdict(set)
    for path, source in modules.items():
        for name in defined(ast.parse(source)):
            where[name].add(path)
    return {n: sorted(p) for n, p in where.items() if len(p) > 1 and n not in ROLES}


def renamed(source: str) -> list[str]:
    """Imports in `source` that rename a name of the project's own."""
    found = []
    for node in ast.walk(ast.parse(source)):
        own = isinstance(node, ast.ImportFrom) and (
            node.level or (node.module or "").startswith("assistant_conformance")
        )
        if own or isinstance(node, ast.Import):
            for alias in node.names:  # type: ignore[attr-defined]
                project = own or alias.name.startswith("assistant_conformance")
                if project and alias.asname and alias.asname != alias.name.rpartition(".")[2]:
                    found.append(f"line {node.lineno}: {alias.name} as {alias.asname}")
    return found


def sources() -> dict[str, str]:
    return {
        str(p.relative_to(PACKAGE)): p.read_text(encoding="utf-8")
        for p in sorted(PACKAGE.rglob("*.py"))
    }


def test_no_two_modules_define_one_name() -> None:
    assert clashes(sources()) == {}


def test_no_import_renames_the_projects_own_names() -> None:
    checked = [p for d in ("src", "tests", "selftests") for p in sorted((ROOT / d).rglob("*.py"))]
    found = {
        str(path.relative_to(ROOT)): said
        for path in checked
        if (said := renamed(path.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_the_rules_see_what_they_forbid() -> None:
    """Not vacuous: two `settle`s clash, a re-export and a role do not; a renaming import."""
    modules = {
        "a.py": "def settle(x): ...\nmain = 1\nCheck = checks.Check\nSHAPE, ROBUST = 'a', 'b'",
        "b.py": "class settle: ...\ndef main(): ...\nfrom a import SHAPE\nCheck = dict",
        "c.py": "ROBUST = 'c'\ndef pytest_configure(config): ...\n_private = 1",
        "d.py": "def pytest_configure(config): ...\n_private = 2",
    }
    assert clashes(modules) == {"settle": ["a.py", "b.py"], "ROBUST": ["a.py", "c.py"]}
    said = renamed(
        "from assistant_conformance.suite import safety as ledger_module\n"
        "from . import _knowledge_pipeline as pipeline\nimport httpx as h\n"
        "from assistant_conformance.suite.http import trail\n"
    )
    assert [line.split(": ")[1] for line in said] == [
        "safety as ledger_module", "_knowledge_pipeline as pipeline"
    ]  # fmt: skip
