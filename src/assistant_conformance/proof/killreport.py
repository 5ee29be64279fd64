"""The kill-rate table's cases and outcomes, and the table as written: killtable.md,
killtable.json and the terminal's table (proof/killtable.py runs the cases)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from assistant_conformance.contract.catalogue import load
from assistant_conformance.proof.mutants._base import Bound

MUTANT, VARIANT = "mutant", "variant"


@dataclass(frozen=True)
class Case:
    name: str
    kind: str  # mutant / variant
    expected: tuple[str, ...]  # mutants: the requirement IDs the run must report
    pytest_args: tuple[str, ...]
    summary: str  # the first line of the class docstring
    lenient: bool = False  # a variant the contract allows SHOULD warnings on (no-validation)
    bound: Bound | None = None  # a hostile mutant's: time, memory and exit status of the run
    kept: tuple[str, ...] = ()  # a mutant's: requirements its run must still pass
    warns: tuple[str, ...] = ()  # a variant's: the SHOULDs it may warn (room the document leaves)
    timed: bool = False  # a variant whose room is in timing (variants/_base.py)

    @property
    def server_args(self) -> list[str]:
        return [f"--{self.kind}", self.name]

    def wanted(self) -> dict[str, str]:
        """Requirement ID -> the verdict the run must give it: fail (a MUST) or warn (a SHOULD)."""
        catalogue = load()
        return {rid: "fail" if catalogue[rid].level == "MUST" else "warn" for rid in self.expected}


@dataclass
class CaseOutcome:
    case: Case
    observed: dict[str, str]  # requirement ID -> fail / warn / error
    seconds: float
    exit_status: int | None
    problem: str = ""  # the run itself broke: no report, a timeout, a server that did not start
    log: str = ""  # the end of the pytest output
    result: str = ""  # killed / survived / inexact / passed / failed
    level: str = ""  # the certification level the run reached
    peak_mib: float | None = None  # the suite process's peak memory (its report says)
    kept: dict[str, str] = field(default_factory=dict)  # the case's kept IDs -> their verdicts
    differing: dict[str, list[str]] = field(default_factory=dict)  # repeated: verdicts per run
    report: Path | None = None  # its conformance.json (of one run)

    @property
    def ok(self) -> bool:
        return self.result in ("killed", "passed")


def shown_verdicts(verdicts: dict[str, str]) -> str:
    return ", ".join(f"{rid} {v}" for rid, v in sorted(verdicts.items())) or "none"


def expected_text(case: Case) -> str:
    """What the case's run must report: a mutant's IDs (and those it keeps passing), a variant's
    SHOULDs it may warn, else no finding."""
    if case.kind == MUTANT:
        kept = "".join(f", {rid} pass" for rid in case.kept)
        return shown_verdicts(case.wanted()) + kept
    if case.warns:
        return "at most " + shown_verdicts(dict.fromkeys(case.warns, "warn"))
    return "no finding"


def differed(differing: dict[str, list[str]]) -> str:
    """The requirements whose verdict differed between repeated runs, each run's verdict."""
    said = "; ".join(f"{rid} {'/'.join(vs)}" for rid, vs in sorted(differing.items()))
    return f"; verdicts differed between runs: {said}" if said else ""


def rows(outcomes: list[CaseOutcome]) -> list[dict[str, str]]:
    return [
        {
            "case": o.case.name,
            "kind": o.case.kind,
            "expected": expected_text(o.case),
            "observed": o.problem
            or shown_verdicts({**o.observed, **o.kept}) + differed(o.differing),
            "result": o.result,
            "seconds": f"{o.seconds:.1f}",
            "peak MiB": "-" if o.peak_mib is None else f"{o.peak_mib:.0f}",
        }
        for o in outcomes
    ]


def totals(outcomes: list[CaseOutcome]) -> dict[str, str]:
    mutants = [o for o in outcomes if o.case.kind == MUTANT]
    others = [o for o in outcomes if o.case.kind != MUTANT]
    killed = sum(o.ok for o in mutants)
    passed = sum(o.ok for o in others)
    return {
        "killed": f"{killed}/{len(mutants)} mutants killed",
        "passed": f"{passed}/{len(others)} variants passed",
    }


COLUMNS = ("case", "kind", "expected", "observed", "result", "seconds", "peak MiB")


def markdown(outcomes: list[CaseOutcome], wall: float, jobs: int) -> str:
    lines = ["# Kill-rate table", "", "| " + " | ".join(COLUMNS) + " |"]
    lines.append("|" + "---|" * len(COLUMNS))
    lines += ["| " + " | ".join(row[c] for c in COLUMNS) + " |" for row in rows(outcomes)]
    done = totals(outcomes)
    lines += ["", f"{done['killed']}; {done['passed']}; {wall:.0f} s with {jobs} jobs.", ""]
    return "\n".join(lines)


def table_text(outcomes: list[CaseOutcome]) -> str:
    table = rows(outcomes)
    widths = {c: max(len(c), *(len(r[c]) for r in table)) for c in COLUMNS}
    lines = ["  ".join(c.ljust(widths[c]) for c in COLUMNS)]
    lines += ["  ".join(r[c].ljust(widths[c]) for c in COLUMNS) for r in table]
    return "\n".join(lines)


def write_killtable(outcomes: list[CaseOutcome], report_dir: Path, wall: float, jobs: int) -> None:
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
