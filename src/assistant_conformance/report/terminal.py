"""The summary at the end of a pytest run, in the style of h2spec: counts per section, then each
failing requirement with its statement, expected and actual, and one way to reproduce it."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from assistant_conformance.report.conformance_json import Document, RequirementRecord
from assistant_conformance.report.document import (
    absent_line,
    cleanup_lines,
    replay_command,
    runs_line,
    transport_line,
)
from assistant_conformance.report.model import Run

MARK = {"fail": "x", "error": "E", "warn": "!", "known": "~"}
COLOUR = {"fail": "red", "error": "red", "warn": "yellow", "known": "purple", "pass": "green"}
ORDER = ("fail", "error", "warn", "known")


class Terminal(Protocol):
    """What the summary writes to: pytest's terminal reporter, or anything that writes alike."""

    def section(self, title: str, sep: str = ..., **markup: bool) -> None: ...

    def write_line(self, line: str | bytes, **markup: bool) -> None: ...


def terminal_summary(tr: Terminal, run: Run, report_dir: Path) -> None:
    to_terminal(tr, Document.of_run(run), report_dir)


def to_terminal(tr: Terminal, doc: Document, report_dir: Path) -> None:
    tr.section("conformance")
    width = max(len(s.title) for s in doc.sections) + 2
    for section in doc.sections:
        counts = ", ".join(f"{n} {v}" for v, n in section.totals.items())
        tr.write_line(f"  {section.key:8} {section.title:{width}} {counts}")
    failing = [r for r in doc.requirements if r.verdict in ORDER]
    failing.sort(key=lambda r: (ORDER.index(r.verdict), r.id))
    if failing:
        tr.write_line("")
    for r in failing:
        _requirement(tr, r, doc)
    _baseline(tr, doc)
    tr.write_line("")
    groups = ", ".join(
        f"{name} {s.status}" + (f" ({s.how})" if s.how in ("declared", "detected") else "")
        for name, s in doc.capabilities.items()
    )
    tr.write_line(f"capability groups: {groups}")
    if (lacking := absent_line(doc)) is not None:
        tr.write_line(lacking)
    tr.write_line(f"certification level: {doc.certification.level}")
    if (runs := runs_line(doc)) is not None:
        tr.write_line(runs)
    if (way := transport_line(doc)) is not None:
        tr.write_line(way)
    for line in cleanup_lines(doc):
        tr.write_line(line)
    totals = ", ".join(f"{n} {v}" for v, n in doc.totals.items())
    tr.write_line(f"{sum(doc.totals.values())} requirements: {totals}")
    result = doc.result
    for problem in result.problems[:20]:  # why the gate failed, or the known failures
        tr.write_line(f"  - {problem}", red=result.exit_status != 0)
    if len(result.problems) > 20:
        tr.write_line(f"  - ... and {len(result.problems) - 20} more")
    tr.write_line(
        f"result: {result.outcome} (exit {result.exit_status}); reports in {report_dir}/",
        bold=True,
        **{COLOUR["pass" if result.exit_status == 0 else "fail"]: True},
    )
    if result.exit_status == 1:
        tr.write_line(f"rerun only what failed: {rerun_command(doc)}")


def rerun_command(doc: Document) -> str:
    """The failing tests again, same seed, depth and target (the token from the environment):
    pytest's --lf reads the last run's failures from its cache."""
    options = doc.options
    words = [f"--seed={doc.seed}", f"--examples={options.examples}"]
    if options.base_url:
        words.append(f"--base-url={options.base_url}")
    if options.strict_conformance:
        words.append("--strict-conformance")
    if doc.invocation == "assistant-conformance run":
        return " ".join(["assistant-conformance run", *words, "-- --lf"])
    return " ".join(["pytest", "--lf", *words])


def _requirement(tr: Terminal, r: RequirementRecord, doc: Document) -> None:
    verdict = r.verdict
    tr.write_line(
        f"  {MARK[verdict]} {r.id}  {r.level} {verdict}  ({r.source})",
        **{COLOUR[verdict]: True, "bold": True},
    )
    tr.write_line(f"    -> {r.statement}")
    if r.reason and verdict in ("error", "known"):
        tr.write_line(f"       {r.reason}")
    if r.findings:
        first = r.findings[0]
        tr.write_line(f"       Expected: {first.expected}")
        tr.write_line(f"       Actual:   {_short(first.actual)}")
        curl = first.evidence.curl if first.evidence else ""
        if curl:
            tr.write_line(f"       Reproduce: {_short(curl, 400)}")
        if replay := replay_command(doc, first):
            tr.write_line(f"       Replay:    {replay}")
        more = len(r.findings) - 1 + r.repeats
        if more:
            tr.write_line(f"       (+{more} more findings in the reports)")


def _short(text: str, limit: int = 240) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _baseline(tr: Terminal, doc: Document) -> None:
    entries = doc.baseline.entries
    if not entries:
        return
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry.status] = counts.get(entry.status, 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in counts.items())
    tr.write_line("")
    tr.write_line(f"baseline {doc.baseline.file}: {summary}")
    for entry in entries:
        if entry.status == "stale":
            tr.write_line(f"  stale: {entry.requirement}: {entry.note}", red=True)
