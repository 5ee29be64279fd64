"""The suite room's house (src/assistant_conformance/suite/): its rooms, their order, and one place
for each thing.

- the suite is rooms from the ground up, in the order of the `floors` contract in pyproject.toml
  (lint-imports checks that a module imports only its own room and rooms below it, and that the
  doors import nothing that judges: selftests/tree/test_import_contracts.py); each room's
  `__init__` says what it holds and, in a line `May import: ...`, the rooms below it; no room
  holds more than MAX_MODULES modules; beside the rooms only plugin.py, fixtures.py and the
  package's `__init__`;
- a requirement is named as a literal only where it is judged: the scenario flows (flows/), the
  judging modules that charge (judging/schemathesis_charges.py, judging/answer_charges.py), beside
  tests/, spec/ and the proof's mutants;
- schemathesis' internals are used in one file (property/compat.py);
- the import graph of src/ has no circle, counting the package each imported module lives in;
- no run state lives at module level: no `global`, no module-level value changed by a function,
  and a thread the suite starts runs in its starter's context (its record, its secrets), or in
  an empty one it names (`contextvars.Context()`: a run's follower, which records nothing);
- a hook of pytest or pytest-xdist is a method of a plugin object registered at configure: only
  plugin.py holds hooks at a module's top (those pytest calls before configure or for the whole
  process).
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import _pytest.hookspec
import pytest
import xdist.newhooks

from assistant_conformance.contract.catalogue import load

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "assistant_conformance"
SUITE = PACKAGE / "suite"
TESTS = Path(__file__).resolve().parents[2] / "tests"
TOP = frozenset({"__init__.py", "plugin.py", "fixtures.py"})  # the pytest face, over every room
MAX_MODULES = 13  # http/: 13 since the running test and the runs in flight are two modules
JUDGES = ("judging/schemathesis_charges.py", "judging/answer_charges.py", "flows/")
INTERNALS = re.compile(
    r"_hypothesis_internal|\._override\b|generation\.hypothesis|schemathesis\.engine|"
    r"SameHostRedirectsSession|is_likely_root_transition|add_coverage|ApiOperationMark|"
    r"\.operation_label\s*=|hypothesis\.internal"
)
MUTATORS = frozenset({"append", "add", "update", "extend", "setdefault", "pop", "clear", "remove"})


def floors() -> dict[str, int]:
    """Each room of the suite and its floor (1: the ground), from the `floors` contract's layers
    (the top one, plugin.py and fixtures.py, is no room)."""
    with (SRC.parent / "pyproject.toml").open("rb") as config:
        contracts = tomllib.load(config)["tool"]["importlinter"]["contracts"]
    (layers,) = [c["layers"] for c in contracts if c["id"] == "floors"]
    return {
        room.strip(): floor
        for floor, layer in enumerate(reversed(layers[1:]), start=1)
        for room in layer.split("|")
    }


FLOORS = floors()


def suite_modules() -> list[Path]:
    return sorted(SUITE.rglob("*.py"))


def rel(path: Path) -> str:
    return path.relative_to(SUITE).as_posix()


def string_literals(tree: ast.AST) -> list[str]:
    """Every string constant but docstrings (documentation names requirements freely)."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        if id(node) not in docstrings
    ]


@pytest.mark.parametrize("path", suite_modules(), ids=rel)
def test_requirements_are_named_only_where_they_are_judged(path: Path) -> None:
    ids = re.compile(r"\b(" + "|".join(map(re.escape, load().requirements)) + r")\b")
    named = {m for s in string_literals(ast.parse(path.read_text())) for m in ids.findall(s)}
    if not rel(path).startswith(JUDGES):
        assert named == set(), f"{rel(path)} names {sorted(named)}: judge in {JUDGES}"


def imports(path: Path) -> set[str]:
    """Absolute names of the package's modules `path` imports (anywhere in it)."""
    parts = path.relative_to(SRC).with_suffix("").parts
    package = parts[:-1]  # a module's package; an __init__'s is its own
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            found |= {module} | {f"{module}.{a.name}" for a in node.names}
    return {name for name in found if name.startswith("assistant_conformance")}


def module_names() -> dict[str, Path]:
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def graph() -> dict[str, set[str]]:
    """Module -> the modules importing it runs: each imported module and its packages."""
    names = module_names()
    edges: dict[str, set[str]] = {}
    for name, path in names.items():
        targets = set()
        for imported in imports(path):
            while imported and imported not in names:
                imported = imported.rpartition(".")[0]  # a name inside a module
            pieces = imported.split(".")
            targets |= {".".join(pieces[:i]) for i in range(2, len(pieces) + 1)}
        edges[name] = targets - {name} - {p for p in targets if name.startswith(p + ".")}
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while (top := stack.pop()) != node:
                component.append(top)
            if component:
                found.append(sorted([node, *component]))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_suite_is_its_rooms() -> None:
    top = {p.name for p in SUITE.iterdir() if p.name != "__pycache__"}
    assert top - TOP - {"pytest.ini"} == set(FLOORS), "beside the rooms: only the pytest face"


@pytest.mark.parametrize("room", sorted(FLOORS))
def test_each_room_says_what_it_holds_and_may_import(room: str) -> None:
    modules = [p for p in (SUITE / room).glob("*.py") if p.name != "__init__.py"]
    assert len(modules) <= MAX_MODULES, f"{room}/ holds {len(modules)} modules: split the room"
    said = ast.get_docstring(ast.parse((SUITE / room / "__init__.py").read_text())) or ""
    for module in modules:
        assert module.name in said, f"{room}/__init__.py does not say what {module.name} holds"
    line = re.search(r"^May import: (.*?)\.$", said, re.MULTILINE)
    assert line, f"{room}/__init__.py has no line 'May import: ...'"
    below = {r for r in FLOORS if FLOORS[r] < FLOORS[room]}
    given = set() if line[1] == "nothing of the suite" else set(line[1].split(", "))
    assert given == below, f"{room} may import {sorted(below)}, its docstring says {sorted(given)}"


def test_the_import_graph_has_no_circle() -> None:
    assert circles(graph()) == []


def test_a_circle_is_seen() -> None:
    """The check is not vacuous: two modules importing each other, and a submodule importing
    what imports its package, are circles."""
    assert circles({"a": {"b"}, "b": {"a"}}) == [["a", "b"]]
    assert circles({"p.m": {"q", "p"}, "q": set(), "p": {"p.n"}, "p.n": {"p.m"}})


@pytest.mark.parametrize(
    "path", [*sorted(PACKAGE.rglob("*.py")), *sorted(TESTS.rglob("*.py"))], ids=str
)
def test_schemathesis_internals_are_used_in_one_file(path: Path) -> None:
    if path == SUITE / "property" / "compat.py":
        return
    used = INTERNALS.findall(path.read_text())
    assert used == [], f"{path.name} uses {used}: put it in suite/property/compat.py"


def module_level_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


@pytest.mark.parametrize("path", [*suite_modules(), *sorted((PACKAGE / "report").rglob("*.py"))],
                         ids=str)  # fmt: skip
def test_no_run_state_at_module_level(path: Path) -> None:
    tree = ast.parse(path.read_text())
    shared = module_level_names(tree)
    changed = set()
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        for node in ast.walk(func):
            if isinstance(node, ast.Global):
                changed |= set(node.names)
            elif isinstance(node, ast.Subscript | ast.Attribute) and isinstance(
                node.ctx, ast.Store
            ):
                if isinstance(node.value, ast.Name) and node.value.id in shared:
                    changed.add(node.value.id)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner, method = node.func.value, node.func.attr
                if isinstance(owner, ast.Name) and owner.id in shared and method in MUTATORS:
                    changed.add(owner.id)
    assert changed == set(), f"module-level state changed at run time: {sorted(changed)}"


HOOKS = frozenset(
    name
    for specs in (_pytest.hookspec, xdist.newhooks)
    for name in dir(specs)
    if name.startswith("pytest_")
)


def module_hooks(tree: ast.Module) -> list[str]:
    """The hooks of pytest and pytest-xdist a module defines at its top."""
    defined = (n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
    return [n.name for n in defined if n.name in HOOKS]


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=str)
def test_hooks_are_plugin_objects_but_the_plugins_own(path: Path) -> None:
    if path != SUITE / "plugin.py":
        hooks = module_hooks(ast.parse(path.read_text()))
        assert hooks == [], f"{path.name}: make {hooks} a plugin object's, registered at configure"


REDACTING_ROOMS = ("suite", "matrix", "report")  # they register and mask secrets


@pytest.mark.parametrize(
    "path", [p for room in REDACTING_ROOMS for p in sorted((PACKAGE / room).rglob("*.py"))], ids=str
)
def test_threads_run_in_their_starters_context(path: Path) -> None:
    source = path.read_text()
    if re.search(r"\bThread\(|ThreadPoolExecutor\(", source):
        said = "copy_context()" in source or "contextvars.Context()" in source
        assert said, f"{path.name} starts a thread without saying its context"


def test_the_rules_see_what_they_forbid(tmp_path: Path) -> None:
    """Not vacuous: a literal requirement ID, module-level state changed by a function, a hook
    at a module's top."""
    assert "THR-STATUS" in string_literals(ast.parse('"""THR-X"""\nx = {"THR-STATUS": 1}'))
    state = tmp_path / "state.py"
    state.write_text("_secrets = {}\n\ndef register(s):\n    _secrets[s] = None\n")
    with pytest.raises(AssertionError, match="_secrets"):
        test_no_run_state_at_module_level(state)
    hooked = tmp_path / "hooked.py"
    hooked.write_text("def pytest_configure(config): ...\ndef pytest_args(): ...\n")
    with pytest.raises(AssertionError, match=r"\['pytest_configure'\]"):
        test_hooks_are_plugin_objects_but_the_plugins_own(hooked)
