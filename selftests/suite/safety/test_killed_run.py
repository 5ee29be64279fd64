"""What a run cannot remove is said, also after it was killed: a run against the reference by URL
is killed (SIGKILL) once it has made chat-kit sessions, then `--sweep` with the same report
folder removes everything that can be removed (counted in the reference's SQLite file) and says
how many chat-kit sessions stay and until when (the interface has no delete for them)."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from conftest import TOKEN_A, TOKEN_B
from safety_support import ROOT, run_suite, table_counts

CHATKIT = "chatkit_secret"  # the reference's kind for a chat-kit session
KEPT_BY_THE_REFERENCE = {"assistant", CHATKIT, "logs"}  # its own data; what has no delete


def live_sessions(db: Path) -> int:
    """Chat-kit sessions of the reference not expired yet (an expired one is gone for clients)."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT data FROM resources WHERE kind = ?", (CHATKIT,)).fetchall()
    return sum(json.loads(data)["expires_at"] > time.time() for (data,) in rows)


def made_so_far(ledger_dir: Path) -> tuple[int, int]:
    """Chat-kit sessions, and other resources, the run's ledger says it made so far."""
    sessions = others = 0
    for path in ledger_dir.glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # the line the kill cut
            sessions += record.get("event") == "left" and record.get("kind") == "chat-kit session"
            others += record.get("event") == "created"
    return sessions, others


def test_a_sweep_after_a_killed_run_removes_what_it_can_and_says_what_stays(
    start_server, tmp_path
) -> None:
    server = start_server(tmp_path / "reference.db")
    reports = tmp_path / "reports"
    target = ["--base-url", server.base_url, "--token", TOKEN_A, "--alt-token", TOKEN_B]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_API_")}
    run = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", f"--report-dir={reports}", "-o",
         f"cache_dir={reports}/.cache", "tests/scenario/test_files.py",
         "tests/scenario/test_threads.py", "tests/scenario/test_conversations.py", *target],
        cwd=ROOT, env=clean, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # mid-way: sessions made, and threads being made
        sessions, others = made_so_far(reports / "ledger")
        if sessions >= 2 and others >= 12:
            break
        time.sleep(0.1)
    run.send_signal(signal.SIGKILL)
    run.wait()
    made = table_counts(server.db_path)
    assert made.get(CHATKIT, 0) >= 2 and sum(made.values()) > made[CHATKIT] + 5, made

    swept = run_suite(reports, "--sweep", *target)
    assert swept.returncode == 0, swept.output
    left = table_counts(server.db_path)
    unknown = re.findall(r"left: (\d+) \w[\w -]* \(its create got no answer", swept.output)
    rest = {k: n for k, n in left.items() if k not in KEPT_BY_THE_REFERENCE and n}
    assert sum(rest.values()) <= sum(map(int, unknown)), (rest, swept.output)
    said = re.search(r"left: (\d+) chat-kit sessions? \(the interface has no delete; (?:they|it) "
                     r"expires? by (\d{4}-\d\d-\d\dT\d\d:\d\dZ)\)", swept.output)  # fmt: skip
    assert said and int(said.group(1)) == live_sessions(server.db_path), swept.output
    assert "removed" in swept.output and "sweep: 1 earlier runs" in swept.output
