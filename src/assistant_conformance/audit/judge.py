"""A judgement: a requirement, the check that judges it (suite/judging/checks.py's words, so that
the same words judge a finding in a test, in a replay and here), what was expected, and the exchange
it points at. Evaluated on the capture's exchanges it is a finding of the suite's own model
(report/model.py): pass, or fail (a MUST) / warn (a SHOULD), with the file and the entry index
in its text and its evidence.

Two kinds of check are the audit's own, where suite/judging/checks.py has none: `response-schema`
(the body has the shape the document gives the answer) and `json-body` (the body is JSON at all),
in OWN_KINDS beside checks.CHECK_KINDS.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from assistant_conformance.audit.capture import Capture
from assistant_conformance.audit.operations import shape_problem
from assistant_conformance.contract.catalogue import load
from assistant_conformance.contract.openapi import by_label
from assistant_conformance.report.model import FAIL, PASS, WARN, Finding
from assistant_conformance.suite.http import trail
from assistant_conformance.suite.http.exchange import describe, evidence_record
from assistant_conformance.suite.judging import checks


@dataclass(frozen=True)
class Judgement:
    requirement: str
    check: checks.Check  # suite/judging/checks.py's, or one of the audit's own kinds below
    expected: str
    entry: int  # the exchange it points at (its index in the file)
    operation: str  # `METHOD /path/{template}`


@dataclass(frozen=True, kw_only=True)
class ResponseSchemaCheck(checks.Check):
    """The JSON body has the shape the document gives the answer of `operation` at its status."""

    kind = checks.CheckKind.RESPONSE_SCHEMA
    entry: int = field(metadata=checks.TRAIL_INDEX)
    operation: str

    def judge(self, entries: Sequence[trail.Entry]) -> checks.Verdict:
        entry = entries[self.entry]
        op = by_label()[self.operation]
        wrong = shape_problem(op, entry.status or 0, checks.body_of(entry))
        return wrong is None, wrong or "the documented shape"


@dataclass(frozen=True, kw_only=True)
class JsonBodyCheck(checks.Check):
    """The answer has a JSON body."""

    kind = checks.CheckKind.JSON_BODY
    entry: int = field(metadata=checks.TRAIL_INDEX)

    def judge(self, entries: Sequence[trail.Entry]) -> checks.Verdict:
        entry = entries[self.entry]
        found = checks.body_of(entry) is not None
        text = bytes(entry.response_body[:200]).decode("utf-8", "replace")
        return found, "a JSON body" if found else f"HTTP {entry.status} body {text!r}"


OWN_KINDS: dict[checks.CheckKind, type[checks.Check]] = {
    c.kind: c for c in (ResponseSchemaCheck, JsonBodyCheck)
}


def finding(judgement: Judgement, capture: Capture) -> Finding:
    """The judgement evaluated on the capture's exchanges."""
    held, seen = checks.evaluate(judgement.check, capture.entries)
    level = load()[judgement.requirement].level
    verdict = PASS if held else (FAIL if level == "MUST" else WARN)
    where = f"{capture.name}, entry {judgement.entry}"
    found = Finding(judgement.requirement, verdict, judgement.expected)
    found.operation = judgement.operation
    if not held:
        found.actual = f"{describe(seen)} ({where})"
        exchange = capture.entries[judgement.entry]
        found.evidence = evidence_record(exchange, har=capture.name, entry=judgement.entry)
        kind = judgement.check.kind.value
        key = f"{judgement.requirement}|{capture.name}|{judgement.entry}|{kind}"
        found.id = f"{judgement.requirement}-{hashlib.sha256(key.encode()).hexdigest()[:8]}"
    return found


def finding_line(found: Finding) -> str:
    """One line for a finding as it is seen: verdict, requirement, operation, expected, actual."""
    level = load()[found.requirement].level
    return (
        f"{found.verdict.upper()} {found.requirement} ({level}) {found.operation}: "
        f"expected {found.expected}; got {found.actual}"
    )
