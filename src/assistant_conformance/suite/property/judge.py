"""The property layer's judgements within one test: passes once per requirement and operation,
the first few distinct failures, and the controlled requirements held back until the operation's
control is known (charges.CONTROLLED): recorded where a valid request of the same operation was
accepted in this test, else "not judged" with what the valid requests got.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from assistant_conformance.contract.openapi import by_id_table
from assistant_conformance.suite.http.trail import Entry
from assistant_conformance.suite.judging import findings
from assistant_conformance.suite.judging.schemathesis_charges import (
    CONTROLLED,
    FINDINGS_PER_REQUIREMENT,
)


@dataclass(frozen=True)
class Held:
    requirement: str
    ok: bool
    expected: str
    actual: str
    evidence: Entry | None
    check: findings.Check | None = None  # how a replay judges it again
    span: tuple[int, int] | None = None  # the exchanges of its case
    operation: str = ""  # METHOD /path


@dataclass
class Judge:
    controls: dict[str, Counter[int]] = field(default_factory=lambda: defaultdict(Counter))
    labels: dict[str, str] = field(default_factory=dict)  # operationId -> METHOD /path
    held: dict[str, list[Held]] = field(default_factory=lambda: defaultdict(list))
    passed: set[str] = field(default_factory=set)
    failed: Counter[str] = field(default_factory=Counter)
    finished: bool = False

    def control(self, operation: str, label: str, status: int) -> None:
        """A valid request of `operation` was answered `status`."""
        self.controls[operation][status] += 1
        self.labels[operation] = label

    def accepted(self, operation: str) -> bool:
        return any(200 <= status < 300 for status in self.controls[operation])

    def judge(
        self,
        operation: str,
        requirement: str,
        ok: bool,
        expected: str = "",
        actual: str = "",
        evidence: Entry | None = None,
        key: str = "",
        check: findings.Check | None = None,
        hold: bool = True,
    ) -> None:
        """Record (or, for a controlled requirement, hold) one judgement; `key` tells distinct
        failures apart (the first few of each requirement are kept); `check` how a replay judges
        it again, on the exchanges of the case that is running."""
        # A pass once per requirement and operation: a requirement that names several operations
        # (a status) passes only where each kept it (report/verdicts.py), so one operation's pass
        # must not hide another's in a test that sends both (a state machine's steps).
        passed = f"{requirement}|{operation}"
        if ok and passed in self.passed:
            return
        if not ok:
            self.failed[f"{requirement}|{key}"] += 1
            self.failed[requirement] += 1
            first = self.failed[f"{requirement}|{key}"] == 1
            if not first or self.failed[requirement] > FINDINGS_PER_REQUIREMENT:
                return
        else:
            self.passed.add(passed)
        record = findings.current()
        span = (record.window, len(record.exchanges))
        found = by_id_table().get(operation)
        item = Held(
            requirement, ok, expected, actual, evidence, check, span, found.label if found else ""
        )
        if requirement in CONTROLLED and hold:
            self.held[operation].append(item)
        else:
            findings.expect(
                requirement, ok, expected, actual, item.evidence, check=check, span=span,
                operation=item.operation or None,
            )  # fmt: skip

    def finish(self) -> None:
        """At the end of the test: release what the controls allow, say why for the rest."""
        if self.finished:
            return
        self.finished = True
        for operation, items in self.held.items():
            if self.accepted(operation):
                for item in items:
                    findings.expect(
                        item.requirement, item.ok, item.expected, item.actual, item.evidence,
                        check=item.check, span=item.span, operation=item.operation or None,
                    )  # fmt: skip
                continue
            why = self._refused(operation)
            for requirement in dict.fromkeys(item.requirement for item in items):
                findings.not_judged(requirement, f"not judged: {why}")

    def _refused(self, operation: str) -> str:
        statuses = self.controls[operation]
        label = self.labels.get(operation, operation)
        if not statuses:
            return f"no valid request of {label} was sent in this test"
        seen = ", ".join(f"{s} ({n}x)" for s, n in sorted(statuses.items()))
        return f"{label} accepted no valid request in this test: answered {seen}"
