"""`assistant-conformance matrix FILE`: the suite against several targets, one grid.

`--only NAME` runs one column (a CI job per target); `matrix merge DIR... [--report-dir OUT]`
builds the grid from the columns' report folders (each holds `targets/NAME/column.json`).

Exit 0 when every target's run completed (the verdicts are the content, not the status), 3 when
one could not be run (its column reads `error`, with the reason; the others still complete), 4
for a bad targets file or option.
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import shutil
import sys
from pathlib import Path

from assistant_conformance.matrix import output
from assistant_conformance.matrix.runner import run_all
from assistant_conformance.matrix.targets import Plan, PlanError, load_plan
from assistant_conformance.report import redact
from assistant_conformance.report.exit_codes import Exit


def add_verb(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = verbs.add_parser("matrix", description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", type=Path, help="the targets file (YAML; see examples/)")
    parser.add_argument("--report-dir", type=Path, default=Path("reports/matrix"))
    parser.add_argument("--jobs", type=int, help="targets run at once (default: the file's, or 2)")
    parser.add_argument(
        "--readme",
        type=Path,
        help=f"also put the grid between {' and '.join(output.README_BLOCK)} here",
    )
    parser.add_argument("--only", action="append", help="run only this target (repeatable)")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    """The matrix; the tokens its runs are given are its secrets (masked in all it writes)."""
    with redact.scope():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    try:
        plan = load_plan(args.targets)
        if args.jobs:
            plan = dataclasses.replace(plan, jobs=max(1, args.jobs))
        if args.readme:
            output.replace_block(args.readme.read_text(encoding="utf-8"), "")  # the block is there
        plan = only(plan, args.only or [])
    except (PlanError, OSError) as exc:
        print(f"matrix: {exc}", file=sys.stderr)
        return Exit.USAGE
    out = args.report_dir.resolve()  # the runs go on in folders of their own
    for target in plan.targets if args.only else []:  # the other columns stay
        shutil.rmtree(out / "targets" / target.name, ignore_errors=True)
    if not args.only:
        shutil.rmtree(out / "targets", ignore_errors=True)  # no column of an earlier run survives
    out.mkdir(parents=True, exist_ok=True)
    print(f"matrix: {len(plan.targets)} targets, {plan.jobs} at a time, seed {plan.seed} -> {out}")
    columns = run_all(
        plan, out, on_done=lambda column: print(output.column_line(column), flush=True)
    )
    command = shlex.join([*args.prog.split(), *args.words])
    return output.write_outputs(plan, columns, out, command, args.readme)


def only(plan: Plan, names: list[str]) -> Plan:
    if not names:
        return plan
    known = [t.name for t in plan.targets]
    if unknown := [n for n in names if n not in known]:
        raise PlanError(f"--only: no target {', '.join(unknown)}; the file has {', '.join(known)}")
    return dataclasses.replace(plan, targets=tuple(t for t in plan.targets if t.name in names))
