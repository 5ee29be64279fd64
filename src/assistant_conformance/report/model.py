"""The result model: findings, per-test records, per-requirement verdicts, the run's gate and level.

Tests produce findings (suite/judging/findings.py); the plugin collects them per test (TestResult,
also across pytest-xdist workers); report/verdicts.py decides every verdict once and returns a Run;
the writers only render it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, TypedDict

from assistant_conformance.contract.catalogue import load
from assistant_conformance.report.exchange_record import ExchangeRecord

PASS, FAIL, WARN, SKIP, ERROR = "pass", "fail", "warn", "skip", "error"
KNOWN = "known"  # failed, and listed in the baseline
UNSUPPORTED = "unsupported"  # in a capability group the target does not implement
PENDING = "pending"  # no test checks it yet (the catalogue says so)
UNTESTED = "untested"  # its tests were not run (deselected, or the run stopped)
VERDICTS = (FAIL, ERROR, KNOWN, WARN, PASS, SKIP, UNSUPPORTED, UNTESTED, PENDING)
# A requirement's verdict is the worst of what its tests saw, in this order.
SEVERITY = (FAIL, ERROR, WARN, PASS, SKIP)
# What differs between two sightings of one failure: identifiers (UUIDs, hex runs) and numbers.
VARYING = re.compile(r"[0-9a-f]{8}-[0-9a-f-]{27}|[0-9a-f]{6,}|\d+(?:\.\d+)?")


def without_varying(text: str) -> str:
    """`text` with what varies between sightings written `#`: a failure's repeats are counted
    as one (report/verdicts.py), and its ID is stable (suite/evidence/har.py)."""
    return VARYING.sub("#", text)


class FindingJson(TypedDict):
    """A Finding as JSON data (`Finding.as_json`); its evidence as ExchangeRecord.as_json gives."""

    requirement: str
    verdict: str
    expected: str
    actual: str
    evidence: dict[str, object] | None
    id: str
    har: str
    operation: str
    also_at: list[str]


@dataclass
class Finding:
    requirement: str
    verdict: str
    expected: str = ""
    actual: str = ""
    evidence: ExchangeRecord | None = None  # a failed finding's exchange, redacted
    id: str = ""  # stable: the same requirement, operation and check at the same seed
    har: str = ""  # the exchanges that led to it, relative to the report folder
    operation: str = ""  # `METHOD /path` of the request it judged, where it judged one
    # Where the same failure was seen again (its repeats, report/verdicts.py): each one's place.
    also_at: list[str] = field(default_factory=list)

    def key(self) -> tuple[str, ...]:
        """What makes two failures one: the requirement, the operation, what was expected and
        what came instead, identifiers and numbers aside (on another exchange: a repeat)."""
        expected, actual = without_varying(self.expected), without_varying(self.actual)[:120]
        return (self.requirement, self.operation, expected, actual)

    def place(self) -> str:
        """Where it was seen: its exchange (`file, entry N` in an audit), else its HAR or ID."""
        if self.evidence is not None and {"har", "entry"} <= self.evidence.model_fields_set:
            return f"{self.evidence.har}, entry {self.evidence.entry}"
        return self.har or self.id

    def as_json(self) -> FindingJson:
        """The finding as JSON data (how it goes from a worker to the controller, into
        results.json and conformance.json); `of_json` reads it back."""
        return FindingJson(
            requirement=self.requirement,
            verdict=self.verdict,
            expected=self.expected,
            actual=self.actual,
            evidence=None if self.evidence is None else self.evidence.as_json(),
            id=self.id,
            har=self.har,
            operation=self.operation,
            also_at=list(self.also_at),
        )

    @classmethod
    def of_json(cls, data: FindingJson) -> Finding:
        evidence = data["evidence"]
        return cls(
            data["requirement"],
            data["verdict"],
            data["expected"],
            data["actual"],
            None if evidence is None else ExchangeRecord.model_validate(evidence),
            data["id"],
            data["har"],
            data["operation"],
            list(data["also_at"]),
        )

    def render(self) -> str:
        req = load()[self.requirement]
        lines = [
            f"[{self.requirement}] {req.level} ({req.source}): {req.statement}",
            f"  Expected: {self.expected}",
            f"  Actual:   {self.actual}",
        ]
        if self.evidence and self.evidence.curl:
            lines.append(f"  Reproduce: {self.evidence.curl}")
        if self.id:
            lines.append(f"  Replay:    assistant-conformance replay REPORT_DIR {self.id}")
        return "\n".join(lines)


SUPPORTED, UNSUPPORTED_GROUP, NOT_PROBED = "supported", "unsupported", "not probed"


@dataclass
class GroupStatus:
    """Whether the target implements an optional capability group, and how that is known."""

    status: str  # supported / unsupported / not probed
    how: str = ""  # declared / detected / probed
    evidence: list[str] = field(default_factory=list)  # "POST /api/ai/v1/file -> 404"

    def as_dict(self) -> GroupJson:
        return GroupJson(status=self.status, how=self.how, evidence=list(self.evidence))

    @classmethod
    def of_json(cls, data: GroupJson) -> GroupStatus:
        return cls(data["status"], data["how"], list(data["evidence"]))


class GroupJson(TypedDict):
    """A GroupStatus as JSON data (results.json, a worker's report to the controller)."""

    status: str
    how: str
    evidence: list[str]


# How a test's body ended, for the requirements it names but recorded no finding on.
OUTCOME_VERDICT = {
    "passed": SKIP,  # ran to its end but recorded nothing on it: not exercised, never a pass
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

    def as_json(self) -> ResultJson:
        """The test's result as results.json keeps it; `of_json` reads it back."""
        return ResultJson(
            nodeid=self.nodeid,
            requirements=list(self.requirements),
            outcome=self.outcome,
            findings=[f.as_json() for f in self.findings],
            reason=self.reason,
            duration=self.duration,
        )

    @classmethod
    def of_json(cls, data: ResultJson) -> TestResult:
        findings = [Finding.of_json(f) for f in data["findings"]]
        return cls(
            data["nodeid"],
            data["requirements"],
            data["outcome"],
            findings,
            data["reason"],
            data["duration"],
        )


class ResultJson(TypedDict):
    """A TestResult as JSON data (`TestResult.as_json`), as results.json keeps it."""

    nodeid: str
    requirements: list[str]
    outcome: str
    findings: list[FindingJson]
    reason: str
    duration: float


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
    findings: list[Finding] = field(default_factory=list)  # each distinct one
    repeats: int = 0  # sightings of those findings beyond the first (each's `also_at` says where)


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
