"""What a matrix writes: the grid of its columns as matrix.json, matrix.md and index.html (and a
README's block), and a column's line on the terminal."""

from __future__ import annotations

from pathlib import Path

from assistant_conformance.contract import catalogue
from assistant_conformance.matrix import grid, markdown, page
from assistant_conformance.matrix.runner import NOT_RUN, Column
from assistant_conformance.matrix.targets import Plan, PlanError
from assistant_conformance.report.exit_codes import Exit

README_BLOCK = ("<!-- matrix:begin -->", "<!-- matrix:end -->")


def column_line(column: Column) -> str:
    if column.status == NOT_RUN:
        return f"  {column.target.name}: error: {column.reason}"
    doc = column.document
    if doc is None:
        return f"  {column.target.name}: no conformance.json ({column.seconds:.0f} s)"
    counts = ", ".join(f"{n} {v}" for v, n in doc.totals.items())
    level = doc.certification.level
    return f"  {column.target.name}: {level} · {counts} ({column.seconds:.0f} s)"


def replace_block(text: str, block: str) -> str:
    begin, end = README_BLOCK
    head, found, rest = text.partition(begin)
    _, found_end, tail = rest.partition(end)
    if not (found and found_end):
        raise PlanError(f"no {begin} ... {end} block to put the grid in")
    return f"{head}{begin}\n{block}{end}{tail}"


def write_outputs(
    plan: Plan, columns: list[Column], out: Path, command: str, readme: Path | None
) -> int:
    """The grid of `columns` into `out` (and README's block); 3 when a column is an error."""
    matrix = grid.build_matrix(plan, columns, catalogue.load(), command)
    grid.write_matrix(matrix, out / "matrix.json")
    (out / "matrix.md").write_text(markdown.matrix_markdown(matrix), encoding="utf-8")
    (out / "index.html").write_text(page.matrix_page(matrix), encoding="utf-8")
    if readme:
        text = readme.read_text(encoding="utf-8")
        readme.write_text(
            replace_block(text, markdown.matrix_markdown(matrix, heading="")), "utf-8"
        )
    rows = len(matrix["requirements"])
    print(f"the targets disagree on {matrix['disagreements']} of {rows} requirements")
    print(f"written: {out / 'index.html'}, {out / 'matrix.md'}, {out / 'matrix.json'}")
    return Exit.HARNESS if any(c.status == NOT_RUN for c in columns) else Exit.CONFORMANT
