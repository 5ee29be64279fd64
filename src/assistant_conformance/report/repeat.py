"""Runs of the suite against one target, compared: every requirement whose verdict differed, with
each run's verdict (`assistant-conformance run --repeat N`; the kill table's repeated variants).

A run that wrote no report (it stopped before: a usage error, an interruption) has no verdicts;
the others are compared among themselves. Written: repeat.json (the runs, their exit statuses
and the requirements that differed) and repeat.md (the same as a table); the terminal gets the
table."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant_conformance.report import redact
from assistant_conformance.report.conformance_json import DocumentError, load_document
from assistant_conformance.report.exit_codes import Exit

REPEAT_JSON, REPEAT_MARKDOWN = "repeat.json", "repeat.md"
NO_VERDICT = "-"  # a requirement a run did not report


def verdicts_of(report: Path) -> dict[str, str] | None:
    """Each requirement's verdict in a run's conformance.json (None: the run wrote none)."""
    if not report.is_file():
        return None
    try:
        return load_document(report).verdicts()
    except DocumentError:
        return None


@dataclass
class Repeats:
    """N runs against one target: each one's verdicts (None: no report) and exit status."""

    target: str
    verdicts: list[dict[str, str] | None] = field(default_factory=list)
    exits: list[int] = field(default_factory=list)

    def differing(self) -> dict[str, list[str]]:
        """Every requirement whose verdict was not the same in each run that reported, with each
        run's verdict (NO_VERDICT for a run without a report or without the requirement)."""
        judged = [v for v in self.verdicts if v is not None]
        ids = sorted({r for v in judged for r in v})
        return {
            r: [(v or {}).get(r, NO_VERDICT) for v in self.verdicts]
            for r in ids
            if len({v.get(r, NO_VERDICT) for v in judged}) > 1
        }

    def exit_status(self) -> int:
        """A run stopped short (usage 4, interrupted 2) wins; then UNSTABLE where a verdict
        differed; else the worst of the runs' statuses (3 over 1 over 0)."""
        for stopped in (Exit.USAGE, Exit.INTERRUPTED):
            if stopped in self.exits:
                return int(stopped)
        if self.differing():
            return int(Exit.UNSTABLE)
        order = (Exit.HARNESS, Exit.VIOLATION, Exit.CONFORMANT)
        return next((int(e) for e in order if e in self.exits), max(self.exits, default=0))

    def as_dict(self) -> dict[str, Any]:
        return {
            "target": redact.text(self.target),
            "runs": [
                {"run": i + 1, "exit_status": code, "reported": v is not None}
                for i, (code, v) in enumerate(zip(self.exits, self.verdicts, strict=True))
            ],
            "requirements": len({r for v in self.verdicts if v for r in v}),
            "differing": [{"id": r, "verdicts": vs} for r, vs in self.differing().items()],
            "exit_status": self.exit_status(),
        }

    def table(self) -> list[str]:
        """The requirements that differed, one row each (Markdown, read as well in a terminal)."""
        runs = len(self.verdicts)
        head = ["| requirement | " + " | ".join(f"run {i + 1}" for i in range(runs)) + " |"]
        head.append("|---|" + "---|" * runs)
        return head + [f"| {r} | {' | '.join(vs)} |" for r, vs in self.differing().items()]

    def summary(self) -> str:
        """One line: how many runs, how many requirements differed, the exit status."""
        runs, differed = len(self.verdicts), len(self.differing())
        reported = sum(v is not None for v in self.verdicts)
        short = f" ({runs - reported} wrote no report)" if reported < runs else ""
        said = f"{differed} requirements differed" if differed else "every verdict the same"
        return f"{runs} runs against one target{short}: {said} (exit {self.exit_status()})"

    def write(self, report_dir: Path) -> None:
        report_dir.mkdir(parents=True, exist_ok=True)
        (report_dir / REPEAT_JSON).write_text(
            json.dumps(self.as_dict(), indent=2) + "\n", encoding="utf-8"
        )
        lines = [f"# The suite {len(self.verdicts)} times against one target", ""]
        lines += [redact.text(self.summary()), ""]
        exits = ", ".join(f"run {i + 1}: {code}" for i, code in enumerate(self.exits))
        lines += [f"Exit statuses: {exits}.", ""]
        lines += [*self.table(), ""] if self.differing() else []
        (report_dir / REPEAT_MARKDOWN).write_text("\n".join(lines), encoding="utf-8")
