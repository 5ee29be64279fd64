"""What a matrix writes: the grid of its columns as matrix.json, matrix.md and index.html (and a
README's block), and a column's line on the terminal."""

from __future__ import annotations

from pathlib import Path

from assistant_conformance.contract.catalogue import load as load_catalogue
from assistant_conformance.matrix import grid, markdown, page
from assistant_conformance.matrix.runner import ERROR, Column
from assistant_conformance.matrix.targets import Plan, PlanError
from assistant_conformance.report.exits import Exit

README_BLOCK = ("<!-- matrix:begin -->", "<!-- matrix:end -->")


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


def write(plan: Plan, columns: list[Column], out: Path, command: str, readme: Path | None) -> int:
    """The grid of `columns` into `out` (and README's block); 3 when a column is an error."""
    matrix = grid.build(plan, columns, load_catalogue(), command)
    grid.write(matrix, out / "matrix.json")
    (out / "matrix.md").write_text(markdown.render(matrix), encoding="utf-8")
    (out / "index.html").write_text(page.render(matrix), encoding="utf-8")
    if readme:
        text = readme.read_text(encoding="utf-8")
        readme.write_text(replace_block(text, markdown.render(matrix, heading="")), "utf-8")
    rows = len(matrix["requirements"])
    print(f"the targets disagree on {matrix['disagreements']} of {rows} requirements")
    print(f"written: {out / 'index.html'}, {out / 'matrix.md'}, {out / 'matrix.json'}")
    return Exit.HARNESS if any(c.status == ERROR for c in columns) else Exit.CONFORMANT
