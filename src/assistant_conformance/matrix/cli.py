"""`assistant-conformance matrix FILE`: the suite against several targets, one grid.

Exit 0 when every target's run completed (the verdicts are the content, not the status), 3 when
one could not be run (its column reads `error`, with the reason; the others still complete), 4
for a bad targets file or option.
"""

from __future__ import annotations

import dataclasses
import shlex
import shutil
import sys
from pathlib import Path

from assistant_conformance.matrix import grid, markdown, page
from assistant_conformance.matrix.runner import ERROR, Column, run_all
from assistant_conformance.matrix.targets import PlanError, load
from assistant_conformance.report import redact
from assistant_conformance.report.catalogue import load as load_catalogue
from assistant_conformance.report.exits import Exit, Parser

README_BLOCK = ("<!-- matrix:begin -->", "<!-- matrix:end -->")


def build_parser(prog: str) -> Parser:
    parser = Parser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", type=Path, help="the targets file (YAML; see examples/)")
    parser.add_argument("--report-dir", type=Path, default=Path("reports/matrix"))
    parser.add_argument("--jobs", type=int, help="targets run at once (default: the file's, or 2)")
    parser.add_argument(
        "--readme", type=Path, help=f"also put the grid between {' and '.join(README_BLOCK)} here"
    )
    return parser


def line(column: Column) -> str:
    if column.status == ERROR:
        return f"  {column.target.name}: error: {column.reason}"
    doc = column.document or {}
    counts = ", ".join(f"{n} {v}" for v, n in doc["totals"].items())
    level = doc["certification"]["level"]
    return f"  {column.target.name}: {level} · {counts} ({column.seconds:.0f} s)"


def replace_block(text: str, block: str) -> str:
    begin, end = README_BLOCK
    head, found, rest = text.partition(begin)
    _, found_end, tail = rest.partition(end)
    if not (found and found_end):
        raise PlanError(f"no {begin} ... {end} block to put the grid in")
    return f"{head}{begin}\n{block}{end}{tail}"


def run(argv: list[str], prog: str = "assistant-conformance matrix") -> int:
    """The matrix; the tokens its runs are given are its secrets (masked in all it writes)."""
    with redact.scope():
        return _run(argv, prog)


def _run(argv: list[str], prog: str) -> int:
    args = build_parser(prog).parse_args(argv)
    try:
        plan = load(args.targets)
        if args.jobs:
            plan = dataclasses.replace(plan, jobs=max(1, args.jobs))
        if args.readme:
            replace_block(args.readme.read_text(encoding="utf-8"), "")  # the block is there
    except (PlanError, OSError) as exc:
        print(f"matrix: {exc}", file=sys.stderr)
        return Exit.USAGE
    out = args.report_dir.resolve()  # the runs go on in folders of their own
    shutil.rmtree(out / "targets", ignore_errors=True)  # no column of an earlier run survives
    out.mkdir(parents=True, exist_ok=True)
    print(f"matrix: {len(plan.targets)} targets, {plan.jobs} at a time, seed {plan.seed} -> {out}")
    columns = run_all(plan, out, on_done=lambda column: print(line(column), flush=True))
    command = shlex.join([*prog.split(), *argv])
    matrix = grid.build(plan, columns, load_catalogue(), command)
    grid.write(matrix, out / "matrix.json")
    (out / "matrix.md").write_text(markdown.render(matrix), encoding="utf-8")
    (out / "index.html").write_text(page.render(matrix), encoding="utf-8")
    if args.readme:
        text = args.readme.read_text(encoding="utf-8")
        grid_md = markdown.render(matrix, heading="")
        args.readme.write_text(replace_block(text, grid_md), encoding="utf-8")
    rows = len(matrix["requirements"])
    print(f"the targets disagree on {matrix['disagreements']} of {rows} requirements")
    print(f"written: {out / 'index.html'}, {out / 'matrix.md'}, {out / 'matrix.json'}")
    return Exit.HARNESS if any(c.status == ERROR for c in columns) else Exit.CONFORMANT
