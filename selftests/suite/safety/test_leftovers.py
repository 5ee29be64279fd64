"""What a default run leaves on its target, counted in the target's own storage: one whole run of
the suite against the reference (by URL, its SQLite file beside), every request watched as it
arrives.

- at most three chat-kit sessions (the interface has no delete for them), each asking minutes,
  every chat-kit requirement judged (and passed) all the same, and the run saying how many stay
  and until when;
- every create that reaches the target was on the run's ledger, on disk, before it arrived
  (whatever credential it carried: the scenario's, the property layer's, the credential cases',
  the fixtures', schemathesis' own probes).
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from safety_support import ALT_TOKEN, TOKEN, Done, reference_app, run_suite, serve
from starlette.types import ASGIApp, Receive, Scope, Send

from assistant_conformance.contract.resources import LIFETIMES, create_at
from assistant_conformance.suite.safety.budget import LIMIT
from assistant_conformance.suite.safety.ledger import read_ledger

CHATKIT = "chatkit_secret"  # the reference's kind for a chat-kit session
LONGEST = LIFETIMES[1]  # seconds: minutes, what any body of the suite asks at most


class Witness:
    """Around the reference: as each create arrives, the run's intents on disk are counted; one
    that arrives before its intent is written down."""

    def __init__(self, app: ASGIApp, ledgers: Path) -> None:
        self.app, self.ledgers = app, ledgers
        self.arrived: Counter[str] = Counter()
        self.unwritten: list[str] = []
        self.lock = threading.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and create_at(scope["method"], scope["path"]):
            what = f"{scope['method']} {scope['path']}"
            with self.lock:
                self.arrived[what] += 1
                if self.intents()[what] < self.arrived[what]:
                    self.unwritten.append(what)
        await self.app(scope, receive, send)

    def intents(self) -> Counter[str]:
        found: Counter[str] = Counter()
        for path in self.ledgers.glob("*.jsonl"):
            for record in read_ledger(path):  # a line being written is left out
                if record.get("event") == "intent":
                    found[f"{record['method']} {record['path']}"] += 1
        return found


def sessions(db: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT data FROM resources WHERE kind = ?", (CHATKIT,)).fetchall()
    return [json.loads(data) for (data,) in rows]


def test_a_default_run_leaves_at_most_three_short_sessions_and_writes_every_create_first(
    tmp_path: Path,
) -> None:
    reports = tmp_path / "reports"
    witness = Witness(reference_app(tmp_path), reports / "ledger")
    with serve(witness) as url:
        target = ("--base-url", url, "--token", TOKEN, "--alt-token", ALT_TOKEN)
        run: Done = run_suite(reports, "-p", "no:randomly", *target, timeout=600)
    assert run.returncode == 0, run.output[-3000:]
    made = sessions(tmp_path / "reference.db")
    assert 1 <= len(made) <= LIMIT, made
    assert all(s["expires_after"] <= LONGEST for s in made), made
    said = re.search(
        rf"left: {len(made)} chat-kit sessions? \(the interface has no delete; (?:they|it) "
        r"expires? by \d{4}-\d\d-\d\dT\d\d:\d\dZ\)",
        run.output,
    )
    assert said, run.output[-3000:]
    verdicts = run.verdicts()
    assert {verdicts[r] for r in ("CHATKIT-STATUS", "CHATKIT-SECRET")} == {"pass"}, verdicts
    assert set(verdicts.values()) == {"pass"}, verdicts
    assert sum(witness.arrived.values()) > 300 and witness.unwritten == [], witness.unwritten[:20]
