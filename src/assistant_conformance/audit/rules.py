"""Judging a capture's exchanges one by one, each with only what came before it: the audit of a
file walks it so, and the proxy judges each exchange as it ends the same way (audit/session.py).
What one exchange shows is audit/exchange.py's; what a sequence shows, audit/sequence.py's, from
indexes kept here as the exchanges pass (so each costs the same, whatever came before).

What is kept of the findings is bounded by what differs, not by the traffic: a pass once per
requirement and operation (the verdicts read no more), each distinct failure whole, and each of
its repeats (the same requirement, operation, expectation and answer, on another exchange) as
the exchange it was seen on (report/model.py: Finding.also_at).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assistant_conformance.audit import exchange, sequence
from assistant_conformance.audit.capture import Capture
from assistant_conformance.audit.judge import finding
from assistant_conformance.audit.operations import operation_of
from assistant_conformance.contract.openapi import Operation
from assistant_conformance.report.model import PASS, Finding

TOO_DEEP = "a body nested too deep to read"
COUNTS = ("exchanges", "judged", "off_document", "unanswered", "unread")


@dataclass
class Judging:
    capture: Capture
    base_path: str | None = None
    ops: list[Operation | None] = field(default_factory=list)  # each exchange's, None: off it
    not_judged: dict[str, str] = field(default_factory=dict)  # requirement -> why not
    unread: dict[int, str] = field(default_factory=dict)  # exchange -> why it was not judged
    streams: sequence.Streams = field(default_factory=sequence.Streams)
    lives: sequence.Lives = field(default_factory=sequence.Lives)
    reads: sequence.Reads = field(default_factory=sequence.Reads)
    kept: dict[tuple[str, ...], Finding] = field(default_factory=dict)

    def next(self) -> list[Finding]:
        """Judge the capture's next exchange: its findings (passes too)."""
        index = len(self.ops)
        capture, base_path = self.capture, self.base_path
        op = operation_of(capture.entries[index], base_path)
        self.ops.append(op)
        try:
            judgements = self._judgements(index, op)
            found = [(finding(j, capture), j) for j in judgements]
        except RecursionError:
            self.unread[index], found = TOO_DEEP, []
        self.reads.note(capture, index)
        if capture.entries[index].status is not None:
            self.lives.note(capture, op, index, base_path)
        kept = [f for f, j in found if not (f.verdict == PASS and exchange.only_failures(j))]
        for result in kept:
            self._keep(result)
        return kept

    def _judgements(self, index: int, op: Operation | None) -> list[Any]:
        capture, base_path = self.capture, self.base_path
        judgements = exchange.judged(capture, index, op)
        if op is not None and capture.entries[index].status is not None:
            judgements += sequence.deleted(capture, self.ops, index, base_path, self.lives)
            judgements += sequence.patched(capture, self.ops, index, self.reads)
            judgements += sequence.resumed(capture, self.ops, index, base_path, self.streams)
        judgements += sequence.declared_checks(capture, index, self.not_judged)
        return judgements

    def _keep(self, result: Finding) -> None:
        if result.verdict == PASS:
            self.kept.setdefault((result.requirement, result.operation, PASS), result)
            return
        same = self.kept.get(result.key())
        if same is None:
            self.kept[result.key()] = result
        else:
            same.also_at.append(result.place())

    @property
    def findings(self) -> list[Finding]:
        """What is kept of the findings so far (see the module docstring)."""
        return list(self.kept.values())

    def all(self) -> list[Finding]:
        while len(self.ops) < len(self.capture.entries):
            self.next()
        return self.findings

    def counts(self) -> dict[str, int]:
        """How many exchanges were judged, went to no documented operation, got no answer, or
        carried what could not be read."""
        counted = dict.fromkeys(COUNTS, 0)
        for index, op in enumerate(self.ops):
            answered = self.capture.entries[index].status is not None
            kind = "off_document" if op is None else "unanswered" if not answered else "judged"
            counted["unread" if kind == "judged" and index in self.unread else kind] += 1
        counted["exchanges"] = len(self.ops)
        return counted
