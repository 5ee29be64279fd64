"""`assistant-conformance matrix merge DIR... [--report-dir OUT] [--readme FILE]`: the grid from
the report folders of columns run apart (`matrix FILE --only NAME`, a CI job each). Each DIR is a
matrix report folder (its `targets/*/column.json`) or one target's folder. Refused in one line,
exit 4: a folder with no column, columns of another seed, depth or selection, a target given
twice. Exit 3 when a column is an error, else 0 (as `matrix FILE`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from assistant_conformance.matrix import output
from assistant_conformance.matrix.merge import MatrixMergeError, gather
from assistant_conformance.report import redact
from assistant_conformance.report.exit_codes import Exit


def add_verb(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = verbs.add_parser("matrix merge", description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", type=Path, nargs="+")
    parser.add_argument("--report-dir", type=Path, default=Path("reports/matrix"))
    parser.add_argument("--readme", type=Path)
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    """The grid; the matrix's secrets are masked in all it writes, as in `matrix FILE`."""
    with redact.scope():
        out = args.report_dir.resolve()
        try:
            plan, columns = gather(args.folders, out)
        except (MatrixMergeError, ValueError, OSError) as exc:
            print(f"matrix merge: {exc}", file=sys.stderr)
            return Exit.USAGE
        print(f"matrix merge: {len(columns)} columns -> {out}")
        for column in columns:
            print(output.column_line(column))
        command = " ".join([*args.prog.split(), *args.words])
        return output.write_outputs(plan, columns, out, command, args.readme)
