"""Every distinct finding is in every report, and a repeat is counted with where it was seen.

A file where `runs`, `runs/wait` and `cancel` each answer a wrong status (the same requirement,
three operations: three findings), `runs` on three exchanges (one finding, two repeats): the
terminal, conformance.json, conformance.md and conformance.html each hold the three findings,
and the repeats' exchanges (entries 3 and 4) are named where the finding is.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from audit_support import audited
from har_support import exchange, thread, written

pytestmark = pytest.mark.xdist_group("audit")
RUNS = f"/api/ai/threads/{thread(1)}/runs"
WRONG = [  # each answered 200 where the document says 201
    exchange("POST", RUNS, 200, body={}, answer={"run_id": "r1"}),
    exchange("POST", f"{RUNS}/wait", 200, body={}, answer={"values": {}}),
    exchange("POST", f"{RUNS}/r1/cancel", 200, body={}, answer={}),
    exchange("POST", RUNS, 200, body={}, answer={"run_id": "r2"}),
    exchange("POST", RUNS, 200, body={}, answer={"run_id": "r3"}),
]
OPERATIONS = ("POST /api/ai/threads/{thread_id}/runs", "POST /api/ai/threads/{thread_id}/runs/wait",
              "POST /api/ai/threads/{thread_id}/runs/{run_id}/cancel")  # fmt: skip


def test_three_operations_three_findings_in_every_report(tmp_path: Path, capsys) -> None:
    har = written(tmp_path / "runs.har", WRONG)
    code, document = audited([har], tmp_path / "report")
    printed = capsys.readouterr().out
    assert code == 1
    result = next(r for r in document["requirements"] if r["id"] == "RUN-STATUS")
    findings = result["findings"]
    assert sorted(f["operation"] for f in findings) == sorted(OPERATIONS)
    runs = next(f for f in findings if f["operation"] == OPERATIONS[0])
    assert runs["evidence"]["entry"] == 0
    assert runs["also_at"] == [f"{har}, entry 3", f"{har}, entry 4"]
    assert result["repeats"] == 2
    markdown = (tmp_path / "report" / "conformance.md").read_text()
    html = (tmp_path / "report" / "conformance.html").read_text()
    for operation in OPERATIONS:
        assert operation in printed and operation in markdown and operation in html, operation
    seen_again = f"{har}: entries 3, 4"  # the repeats' exchanges, named beside their finding
    assert seen_again in markdown and seen_again in html
