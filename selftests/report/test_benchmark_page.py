"""The benchmark page's side-by-side table (docs/benchmark-results.md, written by
`bench/run.py --publish`) reads back: every comparison in its row, each ratio a number with the
seconds beside it, each verdict following from its ratio and goal, and the machine's CPU named.
Nothing here is timed: the figures are whatever the machine that wrote the page measured."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import page  # noqa: E402

PUBLISHED = ROOT / "docs" / "benchmark-results.md"


def test_the_published_page_reads_back() -> None:
    cpu, rows = page.parse(PUBLISHED.read_text(encoding="utf-8"))
    assert cpu.strip()
    assert [row.key for row in rows] == list(page.ROWS)


def test_rows_written_are_read_back_alike() -> None:
    rows = [page.Row(key, 0.5 + i, f"{i}.0 s vs 1.0 s") for i, key in enumerate(page.ROWS)]
    rows[-1] = page.Row(rows[-1].key, None, f"{page.NOT_MEASURED} (--quick)")
    text = "\n".join(["CPU: Some CPU, 2 cores; Python 3.11", "", *page.table(rows)])
    cpu, back = page.parse(text)
    assert cpu == "Some CPU"
    assert back == rows
    assert [row.met for row in back] == [row.met for row in rows]


def test_a_ratio_just_past_its_goal_reads_past_it() -> None:
    """0.5006 against "at most 0.5x" is not met: written 0.50x, the page would not read back."""
    rows = [page.Row(key, 1.0, "1.0 s vs 1.0 s") for key in page.ROWS]
    rows[-1] = page.Row("deep", 0.5006, "491.3 s vs 981.4 s")
    text = "\n".join(["CPU: Some CPU, 2 cores; Python 3.11", "", *page.table(rows)])
    assert "| 0.501x |" in text
    assert page.parse(text)[1][-1].met is False


def _mutations() -> dict[str, tuple[str, str]]:
    """A part of the page -> what a malformed page has in its place."""
    rows = [page.Row(key, 1.0, "1.0 s vs 1.0 s") for key in page.ROWS]
    far = page.table(rows)[4 + list(page.ROWS).index("far")]
    return {
        "no CPU": ("CPU: Some CPU, 2 cores", "Some CPU, 2 cores"),
        "a row missing": (far + "\n", ""),
        "a ratio not a number": ("| 1.00x |", "| fast |"),
        "a verdict against its ratio": ("| at least 3x | not met |", "| at least 3x | met |"),
        "a goal changed": ("| at most 1.3x |", "| at most 2x |"),
        "no seconds beside a ratio": ("| 1.0 s vs 1.0 s |", "| about the same |"),
        "a cell short": ("| 1.0 s vs 1.0 s | - | - |", "| 1.0 s vs 1.0 s | - |"),
        "another header": ("| comparison | ratio |", "| what | ratio |"),
    }


@pytest.mark.parametrize("mutation", list(_mutations()))
def test_a_malformed_page_does_not_read(mutation: str) -> None:
    rows = [page.Row(key, 1.0, "1.0 s vs 1.0 s") for key in page.ROWS]
    text = "\n".join(["CPU: Some CPU, 2 cores; Python 3.11", "", *page.table(rows)])
    page.parse(text)  # the page before it is broken reads
    part, broken = _mutations()[mutation]
    assert part in text
    with pytest.raises(page.MalformedPage):
        page.parse(text.replace(part, broken, 1))
