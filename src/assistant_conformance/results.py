"""The result model: per-test records, per-requirement verdicts, and the run's gate and level.

Kept apart from the tests and the report writers: tests produce findings, the plugin collects them
here (also across pytest-xdist workers, on the test reports), `build` decides every verdict once,
and the writers (report/) only render the `Run` it returns.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .baseline import Entry
from .capabilities import GROUPS, GroupStatus, group_of_section
from .capabilities import UNSUPPORTED as GROUP_UNSUPPORTED
from .catalogue import Catalogue
from .findings import ERROR, FAIL, PASS, SKIP, WARN, Finding

KNOWN = "known"  # failed, and listed in the baseline
UNSUPPORTED = "unsupported"  # in a capability group the target does not implement
PENDING = "pending"  # no test checks it yet (the catalogue says so)
UNTESTED = "untested"  # its tests were not run (deselected, or the run stopped)
VERDICTS = (FAIL, ERROR, KNOWN, WARN, PASS, SKIP, UNSUPPORTED, UNTESTED, PENDING)
# A requirement's verdict is the worst of what its tests saw, in this order.
SEVERITY = (FAIL, ERROR, WARN, PASS, SKIP)

EXIT_OK, EXIT_VIOLATION, EXIT_HARNESS = 0, 1, 3

# How a test's body ended, for the requirements it names but recorded no finding on.
OUTCOME_VERDICT = {
    "passed": PASS,  # ran to its end: nothing contradicted them
    "blocked": SKIP,  # stopped by a failed require(): not reached
    "skipped": SKIP,
    "failed": ERROR,  # raised something that is not a finding: the suite cannot tell
    "error": ERROR,  # set-up or tear-down broke
}


@dataclass
class TestResult:
    __test__ = False  # not a test class, whatever pytest thinks of the name

    nodeid: str
    requirements: list[str]
    outcome: str  # a key of OUTCOME_VERDICT
    findings: list[Finding]
    reason: str = ""  # why it was skipped, blocked or broke
    duration: float = 0.0


@dataclass
class RequirementResult:
    id: str
    section: str
    level: str
    source: str
    statement: str
    verdict: str
    reason: str = ""
    tests: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


@dataclass
class BaselineStatus:
    requirement: str
    reason: str
    expires: str | None
    status: str  # applied / stale / not exercised
    note: str = ""


@dataclass
class Certification:
    level: str  # none / core / core + store, files / full
    parts: dict[str, str]  # core and each group: met / not met / incomplete / unsupported
    notes: dict[str, str]  # why a part is not met or incomplete


@dataclass
class Gate:
    exit_status: int
    outcome: str  # conformant / not conformant / harness error
    problems: list[str]


@dataclass
class Run:
    info: dict[str, Any]  # suite version, spec hashes, target, seed, start, duration, options
    sections: dict[str, str]
    requirements: dict[str, RequirementResult]
    capabilities: dict[str, GroupStatus]
    baseline: list[BaselineStatus]
    certification: Certification
    gate: Gate
    unattributed: list[str] = field(default_factory=list)

    def totals(self) -> dict[str, int]:
        counts = Counter(r.verdict for r in self.requirements.values())
        return {v: counts[v] for v in VERDICTS if counts[v]}

    def by_section(self) -> dict[str, list[RequirementResult]]:
        grouped: dict[str, list[RequirementResult]] = {key: [] for key in self.sections}
        for result in self.requirements.values():
            grouped.setdefault(result.section, []).append(result)
        return {key: results for key, results in grouped.items() if results}


def _verdict_of(test: TestResult, req_id: str) -> str:
    own = [f.verdict for f in test.findings if f.requirement == req_id]
    if own:
        return min(own, key=SEVERITY.index)
    return OUTCOME_VERDICT.get(test.outcome, ERROR)


def requirement_results(
    catalogue: Catalogue, tests: list[TestResult]
) -> dict[str, RequirementResult]:
    results = {
        rid: RequirementResult(rid, req.section, req.level, req.source, req.statement, UNTESTED)
        for rid, req in catalogue.requirements.items()
    }
    seen: dict[str, list[str]] = {}
    for test in tests:
        for rid in test.requirements:
            result = results[rid]
            result.tests.append(test.nodeid)
            verdict = _verdict_of(test, rid)
            seen.setdefault(rid, []).append(verdict)
            result.findings += [
                f for f in test.findings if f.requirement == rid and f.verdict != PASS
            ]
            if verdict == SKIP and not result.reason:
                result.reason = test.reason
            if verdict == ERROR and not result.reason:
                result.reason = f"{test.nodeid}: {test.reason or 'the test broke'}"
    for rid, result in results.items():
        if rid in seen:
            result.verdict = min(seen[rid], key=SEVERITY.index)
            if result.verdict not in (SKIP, ERROR):
                result.reason = ""
        elif catalogue[rid].pending:
            result.verdict = PENDING
    return results


def _apply_capabilities(
    results: dict[str, RequirementResult], capabilities: dict[str, GroupStatus]
) -> None:
    for result in results.values():
        group = group_of_section(result.section)
        status = capabilities.get(group) if group else None
        if status and status.status == GROUP_UNSUPPORTED and result.verdict != PENDING:
            result.verdict = UNSUPPORTED
            result.reason = f"capability group {group} {status.how} unsupported"


def _apply_baseline(
    results: dict[str, RequirementResult], entries: dict[str, Entry], today: dt.date
) -> list[BaselineStatus]:
    statuses = []
    for rid, entry in entries.items():
        result = results[rid]
        expires = entry.expires.isoformat() if entry.expires else None
        status = BaselineStatus(rid, entry.reason, expires, "not exercised")
        if result.verdict == PASS:
            status.status, status.note = "stale", "it passes now: remove the entry"
        elif entry.expired(today):
            status.status, status.note = "stale", f"the entry expired on {expires}"
        elif result.verdict in (FAIL, WARN):
            status.status = "applied"
            result.verdict, result.reason = KNOWN, f"baseline: {entry.reason}"
        statuses.append(status)
    return statuses


def _certification(
    run_results: dict[str, RequirementResult], caps: dict[str, GroupStatus]
) -> Certification:
    parts: dict[str, str] = {}
    notes: dict[str, str] = {}
    members: dict[str, list[RequirementResult]] = {"core": []}
    for result in run_results.values():
        members.setdefault(group_of_section(result.section) or "core", []).append(result)
    for part in ("core", *GROUPS):
        status = caps.get(part)
        if status is not None and status.status == GROUP_UNSUPPORTED:
            parts[part] = "unsupported"
            continue
        reqs = members.get(part, [])
        broken = [r.id for r in reqs if r.verdict in (FAIL, ERROR, KNOWN)]
        open_ = [r.id for r in reqs if r.verdict in (SKIP, UNTESTED)]
        if broken:
            parts[part], notes[part] = "not met", "failing: " + ", ".join(broken)
        elif open_ or not any(r.verdict in (PASS, WARN) for r in reqs):
            parts[part], notes[part] = "incomplete", _not_checked(open_)
        else:
            parts[part] = "met"
    groups = [g for g in GROUPS if parts[g] == "met"]
    if parts["core"] != "met":
        level = "none"
    elif len(groups) == len(GROUPS):
        level = "full"
    else:
        level = "core" + (" + " + ", ".join(groups) if groups else "")
    return Certification(level, parts, notes)


def _not_checked(ids: list[str]) -> str:
    if not ids:
        return "nothing checked"
    shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    return f"{len(ids)} not checked: {shown}"


def _gate(
    results: dict[str, RequirementResult],
    baseline: list[BaselineStatus],
    unattributed: list[str],
    baseline_file: str,
) -> Gate:
    violations = [f"{r.id} ({r.level}) fails" for r in results.values() if r.verdict == FAIL] + [
        f"stale baseline entry {b.requirement} in {baseline_file}: {b.note}"
        for b in baseline
        if b.status == "stale"
    ]
    if violations:
        return Gate(EXIT_VIOLATION, "not conformant", violations)
    errors = [f"{r.id}: {r.reason}" for r in results.values() if r.verdict == ERROR]
    errors += [f"{nodeid}: failed, and names no requirement" for nodeid in unattributed]
    if errors:
        return Gate(EXIT_HARNESS, "harness error", errors)
    known = [f"{r.id} ({r.level}) {r.reason}" for r in results.values() if r.verdict == KNOWN]
    return Gate(EXIT_OK, "conformant except known failures" if known else "conformant", known)


def build(
    catalogue: Catalogue,
    tests: list[TestResult],
    *,
    info: dict[str, Any],
    capabilities: dict[str, GroupStatus],
    baseline: dict[str, Entry],
    baseline_file: str = "",
    unattributed: list[str] | None = None,
    today: dt.date | None = None,
) -> Run:
    """Decide every verdict once: from the tests, then capability groups, then the baseline."""
    results = requirement_results(catalogue, tests)
    _apply_capabilities(results, capabilities)
    statuses = _apply_baseline(results, baseline, today or dt.date.today())
    full_caps = {name: capabilities.get(name, GroupStatus("not probed")) for name in GROUPS}
    return Run(
        info=info,
        sections=dict(catalogue.sections),
        requirements=results,
        capabilities=full_caps,
        baseline=statuses,
        certification=_certification(results, capabilities),
        gate=_gate(results, statuses, unattributed or [], baseline_file),
        unattributed=unattributed or [],
    )
