"""The repository holds only what its authors wrote: no tracked file lies in a virtualenv (a folder
named `.venv*` or `venv*`, or one holding `pyvenv.cfg`), in `site-packages` or `__pycache__`, or
is a compiled object (.so, .pyc, .pyd, .dylib, .o) or a built package (a wheel, an sdist); none
is over 1 MB, and all of them together stay under 8 MB. Whatever needs a second environment
creates it in the user's cache when it runs (proof/foreign.py).

Read from git's index (`git ls-files`): skipped outside a git checkout (an installed wheel).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parents[2]
LARGEST_FILE = 1024 * 1024
LARGEST_TREE = 8 * 1024 * 1024
VENV = re.compile(r"^\.?venv")  # .venv, .venv-langgraph, venv, venv311
FOREIGN_FOLDERS = frozenset({"site-packages", "__pycache__"})
COMPILED = (".so", ".pyc", ".pyd", ".dylib", ".o")
BUILT = (".whl", ".tar.gz")  # a wheel, an sdist


def problems(files: list[tuple[str, int]]) -> list[str]:
    """What breaks the rules among tracked `files` (path, size in bytes): one line each."""
    venvs = {str(PurePosixPath(path).parent) for path, _ in files if path.endswith("pyvenv.cfg")}
    found = []
    for path, size in files:
        folders = PurePosixPath(path).parts[:-1]
        if any(VENV.match(part) for part in folders) or any(
            path.startswith(f"{venv}/") for venv in venvs
        ):
            found.append(f"{path}: inside a virtualenv")
        elif FOREIGN_FOLDERS & set(folders):
            found.append(f"{path}: inside {sorted(FOREIGN_FOLDERS & set(folders))[0]}")
        elif path.endswith(COMPILED):
            found.append(f"{path}: a compiled object")
        elif path.endswith(BUILT):
            found.append(f"{path}: a built package")
        if size > LARGEST_FILE:
            found.append(f"{path}: {size} bytes, over {LARGEST_FILE}")
    total = sum(size for _, size in files)
    if total > LARGEST_TREE:
        found.append(f"the tracked tree is {total} bytes, over {LARGEST_TREE}")
    return found


def from_ls_tree(listing: str) -> list[tuple[str, int]]:
    """`git ls-tree -r -l COMMIT`'s lines as (path, size): a commit's tree, checked alike."""
    files = []
    for line in listing.splitlines():
        meta, _, path = line.partition("\t")
        size = meta.split()[3]
        files.append((path, int(size) if size.isdigit() else 0))
    return files


def tracked(root: Path) -> list[tuple[str, int]]:
    """Every file in git's index, with the size of its staged content."""
    listing = git(root, "ls-files", "-s", "-z").decode()
    entries = [line.split("\t", 1) for line in listing.split("\0") if line]
    blobs = "\n".join(meta.split()[1] for meta, _ in entries) + "\n"
    sizes = git(root, "cat-file", "--batch-check=%(objectsize)", given=blobs.encode()).split()
    return [(path, int(size)) for (_, path), size in zip(entries, sizes, strict=True)]


def git(root: Path, *args: str, given: bytes | None = None) -> bytes:
    done = subprocess.run(["git", *args], cwd=root, input=given, capture_output=True, check=True)
    return done.stdout


def checkout() -> Path:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout (an installed package): no tracked files to check")
    return ROOT


def test_only_what_its_authors_wrote_is_tracked() -> None:
    assert problems(tracked(checkout())) == []


def test_a_tracked_virtualenv_is_seen() -> None:
    """Not vacuous: what the commit before its removal tracked (.venv-langgraph/), in small."""
    files = [
        ("README.md", 70_000),
        (".venv-langgraph/pyvenv.cfg", 300),
        ("env/pyvenv.cfg", 300),
        ("env/bin/python", 10),
        ("lib/site-packages/x/__init__.py", 10),
        ("src/__pycache__/m.cpython-311.pyc", 10),
        ("native/_speedups.so", 10),
        ("dist/pkg-1.0-py3-none-any.whl", 10),
        ("data/big.json", 2 * LARGEST_FILE),
        ("many.bin", LARGEST_TREE),
    ]
    said = problems(files)
    for path in (".venv-langgraph/pyvenv.cfg", "env/bin/python", "site-packages", "__pycache__",
                 "compiled object", "built package", "data/big.json", "tracked tree"):  # fmt: skip
        assert any(path in line for line in said), (path, said)
    assert not any(line.startswith("README.md") for line in said)
