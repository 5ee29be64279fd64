"""Deciding verdicts: from the tests' records to every requirement's verdict, the capability
groups, the baseline, the certification level and the gate (exit status). Once per run.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any

from assistant_conformance.contract.catalogue import Catalogue
from assistant_conformance.report.baseline import BaselineEntry
from assistant_conformance.report.exit_codes import Exit
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
)


def _by_requirement(findings: list[Finding]) -> dict[str, list[Finding]]:
    grouped: dict[str, list[Finding]] = {}
    for finding in findings:
        grouped.setdefault(finding.requirement, []).append(finding)
    return grouped


def _verdict_of(own: list[Finding], outcome: str) -> str:
    """A test's verdict on a requirement: the worst of its findings on it, else its outcome's."""
    if own:
        return min((f.verdict for f in own), key=SEVERITY.index)
    return OUTCOME_VERDICT.get(outcome, ERROR)


NOT_EXERCISED = "not exercised: {} ran but recorded nothing on it"


def _add_distinct(
    result: RequirementResult, finding: Finding, kept: dict[tuple[str, ...], Finding]
) -> None:
    """Keep every distinct finding of a requirement (`kept`: those kept, by Finding.key); the
    same failure seen again (on another exchange, id or time) is counted on the first, with
    where it was seen."""
    same = kept.get(finding.key())
    if same is None:
        kept[finding.key()] = copied = replace(finding, also_at=list(finding.also_at))
        result.findings.append(copied)
        result.repeats += len(finding.also_at)
        return
    result.repeats += 1 + len(finding.also_at)
    same.also_at += [p for p in (finding.place(), *finding.also_at) if p]


def _skip_reason(test: TestResult, findings: list[Finding], rid: str) -> tuple[int, str]:
    """Why a test did not judge `rid`, most telling first: what it said of `rid` itself (its
    `findings` on it), then why it stopped or was skipped, then that it ran without looking."""
    own = [f.actual for f in findings if f.verdict == SKIP]
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
    kept: dict[str, dict[tuple[str, ...], Finding]] = {}
    for test in tests:
        own = _by_requirement(test.findings)
        for rid in test.requirements:
            result = results[rid]
            result.tests.append(test.nodeid)
            verdict = _verdict_of(own.get(rid, []), test.outcome)
            seen.setdefault(rid, []).append(verdict)
            for finding in own.get(rid, []):
                if finding.verdict not in (PASS, SKIP):
                    _add_distinct(result, finding, kept.setdefault(rid, {}))
            if verdict == SKIP:
                reasons.setdefault(rid, []).append(_skip_reason(test, own.get(rid, []), rid))
            if verdict == ERROR and not result.reason:
                result.reason = f"{test.nodeid}: {test.reason or 'the test broke'}"
    every = _by_requirement([f for test in tests for f in test.findings])
    for rid, result in results.items():
        if rid in seen:
            result.verdict = min(seen[rid], key=SEVERITY.index)
            if result.verdict == SKIP:
                result.reason = min(reasons[rid])[1]
            if result.verdict not in (SKIP, ERROR):
                result.reason = ""
            if result.verdict == PASS:
                _rest_on_named(result, catalogue.operations.get(rid, ()), every.get(rid, []))
        elif catalogue[rid].pending:
            result.verdict = PENDING
    return results


def _rest_on_named(
    result: RequirementResult, named: tuple[str, ...], findings: list[Finding]
) -> None:
    """A requirement that names operations passes only where each of them kept it (`findings`:
    every test's on it); else it is not judged, and says on which it was not exercised (and why,
    where a test said)."""
    kept: set[str] = set()
    why: dict[str, str] = {}
    for f in findings:
        if f.operation:
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
