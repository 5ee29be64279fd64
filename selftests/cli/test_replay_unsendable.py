"""`assistant-conformance replay`: a request the replay cannot send as it was (an empty bearer,
`Bearer `, which its HTTP client refuses as an illegal header value) is `not replayed`, with why:
never `still fails`, and no exit 1 of its own (nothing judged: 3)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import TOKEN_A

from assistant_conformance.proof.suiterun import child_environment


def report_with(folder: Path, base_url: str) -> Path:
    """A report folder with one finding: an empty bearer answered 2xx (as a run writes it)."""
    finding = {"id": "AUTH-INVALID-REJECTED-0a1b2c3d", "requirement": "AUTH-INVALID-REJECTED",
               "verdict": "fail", "expected": "not a 2xx: an empty bearer credential",
               "actual": "HTTP 200", "seed": 0, "test": "tests/scenario/test_auth.py::t",
               "target": base_url, "prefix": "",
               "check": {"kind": "status-class", "entry": 0, "classes": [1, 3, 4, 5]},
               "bounds": {"request_timeout": 5, "process_timeout": 10}}  # fmt: skip
    entry = {"startedDateTime": "2026-01-02T03:04:05.000Z", "time": 1,
             "request": {"method": "POST", "url": f"{base_url}/api/ai/threads/search",
                         "httpVersion": "HTTP/1.1", "cookies": [], "queryString": [],
                         "headers": [{"name": "Authorization", "value": "[REDACTED]"},
                                     {"name": "Content-Type", "value": "application/json"}],
                         "headersSize": -1, "bodySize": 2,
                         "postData": {"mimeType": "application/json", "text": "{}"}},
             "response": {"status": 200, "statusText": "", "httpVersion": "HTTP/1.1",
                          "cookies": [], "headers": [], "redirectURL": "", "headersSize": -1,
                          "bodySize": 2, "content": {"size": 2, "mimeType": "", "text": "[]"}},
             "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0},
             "_credential": "empty-bearer", "_provenance": []}  # fmt: skip
    (folder / "exchanges").mkdir(parents=True)
    har = {"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "pages": [],
                   "entries": [entry], "_finding": finding}}  # fmt: skip
    (folder / "exchanges" / f"{finding['id']}.har").write_text(json.dumps(har))
    return folder


def test_a_request_the_replay_cannot_send_is_not_replayed(reference_server, tmp_path) -> None:
    report = report_with(tmp_path / "report", reference_server.base_url)
    env = {**child_environment(), "ASSISTANT_API_TOKEN": TOKEN_A}
    done = subprocess.run([sys.executable, "-m", "assistant_conformance", "replay", str(report)],
                          env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert "still fails" not in done.stdout, done.stdout
    assert "AUTH-INVALID-REJECTED-0a1b2c3d  not replayed" in done.stdout
    assert "cannot be sent as it was" in done.stdout and "Bearer" in done.stdout
    assert done.returncode == 3, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and TOKEN_A not in done.stdout + done.stderr
