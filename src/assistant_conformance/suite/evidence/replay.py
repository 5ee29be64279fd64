"""Replay a finding from its HAR (har.py): its exchanges sent again to a target (resend.py), then
its check judged again on the new answers, by the words of suite/judging/checks.py or, for a
schemathesis check, by that check run again (suite/property/replayed.py).

What a replay sends goes through the run's clients (suite/http/clients.py), with a guard and a
ledger of its own around them: a write reaches only what the replay created, and what it created
is removed at the end (`close`). What cannot be sent as it was is said, never judged
(unreplayed.py: NotReplayed). `assistant-conformance replay` (cli/replay.py) drives it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import httpx
import requests

from assistant_conformance.suite.evidence import unreplayed
from assistant_conformance.suite.evidence.har import Recorded
from assistant_conformance.suite.evidence.resend import Resend
from assistant_conformance.suite.http import clients, trail
from assistant_conformance.suite.http.policy import Policy
from assistant_conformance.suite.http.target import Target
from assistant_conformance.suite.judging import checks
from assistant_conformance.suite.property import compat, replayed
from assistant_conformance.suite.safety.ledger import ALT, MAIN
from assistant_conformance.suite.safety.removal import CleanupJson
from assistant_conformance.suite.safety.session import SafetySession


@dataclass
class Replayer:
    """Sends findings' exchanges to `target` and judges them again; `safety`: the replay's own
    guard and ledger (in the report folder)."""

    target: Target
    safety: SafetySession
    made: dict[str, httpx.Client] = field(default_factory=dict)
    checks_session: requests.Session | None = None  # schemathesis' checks send with requests

    @classmethod
    def open(cls, target: Target, policy: Policy, report_dir: Path) -> Replayer:
        return cls(target, SafetySession.for_replay(report_dir, target, policy))

    @property
    def tokens(self) -> dict[str, str | None]:
        return {MAIN: self.target.token, ALT: self.target.alt_token}

    def client(self, principal: str) -> httpx.Client:
        """The client of `principal` (no credential of its own: each exchange sends its own)."""
        if principal not in self.made:
            around = self.safety.around(principal, self.tokens.get(principal))
            policy = self.safety.policy
            self.made[principal] = clients.client(policy, self.target.base_url, around=around)
        return self.made[principal]

    def answers(
        self, recorded: Recorded, process_timeout: float, polls_within: float | None = None
    ) -> tuple[list[trail.Entry], checks.Check]:
        """Send the exchanges; the new answers by the index of the exchange they replay, and the
        finding's check with the new answers' values where it names the old ones. A polling loop
        polls as long as it did in the run, or `polls_within` seconds when given."""
        made_before = unreplayed.made_by_run(recorded)
        resend = Resend(self, recorded, process_timeout, polls_within, made_before)
        answers = resend.go()
        check = resend.check(recorded.check)
        unreplayed.judgeable(check, resend.stopped, resend.got)
        return answers, check

    def judge(
        self, check: checks.Check, requirement: str, answers: list[trail.Entry]
    ) -> checks.Verdict:
        """The finding's check (`requirement`'s) on the new answers."""
        if not isinstance(check, checks.SchemathesisCheck):
            return checks.evaluate(check, answers)
        policy = self.safety.policy
        compat.install(clients.adapter(policy))
        if self.checks_session is None:
            self.checks_session = clients.session(policy)
        kwargs = {
            "base_url": self.target.base_url,
            "headers": {**policy.headers, "Authorization": f"Bearer {self.target.token}"},
            "timeout": policy.deadline,
            "session": self.checks_session,
            "verify": policy.requests_verify,
        }
        try:
            return replayed.judge_again(check, requirement, answers[check.entry], kwargs)
        except LookupError as exc:  # no operation of the document: no case to judge again
            raise unreplayed.NotReplayed(str(exc)) from None

    def close(self) -> CleanupJson:
        """Close the clients and remove what the replay created: what was removed, what stays."""
        for client in self.made.values():
            client.close()
        if self.checks_session is not None:
            self.checks_session.close()
        return self.safety.finish(self.target)
