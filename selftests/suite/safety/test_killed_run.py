"""What a run cannot remove is said, also after it was killed: a run against the reference by URL
is killed (SIGKILL), then `--sweep` with the same report folder removes everything that can be
removed and says what stays; the reference's own storage (its SQLite file) is counted after.

- mid-way: once the run has made chat-kit sessions and is making threads;
- between a create's request and its answer (the target made the resource and holds the answer
  until the kill): a thread, a conversation, a store item (the sweep finds each by the run's mark
  and removes it: exit 0), a knowledge base (no list in the interface: the sweep names it, and
  exits 3 while it may remain), a chat-kit session (no delete: named, with nothing to remove).

Nothing of the run stays on the target but chat-kit sessions and what the sweep names.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import TOKEN_A, TOKEN_B
from safety_support import ALT_TOKEN, ROOT, TOKEN, reference_app, run_suite, serve, table_counts
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assistant_conformance.proof.suiterun import child_environment

CHATKIT = "chatkit_secret"  # the reference's kind for a chat-kit session
KEPT_BY_THE_REFERENCE = {"assistant", CHATKIT, "logs"}  # its own data; what has no delete
CLEAN = child_environment()
# A create that could not be looked for, its mark when its body carried one (a copy's has none).
COULD_NOT_LOOK = re.compile(r"could not look for: (\w[\w -]*?) (?:POST|PUT) \S+?(?: \((.*)\))?:")


def live_sessions(db: Path) -> int:
    """Chat-kit sessions of the reference not expired yet (an expired one is gone for clients)."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT data FROM resources WHERE kind = ?", (CHATKIT,)).fetchall()
    return sum(json.loads(data)["expires_at"] > time.time() for (data,) in rows)


def made_so_far(ledger_dir: Path) -> tuple[int, int]:
    """Chat-kit sessions, and other resources, the run's ledger says it made so far."""
    sessions = others = 0
    for path in ledger_dir.glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").split("\n"):
            try:
                record = json.loads(line)
            except ValueError:
                continue  # the line the kill cut
            sessions += record.get("event") == "left" and record.get("kind") == "chat-kit session"
            others += record.get("event") == "created"
    return sessions, others


def killed_run(reports: Path, base_url: str, tests: tuple[str, ...]) -> subprocess.Popen[bytes]:
    target = ["--base-url", base_url, "--token", TOKEN, "--alt-token", ALT_TOKEN]
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", f"--report-dir={reports}",
         "-o", f"cache_dir={reports}/.cache", *tests, *target],
        cwd=ROOT, env=CLEAN, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def remaining(db: Path) -> dict[str, int]:
    """What the target holds that the run could have made (not its own data, nor sessions)."""
    return {k: n for k, n in table_counts(db).items() if k not in KEPT_BY_THE_REFERENCE and n}


def test_a_sweep_after_a_killed_run_removes_what_it_can_and_says_what_stays(
    start_server, tmp_path
) -> None:
    server = start_server(tmp_path / "reference.db")
    reports = tmp_path / "reports"
    target = ["--base-url", server.base_url, "--token", TOKEN_A, "--alt-token", TOKEN_B]
    run = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", f"--report-dir={reports}", "-o",
         f"cache_dir={reports}/.cache", "tests/scenario/test_files.py",
         "tests/scenario/test_threads.py", "tests/scenario/test_conversations.py", *target],
        cwd=ROOT, env=CLEAN, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
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
    named = COULD_NOT_LOOK.findall(swept.output)
    assert swept.returncode == (3 if named else 0), swept.output
    rest = remaining(server.db_path)
    assert sum(rest.values()) <= len(named), (rest, swept.output)
    said = re.search(r"left: (\d+) chat-kit sessions? \(the interface has no delete; (?:they|it) "
                     r"expires? by (\d{4}-\d\d-\d\dT\d\d:\d\dZ)\)", swept.output)  # fmt: skip
    assert said and int(said.group(1)) == live_sessions(server.db_path), swept.output
    assert "removed" in swept.output and "sweep: 1 earlier runs" in swept.output


class HoldsAnswer:
    """Around the reference: the `nth` request matching `what` ("METHOD /path") is served (the
    resource made), and its answer held back until the server stops; `held` is set then."""

    def __init__(self, app: ASGIApp, what: str, nth: int) -> None:
        self.app, self.pattern, self.nth = app, re.compile(what), nth
        self.seen = 0
        self.held = threading.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = f"{scope.get('method')} {scope.get('path')}"
        if scope["type"] != "http" or not self.pattern.fullmatch(key):
            await self.app(scope, receive, send)
            return
        self.seen += 1
        if self.seen != self.nth:
            await self.app(scope, receive, send)
            return
        kept: list[Message] = []

        async def keep(message: Message) -> None:
            kept.append(message)

        await self.app(scope, receive, keep)  # made on the target; the answer never leaves
        self.held.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            return


KILL_POINTS = {  # kind (the reference's), the request held, the tests that send it, its nth
    "thread": ("POST /api/ai/threads", "tests/scenario/test_threads.py", 3),
    "conversation": ("POST /api/ai/conversations", "tests/scenario/test_conversations.py", 2),
    "store_item": ("PUT /api/ai/store/items", "tests/scenario/test_store.py", 1),
    "knowledgebase": ("POST /api/ai/v1/kb", "tests/scenario/test_knowledge.py", 2),
    CHATKIT: ("POST /api/ai/v1/chatkit/sessions", "tests/scenario/test_files.py", 1),
}


@pytest.mark.parametrize("kind", list(KILL_POINTS))
def test_a_run_killed_before_a_create_was_answered_leaves_only_what_the_sweep_names(
    tmp_path: Path, kind: str
) -> None:
    what, tests, nth = KILL_POINTS[kind]
    holding = HoldsAnswer(reference_app(tmp_path), what, nth)
    reports = tmp_path / "reports"
    with serve(holding) as url:
        run = killed_run(reports, url, (tests,))
        try:
            assert holding.held.wait(120), f"no {what} #{nth} arrived"
            made = table_counts(tmp_path / "reference.db")
            assert made.get(kind, 0) >= 1, made  # made on the target, unanswered
        finally:
            run.send_signal(signal.SIGKILL)
            run.wait()
        swept = run_suite(reports, "--sweep", "--base-url", url, "--token", TOKEN,
                          "--alt-token", ALT_TOKEN)  # fmt: skip
    named = COULD_NOT_LOOK.findall(swept.output)
    rest = remaining(tmp_path / "reference.db")
    if kind == "knowledgebase":  # no list in the interface: named by its mark, and may remain
        assert swept.returncode == 3 and len(named) == 1, swept.output
        assert named[0][0] == "knowledge base" and rest == {kind: 1}, (named, rest)
        assert kb_names(tmp_path / "reference.db") == re.findall(r"'([^']+)'", named[0][1])
    else:
        assert swept.returncode == 0 and named == [], swept.output
        assert rest == {}, (rest, swept.output)
    if kind == CHATKIT:  # no delete: said, with its create's request, never removed
        said = re.search(r"left: 1 chat-kit session \(its create got no answer; the interface "
                         r"has no delete\)", swept.output)  # fmt: skip
        assert said and table_counts(tmp_path / "reference.db")[CHATKIT] == 1, swept.output


def kb_names(db: Path) -> list[str]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT data FROM resources WHERE kind = 'knowledgebase'").fetchall()
    return [json.loads(data)["name"] for (data,) in rows]
