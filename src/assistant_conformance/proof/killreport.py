"""The kill-rate table as written: killtable.md, killtable.json and the terminal's table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assistant_conformance.proof.killtable import Outcome

MUTANT = "mutant"


def shown(verdicts: dict[str, str]) -> str:
    return ", ".join(f"{rid} {v}" for rid, v in sorted(verdicts.items())) or "none"


def rows(outcomes: list[Outcome]) -> list[dict[str, str]]:
    return [
        {
            "case": o.case.name,
            "kind": o.case.kind,
            "expected": shown(o.case.wanted()) if o.case.kind == MUTANT else "no finding",
            "observed": o.problem or shown(o.observed),
            "result": o.result,
            "seconds": f"{o.seconds:.1f}",
            "peak MiB": "-" if o.peak_mib is None else f"{o.peak_mib:.0f}",
        }
        for o in outcomes
    ]


def totals(outcomes: list[Outcome]) -> dict[str, str]:
    mutants = [o for o in outcomes if o.case.kind == MUTANT]
    others = [o for o in outcomes if o.case.kind != MUTANT]
    killed = sum(o.ok for o in mutants)
    passed = sum(o.ok for o in others)
    return {
        "killed": f"{killed}/{len(mutants)} mutants killed",
        "passed": f"{passed}/{len(others)} variants passed",
    }


COLUMNS = ("case", "kind", "expected", "observed", "result", "seconds", "peak MiB")


def markdown(outcomes: list[Outcome], wall: float, jobs: int) -> str:
    lines = ["# Kill-rate table", "", "| " + " | ".join(COLUMNS) + " |"]
    lines.append("|" + "---|" * len(COLUMNS))
    lines += ["| " + " | ".join(row[c] for c in COLUMNS) + " |" for row in rows(outcomes)]
    done = totals(outcomes)
    lines += ["", f"{done['killed']}; {done['passed']}; {wall:.0f} s with {jobs} jobs.", ""]
    return "\n".join(lines)


def text(outcomes: list[Outcome]) -> str:
    table = rows(outcomes)
    widths = {c: max(len(c), *(len(r[c]) for r in table)) for c in COLUMNS}
    lines = ["  ".join(c.ljust(widths[c]) for c in COLUMNS)]
    lines += ["  ".join(r[c].ljust(widths[c]) for c in COLUMNS) for r in table]
    return "\n".join(lines)


def write(outcomes: list[Outcome], report_dir: Path, wall: float, jobs: int) -> None:
    report_dir.mkdir(parents=True, exist_ok=True)
    (report_dir / "killtable.md").write_text(markdown(outcomes, wall, jobs), encoding="utf-8")
    document = {
        "totals": totals(outcomes),
        "wall_seconds": round(wall, 1),
        "jobs": jobs,
        "cases": [
            {**row, "summary": o.case.summary, "pytest_args": list(o.case.pytest_args)}
            for row, o in zip(rows(outcomes), outcomes, strict=True)
        ],
    }
    text_ = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    (report_dir / "killtable.json").write_text(text_, encoding="utf-8")
