"""Report writers: they only read the result model (results.py) and render it."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import UTC, datetime

import pytest

from . import __version__, redact
from .catalogue import load
from .findings import FAIL, WARN
from .results import TestResult, requirement_results, totals
from .settings import SuiteSettings


def terminal_summary(tr: pytest.TerminalReporter, tests: list[TestResult]) -> None:
    catalogue = load()
    results = requirement_results(catalogue, tests)
    tr.section("conformance")
    by_section: dict[str, dict[str, int]] = {}
    for rid, result in results.items():
        counts = by_section.setdefault(catalogue[rid].section, {})
        counts[result.verdict] = counts.get(result.verdict, 0) + 1
    for section, counts in by_section.items():
        line = ", ".join(f"{n} {verdict}" for verdict, n in sorted(counts.items()))
        tr.write_line(f"{section:8} {catalogue.sections[section]:28} {line}")
    for result in results.values():
        for finding in result.findings:
            if finding.verdict in (FAIL, WARN):
                mark = "x" if finding.verdict == FAIL else "!"
                tr.write_line(f"{mark} {redact.text(finding.render())}")
    count = totals(results)
    tr.write_line(", ".join(f"{n} {v}" for v, n in sorted(count.items())) + " requirements")


def write_reports(settings: SuiteSettings, tests: list[TestResult]) -> None:
    catalogue = load()
    results = requirement_results(catalogue, tests)
    settings.report_dir.mkdir(parents=True, exist_ok=True)
    document = {
        "suite_version": __version__,
        "target": settings.base_url or "embedded reference server",
        "seed": settings.seed,
        "finished": datetime.now(UTC).isoformat(),
        "totals": dict(totals(results)),
        "requirements": [
            {
                "id": rid,
                "level": catalogue[rid].level,
                "source": catalogue[rid].source,
                "statement": catalogue[rid].statement,
                "verdict": r.verdict,
                "reason": r.reason,
                "tests": r.tests,
                "findings": [asdict(f) for f in r.findings],
            }
            for rid, r in results.items()
        ],
    }
    text = redact.text(json.dumps(document, indent=2))
    (settings.report_dir / "conformance.json").write_text(text, encoding="utf-8")
