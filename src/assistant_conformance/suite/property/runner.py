"""The runner: sends generated cases to the target with its token and turns every check failure
into a finding against a requirement (suite/judging/schemathesis_charges.py says which).

Check failures never raise out of schemathesis: each becomes a finding (`findings.expect`), so
the verdict model decides (a MUST fails the test, a SHOULD warns).
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn
from urllib.parse import urlsplit

import requests
from schemathesis.checks import run_checks
from schemathesis.core.failures import Failure
from schemathesis.core.transport import Response
from schemathesis.generation.case import Case
from schemathesis.openapi.checks import IgnoredAuth

from assistant_conformance.contract.openapi import by_label, operation_label
from assistant_conformance.suite.config.settings import SuiteSettings
from assistant_conformance.suite.http import exchange
from assistant_conformance.suite.http.observe import LARGE, SILENT, SLOW, AnswerFault, Overdue
from assistant_conformance.suite.http.policy import Policy
from assistant_conformance.suite.http.target import Target
from assistant_conformance.suite.judging import answer_charges, findings, schemathesis_charges
from assistant_conformance.suite.judging.negations import (
    negations,
    only_last_event_id,
    operation_id,
)
from assistant_conformance.suite.property import compat, owned_bodies, probes, replayed
from assistant_conformance.suite.property.cases import judges_positive
from assistant_conformance.suite.property.judge import Judge
from assistant_conformance.suite.property.scope import CHECKS, LAST, STATEFUL_ONLY
from assistant_conformance.suite.safety.guard import NotOwned
from assistant_conformance.suite.safety.ledger import Ledger
from assistant_conformance.suite.safety.session import SafetySession


class TransportBroken(Exception):
    """The target stopped answering; the layer stops sending instead of waiting out each case."""


class Withheld(Exception):
    """A generated write would touch data the run did not create: the case is not sent."""


def answer_json(response: Response) -> Any:
    """The answer's JSON (None when it has none): what the guard and the ledger read."""
    if "json" not in response.headers.get("content-type", [""])[0]:
        return None
    try:
        return response.json()
    except ValueError:
        return None


@dataclass
class Runner:
    """Sends cases to the target and turns check failures into findings. One per pytest item."""

    base_url: str
    token: str
    timeout: float
    session: requests.Session
    policy: Policy
    examples: int = 10
    ledger: Ledger | None = None  # the run's: its prefix in names, what it created (owned ids)
    withheld: list[str] = field(default_factory=list)  # cases the guard kept from being sent
    broken: str = ""
    sent: int = 0
    seen: Counter[str] = field(default_factory=Counter)
    probed: set[str] = field(default_factory=set)  # operations whose auth or query was probed
    case_entry: int = -1  # the trail index of the case's exchange
    judge: Judge = field(default_factory=Judge)
    references: Mapping[str, str] = field(default_factory=dict)  # the user's KB references
    tag: str = field(default_factory=lambda: secrets.token_hex(3))  # this test's, in names
    named: int = 0  # names given in this test
    controlled: set[str] = field(default_factory=set)  # operations given the run's create

    @classmethod
    def for_run(
        cls, target: Target, settings: SuiteSettings, session: requests.Session, run: SafetySession
    ) -> Runner:
        """The runner of a suite run: its target, depth, timeout, policy and ledger; `session` is
        the main principal's (suite/http/clients.py: the run's policy, door and guard)."""
        return cls(
            base_url=target.base_url,
            token=target.token,
            timeout=settings.request_timeout,
            session=session,
            policy=run.policy,
            examples=settings.examples,
            ledger=run.ledger,
            references=settings.kb_references,
        )

    def call_kwargs(self) -> dict[str, Any]:
        # The policy's headers and TLS here too: schemathesis' auth probes keep these kwargs.
        return {
            "base_url": self.base_url,
            "headers": {**self.policy.headers, "Authorization": f"Bearer {self.token}"},
            "timeout": self.timeout,
            "session": self.session,
            "verify": self.policy.requests_verify,
        }

    def wanted(self, case: Case) -> bool:
        """At depth N keep N // 10 (at least 1) coverage cases per scenario and field (compat
        attaches no more to a test; a state machine's steps are not counted)."""
        key = compat.coverage_key(case)
        if self.broken or key is None:
            return not self.broken
        self.seen[key] += 1
        return self.seen[key] <= compat.coverage_per_key(self.examples)

    def begin(self) -> None:
        """A case (or a stateful scenario) begins: its findings keep the exchanges from here."""
        record = findings.current()
        record.window = len(record.exchanges)

    def run(self, case: Case) -> None:
        """Stateless: send one generated case and check the answer."""
        if not self.wanted(case):
            return
        self.begin()
        try:
            response = self.send(case)
        except (TransportBroken, Withheld):
            return
        self.evaluate(case, response)

    def send(self, case: Case) -> Response:
        """Send a case through the session (its guard writes a create to the ledger, keeps what
        the answer shows, and withholds a write on what the run did not create: Withheld)."""
        if self.broken:
            raise TransportBroken(self.broken)
        unique = self.unique_name(case)
        run = self.ledger.run_prefix if self.ledger is not None else "conformance"
        why = owned_bodies.own_body(case, self.references, unique, run) or self.unremovable(case)
        if why:
            self.withheld.append(why)
            raise Withheld(why)
        try:
            with owned_bodies.sending(case):
                response = case.call(
                    **self.call_kwargs(), **owned_bodies.upload_named(case, unique)
                )
        except (NotOwned, Overdue) as refused:  # not sent: not the run's data, or a side request
            if isinstance(refused, Overdue) and not refused.side:  # (its plain ones still go)
                raise
            self.withheld.append(str(refused))
            raise Withheld(str(refused)) from None
        except AnswerFault as fault:
            self.sent += 1
            self._fault(case, fault)
        self.sent += 1
        self.case_entry = len(findings.current().exchanges) - 1  # the door's entry of it
        return response

    def unremovable(self, case: Case) -> str:
        """Why a case is not sent, where what it creates nothing removes (owned_bodies.unmade); the
        run's create of it made the control its refusals are judged against."""
        why, control = owned_bodies.unmade(case, self.ledger)
        if control is not None and case.operation.label not in self.controlled:
            self.controlled.add(case.operation.label)
            op = by_label()[case.operation.label]
            self.judge.control(op.operation_id, op.label, control.status_code)
        return why

    def _fault(self, case: Case, fault: AnswerFault) -> NoReturn:
        """A fault of the answer (the door's bounds): a finding (none where the suite's own load
        may explain it); an operation that answers a request with the run's credential too slowly,
        too much or not at all is given up (each case would cost the bound again)."""
        if fault.loaded:
            raise Withheld(f"{fault.what}; {fault.loaded}") from None
        self._judge_fault(operation_id(case), fault)
        given_up = fault.kind in (SLOW, SILENT, LARGE) or fault.evidence.status is None
        if given_up and answer_charges.with_run_credential(fault.evidence):
            self.broken = fault.what
            raise TransportBroken(fault.what) from None
        raise Withheld(fault.what) from None  # no answer to judge: this case is not taken

    def _judge_fault(self, operation: str, fault: AnswerFault) -> None:
        """Recorded, never held for the operation's control: no whole answer is no refusal of
        the suite's reading of a body (and a target that answers nothing accepts nothing)."""
        requirement = answer_charges.fault_requirement(fault)
        expected = answer_charges.FAULT_EXPECTED[fault.kind]
        fault.charged = True
        self.judge.judge(
            operation, requirement, False, expected, fault.what, fault.evidence, fault.kind,
            answer_charges.fault_check(fault.kind), hold=False,
        )  # fmt: skip

    def get(self, url: str) -> requests.Response | None:
        """A GET of `url` with the run's credential, beside the generated cases (probes.py)."""
        kwargs = self.call_kwargs()
        try:
            return self.session.get(url, headers=kwargs["headers"], timeout=self.timeout)
        except AnswerFault as fault:  # judged as any answer the run waited for in vain
            found = by_label().get(operation_label("GET", urlsplit(url).path))
            self._judge_fault(found.operation_id if found else "", fault)
            return None

    def unique_name(self, case: Case) -> str:
        """A name no other body of the run carries: run prefix, operation, test, count."""
        self.named += 1
        run = self.ledger.run_prefix if self.ledger is not None else "conformance"
        return f"{run}-{operation_id(case)}-{self.tag}-{self.named}"

    def names_known(self, case: Case, linked: Collection[str], linked_body: bool = False) -> bool:
        """Whether every reference (path ids, the query and body fields the document marks so)
        names what the run created (the ledger) or followed a link to: only then is the request
        one the document shows valid (its status judged; owned_bodies.names_owned)."""
        owned = self.ledger.owned if self.ledger is not None else set()
        return owned_bodies.names_owned(case, owned, linked, linked_body)

    def evaluate(
        self,
        case: Case,
        response: Response,
        recorder: Any = None,
        linked_body: bool = False,
        linked: Collection[str] = (),
    ) -> None:
        """Judge one answer: every applicable check, each failure charged to its requirement, and
        what held recorded as a pass (once per requirement) where the check exercised it.
        `linked`: the path and query parameters a link of the state machine filled in."""
        self._finish_with_the_test()
        op = by_label()[case.operation.label]
        if case.meta is None or case.meta.generation.mode.is_positive:
            self.judge.control(op.operation_id, op.label, response.status_code)
        if 200 <= response.status_code < 300:
            probes.required_query(self.get, self.probed, case, response)
            probes.gone(self.get, case, response)
        every = CHECKS + (STATEFUL_ONLY if recorder is not None else ()) + LAST
        checks = [c for c in every if self._applies(c.__name__, case, response, linked_body)]
        failures, completed = self._failures(checks, case, response, recorder)
        known = self.names_known(case, linked, linked_body)
        for name, failure in failures:
            req_id = schemathesis_charges.check_failure(name, case, response, failure, known)
            if req_id is not None:
                note = ""
                if (
                    req_id == schemathesis_charges.POSITIVE["kb"]
                ):  # which body, what it said, the minimal one
                    note = owned_bodies.refused_note(self, case, answer_json(response))
                self._record(req_id, name, case, response, failure, note)
        failed = {name for name, _ in failures}
        for name in completed - failed:
            for req_id in schemathesis_charges.check_passed(name, case, response, known):
                self.judge.judge(op.operation_id, req_id, True)

    def _finish_with_the_test(self) -> None:
        """Held judgements are settled as the test ends (its record's finalizers)."""
        if not self.judge.finished and self.judge.finish not in findings.current().finalizers:
            findings.current().finalizers.append(self.judge.finish)

    def _applies(self, name: str, case: Case, response: Response, linked_body: bool) -> bool:
        if name in ("negative_data_rejection", "missing_required_header"):
            return not only_last_event_id(case)
        if name == "positive_data_acceptance":
            return judges_positive(case, linked_body)
        if name == "ignored_auth":  # two extra requests per 2xx: once per operation is enough
            if not 200 <= response.status_code < 300 or case.operation.label in self.probed:
                return False
            self.probed.add(case.operation.label)
        return True

    def _failures(
        self, checks: list[Any], case: Case, response: Response, recorder: Any
    ) -> tuple[list[tuple[str, Failure]], set[str]]:
        """Run the checks in one context (as Case.validate_response does): each failure with its
        check's name, and the names of the checks that ran to their end."""
        ctx = compat.check_context(case, self.call_kwargs(), recorder)
        found: list[tuple[str, Failure]] = []
        completed = {c.__name__ for c in checks}
        # A probe of ignored_auth (the last check) that gets no answer proves nothing either way.
        try:
            run_checks(
                case=case,
                response=response,
                ctx=ctx,
                checks=checks,
                on_failure=lambda name, _, failure: found.append((name, failure)),
            )
        except AnswerFault as fault:  # a probe without a credential got no answer in bounds
            completed.discard("ignored_auth")
            self._judge_fault(operation_id(case), fault)
        except Overdue as unasked:  # a probe without a credential not sent: nothing proved
            if not unasked.side:
                raise
            completed.discard("ignored_auth")
        return found, completed

    def _record(
        self,
        req_id: str,
        check: str,
        case: Case,
        response: Response,
        failure: Failure,
        note: str = "",
    ) -> None:
        broke = negations(case) if check == "negative_data_rejection" else []
        key = f"{check}|{failure.title}|{'; '.join(n.describe() for n in broke)}"
        actual = f"{case.operation.label}: HTTP {response.status_code}; {failure.title}."
        actual += f" {_lines(failure.message)}{note}"
        if broke:
            actual += f" [sent {'; '.join(n.describe(case) for n in broke)}]"
        evidence = exchange.from_schemathesis(response, drop_auth=isinstance(failure, IgnoredAuth))
        expected = schemathesis_charges.EXPECTED.get(check, check)
        if req_id == schemathesis_charges.ERROR_JSON:
            expected = schemathesis_charges.ERROR_JSON_EXPECTED
        replay = replayed.replay_check(check, failure, self.case_entry)
        self.judge.judge(operation_id(case), req_id, False, expected, actual, evidence, key, replay)


def _lines(message: str, limit: int = 3) -> str:
    return " ".join([line.strip() for line in message.splitlines() if line.strip()][:limit])
