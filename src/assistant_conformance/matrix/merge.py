"""The grid from the report folders of matrix columns run apart (`matrix FILE --only NAME`, a CI
job each): `gather` takes each column's folder into one matrix report folder
(`assistant-conformance matrix merge`, cli/matrix_merge.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from assistant_conformance.matrix.runner import COLUMN_FILE, Column, load_column
from assistant_conformance.matrix.targets import Plan


class MatrixMergeError(ValueError):
    """Folders that do not make one matrix; the message is one line."""


def gather(folders: list[Path], out: Path) -> tuple[Plan, list[Column]]:
    found = [p.parent for f in folders for p in _columns(f)]
    plans: list[dict[str, Any]] = []
    columns: list[Column] = []
    for folder in found:
        ran_with, column = load_column(folder)
        if plans and ran_with != plans[0]:
            raise MatrixMergeError(
                f"{folder}: run with {ran_with}, another seed, depth or selection "
                f"than {found[0]} ({plans[0]})"
            )
        if any(c.target.name == column.target.name for c in columns):
            raise MatrixMergeError(f"target {column.target.name} given twice (again in {folder})")
        plans.append(ran_with)
        columns.append(column)
        place = out / "targets" / column.target.name
        if folder.resolve() != place:
            shutil.rmtree(place, ignore_errors=True)
            shutil.copytree(folder, place)
    first = plans[0]
    plan = Plan(
        tuple(c.target for c in columns),
        first["seed"],
        first["examples"],
        requirements=tuple(first["requirements"]),
    )
    return plan, columns


def _columns(folder: Path) -> list[Path]:
    found = [folder / COLUMN_FILE] if (folder / COLUMN_FILE).is_file() else []
    found += sorted(folder.glob(f"targets/*/{COLUMN_FILE}"))
    if not found:
        raise MatrixMergeError(f"{folder}: no {COLUMN_FILE}: not the folder of a matrix column")
    return found
