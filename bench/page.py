"""The benchmark page's side-by-side table: the suite against `st run` and against its floors, each
row a ratio measured in one run (a ratio survives a slower or busier machine better than seconds).

bench/run.py computes the rows (`Row`) and writes the table (`table`) at the head of
docs/benchmark-results.md; `parse` reads it back, and fails on a page whose table is malformed: a
row missing, a ratio that is not a number, a verdict that does not follow from its ratio and goal,
or no CPU named (selftests/report/test_benchmark_page.py reads the published page with it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HEADING = "## Side by side: ratios measured in one run"
CPU_LINE = re.compile(r"^CPU: (?P<cpu>\S.*?)[,;] (?P<cores>\d+) cores\b", re.MULTILINE)
COLUMNS = ("comparison", "ratio", "seconds and counts", "goal", "met", "the cores allow")
NOT_MEASURED = "not measured"
# The rows, in their order: key -> what is compared (the first cell) and the goal:
# at least (">=") or at most ("<=") this ratio; None: shown, no goal.
ROWS: dict[str, tuple[str, tuple[str, float] | None]] = {
    "st-rate": ("requests/s: the property layer / `st run`", (">=", 3.0)),
    "st-cpu": ("client CPU per request: the property layer / `st run`", None),
    "st-wall": ("wall: the property layer / `st run`", None),
    "spread": ("wall: the default run / the same work in one process", ("<=", 0.55)),
    "floor": ("wall: the default run / its floor (start-up + requests at the raw rate)", None),
    "far": ("wall: a 120 ms target / its chain floor (longest chain x round trip)", ("<=", 1.3)),
    "deep": ("wall: --examples 1000 / the same in one process", ("<=", 0.5)),
}


@dataclass(frozen=True)
class Row:
    key: str
    ratio: float | None  # None: not measured in this run (`measured` says why)
    measured: str  # the seconds (and counts) beside the ratio, or why it was not measured
    # The best ratio this run's own CPU seconds allow on the machine's cores (every core busy all
    # the time, nothing else waited for): a goal beyond it is out of this machine's reach at the
    # CPU the run spent, whatever the scheduling. None: not bounded so (no goal, not measured).
    bound: float | None = None

    @property
    def what(self) -> str:
        return ROWS[self.key][0]

    @property
    def goal(self) -> tuple[str, float] | None:
        return ROWS[self.key][1]

    @property
    def met(self) -> bool | None:
        if self.ratio is None or self.goal is None:
            return None
        sense, bound = self.goal
        return self.ratio >= bound if sense == ">=" else self.ratio <= bound


def goal_text(goal: tuple[str, float] | None) -> str:
    if goal is None:
        return "-"
    sense, bound = goal
    return f"{'at least' if sense == '>=' else 'at most'} {bound:g}x"


def met_text(met: bool | None) -> str:
    return "-" if met is None else ("met" if met else "not met")


def bound_text(row: Row) -> str:
    return "-" if row.bound is None else f"{row.bound:.2f}x"


def ratio_text(row: Row) -> str:
    """The ratio to two places, or more where two would read on the other side of its goal
    (0.5006 is not within "at most 0.5x": it reads 0.501x, not 0.50x)."""
    if row.ratio is None:
        return "-"
    for places in (2, 3, 4):
        shown = f"{row.ratio:.{places}f}"
        if Row(row.key, float(shown), row.measured).met == row.met:
            return f"{shown}x"
    return f"{row.ratio}x"


def table(rows: list[Row]) -> list[str]:
    """The table's Markdown lines (the heading and a blank line first)."""
    out = [HEADING, "", "| " + " | ".join(COLUMNS) + " |", "|---|---:|---|---|---|---:|"]
    for row in rows:
        goal, met = goal_text(row.goal), met_text(row.met)
        cells = (row.what, ratio_text(row), row.measured, goal, met, bound_text(row))
        out.append("| " + " | ".join(cell.replace("|", "/") for cell in cells) + " |")
    return [*out, ""]


class MalformedPage(ValueError):
    """The page's side-by-side table cannot be read; the message says where."""


def parse(text: str) -> tuple[str, list[Row]]:
    """The CPU the page names and the rows of its side-by-side table, every row of ROWS in order;
    MalformedPage where anything is missing or does not follow."""
    cpu = CPU_LINE.search(text)
    if cpu is None:
        raise MalformedPage("no line 'CPU: <model>, <N> cores' names the machine")
    if HEADING not in text:
        raise MalformedPage(f"no heading {HEADING!r}")
    lines = text.split(HEADING, 1)[1].strip("\n").splitlines()
    body = []
    for line in lines:
        if not line.startswith("|"):
            break
        body.append(line)
    if len(body) < 2 or _cells(body[0]) != list(COLUMNS):
        raise MalformedPage(f"the table's header is not {' | '.join(COLUMNS)}")
    whats = {what: key for key, (what, _) in ROWS.items()}
    rows = []
    for line in body[2:]:
        cells = _cells(line)
        if len(cells) != len(COLUMNS):
            raise MalformedPage(f"{len(cells)} cells, not {len(COLUMNS)}: {line}")
        what, ratio_cell, measured, goal, met, bound = cells
        if what not in whats:
            raise MalformedPage(f"a row of no known comparison: {what!r}")
        row = Row(whats[what], _ratio(ratio_cell, line), measured, _ratio(bound, line))
        if goal != goal_text(row.goal):
            raise MalformedPage(f"goal {goal!r}, not {goal_text(row.goal)!r}: {line}")
        if met != met_text(row.met):
            raise MalformedPage(f"{met!r} does not follow from {ratio_cell} and {goal}: {line}")
        if row.ratio is None and not measured.startswith(NOT_MEASURED):
            raise MalformedPage(f"no ratio and no reason it was not measured: {line}")
        if row.ratio is not None and not re.search(r"\d s\b", measured):
            raise MalformedPage(f"a ratio without the seconds beside it: {line}")
        rows.append(row)
    if [row.key for row in rows] != list(ROWS):
        raise MalformedPage(f"rows {[r.key for r in rows]}, not {list(ROWS)}")
    return cpu["cpu"], rows


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _ratio(cell: str, line: str) -> float | None:
    if cell == "-":
        return None
    found = re.fullmatch(r"(\d+(?:\.\d+)?)x", cell)
    if found is None:
        raise MalformedPage(f"ratio {cell!r} is not a number followed by x: {line}")
    return float(found[1])
