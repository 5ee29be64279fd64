"""A finding after a long polling loop: its HAR keeps the loop's first and last polls, and where
their values came from is sought for those kept only (a loop of 300 polls, each looked up among
every earlier exchange, cost a processing test half a minute of CPU at its end). Counts only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant_conformance.report.model import Finding
from assistant_conformance.suite.evidence import har, places
from assistant_conformance.suite.http import trail
from assistant_conformance.suite.judging import checks, findings

KB = "http://t/api/ai/v1/kb/kb-0123456789"


def _entry(
    method: str, url: str, status: int, body: dict | None = None, poll: trail.Poll | None = None
) -> trail.Entry:
    entry = trail.Entry(method, url, {}, None, status=status)
    entry.response_headers = {"content-type": "application/json"}
    entry.take(json.dumps(body).encode())
    entry.poll = poll
    return entry


def test_a_long_polling_loop_is_thinned_before_its_values_are_traced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    created = _entry("POST", "http://t/api/ai/v1/kb", {"id": "kb-0123456789"})
    until = checks.DocumentsSettledCheck(entry=checks.LOOP_ANSWER, ids=("d1",))
    loop = trail.Poll(until, 30, "l1")
    polls = [_entry("GET", f"{KB}/status?ids=d1", 200, {"d1": "waiting"}, loop) for _ in range(300)]
    record = findings.TestRecord(frozenset({"KB-PROCESS-COMPLETES"}), strict=False, nodeid="t::x")
    record.exchanges += [created, *polls]
    finding = Finding("KB-PROCESS-COMPLETES", "warn", "terminal", "waiting")
    check = checks.DocumentsTerminalCheck(entry=300, ids=("d1",))
    record.traced.append(findings.Traced(finding, 0, 301, check))
    asked: list[int] = []
    needed = places.needed

    def counted(window: list[trail.Entry], origins: list[trail.Entry]) -> list[trail.Entry]:
        asked.append(len(window))
        return needed(window, origins)

    monkeypatch.setattr(places, "needed", counted)
    har.write_hars(record, [], har.HarRun(tmp_path, 0, "http://t", 10, 30, "run-x"))
    assert asked == [3]  # the create, the loop's first and last polls: not 301
    written = json.loads((tmp_path / finding.har).read_text())
    entries = written["log"]["entries"]
    assert len(entries) == 3 and entries[-1]["_poll"]["skipped"] == 298
    assert written["log"]["_finding"]["check"]["entry"] == 2  # the last poll, where it looked
