"""The result model: per-test records and the per-requirement verdicts that follow from them.

Kept apart from the tests and the report writers: tests produce findings, the plugin collects them
here (also across pytest-xdist workers, through report.user_properties), writers render them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .catalogue import Catalogue
from .findings import ERROR, FAIL, PASS, SKIP, WARN, Finding

PENDING = "pending"
UNTESTED = "untested"
# A requirement's verdict is the worst of what its tests saw, in this order.
SEVERITY = (FAIL, ERROR, WARN, PASS, SKIP)


@dataclass
class TestResult:
    nodeid: str
    requirements: list[str]
    outcome: str  # passed / failed / skipped / error
    findings: list[Finding]
    skip_reason: str = ""
    duration: float = 0.0


@dataclass
class RequirementResult:
    id: str
    verdict: str
    tests: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    reason: str = ""


def _verdict_of(test: TestResult, req_id: str) -> str:
    own = [f.verdict for f in test.findings if f.requirement == req_id]
    if own:
        return min(own, key=SEVERITY.index)
    return {"passed": PASS, "skipped": SKIP, "failed": ERROR, "error": ERROR}[test.outcome]


def requirement_results(
    catalogue: Catalogue, tests: list[TestResult]
) -> dict[str, RequirementResult]:
    results = {
        rid: RequirementResult(rid, PENDING if req.pending else UNTESTED)
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
                result.reason = test.skip_reason
    for rid, verdicts in seen.items():
        results[rid].verdict = min(verdicts, key=SEVERITY.index)
    return results


def totals(results: dict[str, RequirementResult]) -> Counter[str]:
    return Counter(r.verdict for r in results.values())
