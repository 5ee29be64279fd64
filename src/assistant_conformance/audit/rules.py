"""Judging a capture's exchanges one by one, each with only what came before it: the audit of a
file walks it so, and the proxy judges each exchange as it ends the same way (audit/proxy.py).
What one exchange shows is audit/exchange.py's; what a sequence shows, audit/sequence.py's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from assistant_conformance.audit import exchange, sequence
from assistant_conformance.audit.capture import Capture
from assistant_conformance.audit.judge import finding
from assistant_conformance.audit.operations import operation_of
from assistant_conformance.contract.openapi import Operation
from assistant_conformance.report.model import PASS, Finding


@dataclass
class Judging:
    capture: Capture
    base_path: str | None = None
    ops: list[Operation | None] = field(default_factory=list)  # each exchange's, None: off it
    findings: list[Finding] = field(default_factory=list)
    not_judged: dict[str, str] = field(default_factory=dict)  # requirement -> why not
    streams: sequence.Streams = field(default_factory=sequence.Streams)

    def next(self) -> list[Finding]:
        """Judge the capture's next exchange: its findings (passes too)."""
        index = len(self.ops)
        capture, base_path = self.capture, self.base_path
        self.ops.append(operation_of(capture.entries[index], base_path))
        judgements = exchange.judged(capture, index, self.ops[index])
        if self.ops[index] is not None and capture.entries[index].status is not None:
            judgements += sequence.deleted(capture, self.ops, index, base_path)
            judgements += sequence.patched(capture, self.ops, index)
            judgements += sequence.resumed(capture, self.ops, index, base_path, self.streams)
        judgements += sequence.declared_checks(capture, index, self.not_judged)
        found = []
        for judgement in judgements:
            result = finding(judgement, capture)
            if not (result.verdict == PASS and exchange.only_failures(judgement)):
                found.append(result)
        self.findings += found
        return found

    def all(self) -> list[Finding]:
        while len(self.ops) < len(self.capture.entries):
            self.next()
        return self.findings

    def counts(self) -> dict[str, int]:
        """How many exchanges were judged, went to no documented operation, got no answer."""
        answered = [e.status is not None for e in self.capture.entries]
        on = [op is not None for op in self.ops]
        return {
            "exchanges": len(self.ops),
            "judged": sum(o and a for o, a in zip(on, answered, strict=True)),
            "off_document": on.count(False),
            "unanswered": sum(o and not a for o, a in zip(on, answered, strict=True)),
        }
