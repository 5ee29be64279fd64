"""The checks and the self-tests laid out like the house:

- tests/ (the product's checks) holds two groups: scenario/ (one module per interface section)
  and property/ (the schemathesis layer), nothing beside them but its `__init__`;
- selftests/ holds folders named after the rooms they test (and tree/ for rules over the whole
  tree, support/ for their helpers), none with more than MAX_TESTS test files, only conftest.py
  beside them;
- no docstring or comment of src/, tests/ or selftests/ names an issue by number: a file says
  what it holds, not which work made it.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SELFTESTS = ROOT / "selftests"
MAX_TESTS = 15
ROOMS = {"contract", "suite", "report", "reference", "proof", "matrix", "audit", "cli"}
ISSUE = re.compile(r"(?<![\w&])#\d{1,3}\b(?!-)|\bissues? \d+")


def folders(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_dir() and "__pycache__" not in p.parts
                  and "node_modules" not in p.parts)  # fmt: skip


def test_the_checks_are_scenario_and_property() -> None:
    tests = ROOT / "tests"
    beside = {p.name for p in tests.iterdir() if p.name != "__pycache__"}
    assert beside == {"__init__.py", "scenario", "property"}
    assert sorted(p.name for p in (tests / "property").glob("test_*.py")) == [
        "test_property.py", "test_stateful.py"
    ]  # fmt: skip


def test_the_selftests_mirror_the_rooms() -> None:
    top = {p.name for p in SELFTESTS.iterdir() if p.name != "__pycache__"}
    assert top == {"conftest.py", "tree", "support", *ROOMS}


@pytest.mark.parametrize("folder", folders(SELFTESTS), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_folder_holds_too_many_test_files(folder: Path) -> None:
    found = list(folder.glob("test_*.py"))
    assert len(found) <= MAX_TESTS, f"{len(found)} test files: split the folder"


def issue_numbers(text: str) -> list[str]:
    """Issue numbers in the docstrings and comments of Python source `text`."""
    said = [t.string for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type == tokenize.COMMENT]  # fmt: skip
    said += [
        doc
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and (doc := ast.get_docstring(node))
    ]
    return [found for words in said for found in ISSUE.findall(words)]


@pytest.mark.parametrize(
    "path",
    [p for d in ("src", "tests", "selftests") for p in sorted((ROOT / d).rglob("*.py"))],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_no_file_names_an_issue_by_number(path: Path) -> None:
    assert issue_numbers(path.read_text(encoding="utf-8")) == []


def test_an_issue_number_is_seen() -> None:
    """Not vacuous; and an anchor (`interface.md#44-threads`), a colour, and what code writes are
    no issue."""
    said = '"""#35: the audit (issue 36, classes 1 to 3)"""\nx = 1  # as #27 did\n'
    assert sorted(issue_numbers(said)) == ["#27", "#35", "issue 36"]
    assert issue_numbers('"""spec/interface.md#44-threads-and-runs, color #1a2b3c"""') == []
    assert issue_numbers("events = ['#1 values']  # a place in a list, in code") == []
