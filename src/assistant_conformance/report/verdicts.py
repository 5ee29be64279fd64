"""Deciding verdicts: from the tests' records to every requirement's verdict, the capability
groups, the baseline, the certification level and the gate (exit status). Once per run.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from assistant_conformance.contract.catalogue import Catalogue
from assistant_conformance.report.baseline import BaselineEntry
from assistant_conformance.report.exits import Exit
from assistant_conformance.report.model import (
    ERROR,
    FAIL,
    KNOWN,
    NOT_PROBED,
    OUTCOME_VERDICT,
    PASS,
    PENDING,
    SEVERITY,
    SKIP,
    UNSUPPORTED,
    UNSUPPORTED_GROUP,
    UNTESTED,
    WARN,
    BaselineStatus,
    Certification,
    Finding,
    Gate,
    GroupStatus,
    RequirementResult,
    Run,
    TestResult,
    without_varying,
)


def _verdict_of(test: TestResult, req_id: str) -> str:
    own = [f.verdict for f in test.findings if f.requirement == req_id]
    if own:
        return min(own, key=SEVERITY.index)
    return OUTCOME_VERDICT.get(test.outcome, ERROR)


NOT_EXERCISED = "not exercised: {} ran but recorded nothing on it"
FINDINGS_KEPT = 10  # per requirement: distinct ones; the rest are counted


def _add_distinct(result: RequirementResult, finding: Finding) -> None:
    """Keep the first few distinct findings of a requirement (the same failure seen on another
    id or at another time is one finding, counted)."""
    key = (finding.expected, without_varying(finding.actual)[:120])
    known = [(f.expected, without_varying(f.actual)[:120]) for f in result.findings]
    if key in known:
        result.repeats += 1
    elif len(result.findings) < FINDINGS_KEPT:
        result.findings.append(finding)
    else:
        result.repeats += 1


def _skip_reason(test: TestResult, rid: str) -> tuple[int, str]:
    """Why a test did not judge `rid`, most telling first: what it said of `rid` itself, then why
    it stopped or was skipped, then that it ran without looking at it."""
    own = [f.actual for f in test.findings if f.requirement == rid and f.verdict == SKIP]
    if own:
        return 0, own[0]
    if test.reason:
        return 1, test.reason
    return 2, NOT_EXERCISED.format(test.nodeid)


def requirement_results(
    catalogue: Catalogue, tests: list[TestResult]
) -> dict[str, RequirementResult]:
    results = {
        rid: RequirementResult(rid, req.section, req.level, req.source, req.statement, UNTESTED)
        for rid, req in catalogue.requirements.items()
    }
    seen: dict[str, list[str]] = {}
    reasons: dict[str, list[tuple[int, str]]] = {}
    for test in tests:
        for rid in test.requirements:
            result = results[rid]
            result.tests.append(test.nodeid)
            verdict = _verdict_of(test, rid)
            seen.setdefault(rid, []).append(verdict)
            for finding in test.findings:
                if finding.requirement == rid and finding.verdict not in (PASS, SKIP):
                    _add_distinct(result, finding)
            if verdict == SKIP:
                reasons.setdefault(rid, []).append(_skip_reason(test, rid))
            if verdict == ERROR and not result.reason:
                result.reason = f"{test.nodeid}: {test.reason or 'the test broke'}"
    for rid, result in results.items():
        if rid in seen:
            result.verdict = min(seen[rid], key=SEVERITY.index)
            if result.verdict == SKIP:
                result.reason = min(reasons[rid])[1]
            if result.verdict not in (SKIP, ERROR):
                result.reason = ""
            if result.verdict == PASS:
                _rest_on_named(result, catalogue.operations.get(rid, ()), tests)
        elif catalogue[rid].pending:
            result.verdict = PENDING
    return results


def _rest_on_named(
    result: RequirementResult, named: tuple[str, ...], tests: list[TestResult]
) -> None:
    """A requirement that names operations passes only where each of them kept it; else it is
    not judged, and says on which it was not exercised (and why, where a test said)."""
    kept: set[str] = set()
    why: dict[str, str] = {}
    for test in tests:
        for f in test.findings:
            if f.requirement == result.id and f.operation:
                if f.verdict == PASS:
                    kept.add(f.operation)
                elif f.verdict == SKIP:
                    why.setdefault(f.operation, f.actual)
    missing = [op for op in named if op not in kept]
    if missing:
        result.verdict = SKIP
        shown = "; ".join(f"{op} ({why[op]})" if op in why else op for op in missing[:8])
        more = f" and {len(missing) - 8} more" if len(missing) > 8 else ""
        result.reason = (
            f"not exercised on {len(missing)} of the {len(named)} operations it names: "
            f"{shown}{more}"
        )


def _apply_capabilities(
    catalogue: Catalogue,
    results: dict[str, RequirementResult],
    capabilities: dict[str, GroupStatus],
) -> None:
    for result in results.values():
        group = catalogue.group_of_section(result.section)
        status = capabilities.get(group) if group else None
        if status and status.status == UNSUPPORTED_GROUP and result.verdict != PENDING:
            result.verdict = UNSUPPORTED
            result.reason = f"capability group {group} {status.how} unsupported"


def _apply_baseline(
    results: dict[str, RequirementResult], entries: dict[str, BaselineEntry], today: dt.date
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
    catalogue: Catalogue, run_results: dict[str, RequirementResult], caps: dict[str, GroupStatus]
) -> Certification:
    parts: dict[str, str] = {}
    notes: dict[str, str] = {}
    members: dict[str, list[RequirementResult]] = {"core": []}
    for result in run_results.values():
        members.setdefault(catalogue.group_of_section(result.section) or "core", []).append(result)
    for part in ("core", *catalogue.groups):
        status = caps.get(part)
        if status is not None and status.status == UNSUPPORTED_GROUP:
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
    groups = [g for g in catalogue.groups if parts[g] == "met"]
    if parts["core"] != "met":
        level = "none"
    elif len(groups) == len(catalogue.groups):
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
        return Gate(Exit.VIOLATION, "not conformant", violations)
    errors = [f"{r.id}: {r.reason}" for r in results.values() if r.verdict == ERROR]
    errors += [f"{nodeid}: failed, and names no requirement" for nodeid in unattributed]
    if errors:
        return Gate(Exit.HARNESS, "harness error", errors)
    known = [f"{r.id} ({r.level}) {r.reason}" for r in results.values() if r.verdict == KNOWN]
    return Gate(
        Exit.CONFORMANT, "conformant except known failures" if known else "conformant", known
    )


def build(
    catalogue: Catalogue,
    tests: list[TestResult],
    *,
    info: dict[str, Any],
    capabilities: dict[str, GroupStatus],
    baseline: dict[str, BaselineEntry],
    baseline_file: str = "",
    unattributed: list[str] | None = None,
    today: dt.date | None = None,
) -> Run:
    """Decide every verdict once: from the tests, then capability groups, then the baseline."""
    results = requirement_results(catalogue, tests)
    _apply_capabilities(catalogue, results, capabilities)
    statuses = _apply_baseline(results, baseline, today or dt.date.today())
    full_caps = {g: capabilities.get(g, GroupStatus(NOT_PROBED)) for g in catalogue.groups}
    return Run(
        info=info,
        sections=dict(catalogue.sections),
        requirements=results,
        capabilities=full_caps,
        baseline=statuses,
        certification=_certification(catalogue, results, capabilities),
        gate=_gate(results, statuses, unattributed or [], baseline_file),
        unattributed=unattributed or [],
    )
