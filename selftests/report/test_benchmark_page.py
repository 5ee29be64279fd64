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
    rows = [
        page.Row(key, 0.5 + i, f"{i}.0 s vs 1.0 s", 0.25 + i) for i, key in enumerate(page.ROWS)
    ]
    rows[1] = page.Row(rows[1].key, 1.5, "1.0 s vs 1.0 s")  # no bound: "-"
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
        "a bound not a number": ("| not met | 0.50x |", "| not met | half |"),
        "another header": ("| comparison | ratio |", "| what | ratio |"),
    }


@pytest.mark.parametrize("mutation", list(_mutations()))
def test_a_malformed_page_does_not_read(mutation: str) -> None:
    rows = [page.Row(key, 1.0, "1.0 s vs 1.0 s") for key in page.ROWS]
    rows[0] = page.Row("st-rate", 1.0, "1.0 s vs 1.0 s", 0.5)
    text = "\n".join(["CPU: Some CPU, 2 cores; Python 3.11", "", *page.table(rows)])
    page.parse(text)  # the page before it is broken reads
    part, broken = _mutations()[mutation]
    assert part in text
    with pytest.raises(page.MalformedPage):
        page.parse(text.replace(part, broken, 1))


def test_the_cores_allow_what_the_runs_cpu_leaves_possible() -> None:
    """bench/run.py's bound of each goal from a run's own figures: every core busy all the time."""
    import run  # bench/run.py

    data = {
        "machine": {"nproc": 2},
        "repeat": 3,
        "throughput": {
            "workers": 2,
            "suite": run.side(2000, 14.0, 20.0, 2.0),  # 10 ms client, 1 ms reference a request
            "st": run.side(2000, 13.0, 10.0, 2.0),  # 5 ms client, 1 ms reference
        },
        "layers": {
            "median": {"total": 17.0, "one_process": 28.0, "cpu": 28.0, "one_process_cpu": 25.0},
            "runs": [{"workers": 2, "requests": 4300}],
            "profiled": {},
        },
        "far": {
            "floor": 8.0,
            "delay": 0.12,
            "chain": {"chain": 67, "test": "t"},
            "cases": [{}, {"seconds": 56.0, "workers": 24, "requests": 4800, "client_cpu": 45.0}],
        },
        "deep": {
            "wall": 490.0,
            "workers": 2,
            "requests": 98000,
            "cpu": 900.0,
            "ratio": 0.5,
            "one_process": {"wall": 980.0, "requests": 100000, "cpu": 850.0},
        },
    }
    rows = {row.key: row for row in run.side_by_side(data, {})}
    st_rate = 2000 / 13.0
    assert rows["st-rate"].bound == pytest.approx(2 / 0.011 / st_rate)
    assert "the cores allow 2.2x at `st run`'s own client CPU" in rows["st-rate"].measured
    assert rows["spread"].bound == pytest.approx(0.5)  # 28 s of CPU on 2 cores: 14 s of 28
    assert rows["far"].bound == pytest.approx(3.0)  # 4800 x 0.12 s over 24 workers: 24 s of 8
    assert rows["deep"].bound == pytest.approx(900 / 2 / 980)
    assert rows["st-cpu"].bound is None and rows["floor"].bound is None
    text = "\n".join(["CPU: Some CPU, 2 cores; Python 3.11", "", *page.table(list(rows.values()))])
    assert [row.bound for row in page.parse(text)[1]] == [
        None if row.bound is None else round(row.bound, 2) for row in rows.values()
    ]
