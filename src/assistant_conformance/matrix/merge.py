"""`assistant-conformance matrix merge DIR... [--report-dir OUT] [--readme FILE]`: the grid from
the report folders of columns run apart (`matrix FILE --only NAME`, a CI job each). Each DIR is a
matrix report folder (its `targets/*/column.json`) or one target's folder. Refused in one line,
exit 4: a folder with no column, columns of another seed, depth or selection, a target given
twice. Exit 3 when a column is an error, else 0 (as `matrix FILE`).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

from assistant_conformance.matrix import output
from assistant_conformance.matrix.runner import COLUMN_FILE, Column, load_column
from assistant_conformance.matrix.targets import Plan
from assistant_conformance.report.exits import Exit, Parser


class MatrixMergeError(ValueError):
    """Folders that do not make one matrix; the message is one line."""


def main(argv: list[str], prog: str) -> int:
    parser = Parser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", type=Path, nargs="+")
    parser.add_argument("--report-dir", type=Path, default=Path("reports/matrix"))
    parser.add_argument("--readme", type=Path)
    args = parser.parse_args(argv)
    out = args.report_dir.resolve()
    try:
        plan, columns = gather(args.folders, out)
    except (MatrixMergeError, ValueError, OSError) as exc:
        print(f"matrix merge: {exc}", file=sys.stderr)
        return Exit.USAGE
    print(f"matrix merge: {len(columns)} columns -> {out}")
    for column in columns:
        print(output.column_line(column))
    return output.write_outputs(plan, columns, out, " ".join([*prog.split(), *argv]), args.readme)


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
    plan = Plan(tuple(c.target for c in columns), first["seed"], first["examples"],
                requirements=tuple(first["requirements"]))  # fmt: skip
    return plan, columns


def _columns(folder: Path) -> list[Path]:
    found = [folder / COLUMN_FILE] if (folder / COLUMN_FILE).is_file() else []
    found += sorted(folder.glob(f"targets/*/{COLUMN_FILE}"))
    if not found:
        raise MatrixMergeError(f"{folder}: no {COLUMN_FILE}: not the folder of a matrix column")
    return found
