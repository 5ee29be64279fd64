"""The run's safety session: its guard and ledger, put around each principal's clients
(`around`), the clean-up at the end (or --no-cleanup), and the report lines. The guard every
request passes is suite/safety/guard.py (around the clients: guarded.py); the ledger ledger.py.
A replay opens one of its own (`for_replay`). The clients the guard is around (GUARDED_CLIENTS:
a test that sends through others is skipped up front under --read-only, by the plugin).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from assistant_conformance.report import redact
from assistant_conformance.suite.config.run_folder import RunFolder
from assistant_conformance.suite.config.settings import SuiteSettings
from assistant_conformance.suite.http import clients
from assistant_conformance.suite.http.observe import AnswerFault, Overdue
from assistant_conformance.suite.http.policy import Policy
from assistant_conformance.suite.http.target import Target, probe
from assistant_conformance.suite.safety.budget import BUDGET_FILE, Allowance
from assistant_conformance.suite.safety.guard import Guard
from assistant_conformance.suite.safety.guarded import Guarding
from assistant_conformance.suite.safety.ledger import (
    ALT,
    LEDGER_DIR,
    MAIN,
    Ledger,
    LedgerLine,
    read_ledger,
)
from assistant_conformance.suite.safety.removal import CleanupJson

GUARDED_CLIENTS = ("api", "alt_api", "anonymous_api")


@dataclass
class SafetySession:
    guard: Guard
    ledger: Ledger
    policy: Policy
    # What the end of the run did: removed, kept (--no-cleanup), and what stays on the target.
    record: CleanupJson | None = None

    @classmethod
    def open(
        cls,
        settings: SuiteSettings,
        target: Target,
        policy: Policy,
        shared: RunFolder | None = None,
    ) -> SafetySession:
        """The run's; `shared`: where its processes share counts (its budget of what cannot be
        removed among them)."""

        def status_now() -> int | None:
            try:
                return probe(target, policy).status_code
            except (httpx.HTTPError, AnswerFault, Overdue):
                return None

        guard = Guard(
            settings.read_only,
            settings.request_timeout,
            settings.max_response_size,
            probe=status_now,
        )
        budget = Allowance((shared or RunFolder()).counts(BUDGET_FILE))
        ledger = Ledger(settings.report_dir / LEDGER_DIR, target.base_url, budget=budget)
        return cls(guard, ledger, policy)

    @classmethod
    def for_replay(cls, report_dir: Path, target: Target, policy: Policy) -> SafetySession:
        """A replay's own: what it creates goes to a ledger of its own in the report folder."""
        session = cls(
            Guard(False, policy.deadline, policy.cap),
            Ledger(report_dir / LEDGER_DIR, target.base_url),
            policy,
        )
        session.ledger.hold()
        return session

    def around(self, principal: str, token: str | None) -> Guarding:
        """The guard and ledger around a client of `principal` (`token`: its own)."""
        return Guarding(self.guard, lambda: self.ledger, principal, token)

    def finish(self, target: Target, keep: bool = False) -> CleanupJson:
        """Remove what the run created, newest first (or keep it: --no-cleanup); record what
        stays on the target, and why."""
        self.guard.active = False
        where, run = self.ledger.path, self.ledger.run_prefix
        self.record = CleanupJson(run=run, ledger=str(where), removed=0, kept=0, left=[])
        if keep:
            self.record["kept"] = self.ledger.keep()
            self.record["left"] = [item.as_dict() for item in self.ledger.undeletable]
            self.ledger.release()
            return self.record
        with cleanup_clients(target, self.policy) as clients:
            left = self.ledger.clean_up(clients)
        self.ledger.release()
        removed = sum(1 for r in _records(where) if r.get("event") == "removed")
        self.record["removed"], self.record["left"] = removed, [item.as_dict() for item in left]
        return self.record


def _records(path: Path) -> list[LedgerLine]:
    return read_ledger(path) if path.exists() else []


@contextmanager
def cleanup_clients(target: Target, policy: Policy) -> Iterator[dict[str, httpx.Client]]:
    """Clients without the guard (through the run's policy and door) of each principal the run
    holds a token of."""
    tokens = {MAIN: target.token, ALT: target.alt_token}
    made = {
        name: clients.client(policy, target.base_url, token)
        for name, token in tokens.items()
        if token
    }
    try:
        yield made
    finally:
        for client in made.values():
            client.close()


def breaches(session: SafetySession | None) -> list[str]:
    """A line for the end of the terminal output when a read-only run saw writes succeed."""
    if session is None or not session.guard.breaches:
        return []
    seen = "; ".join(session.guard.breaches[:10])
    return [
        redact.text(
            f"read-only mode: the target accepted writes expected to change nothing: {seen}"
        )
    ]
