"""The runner: sends generated cases to the target with its token and turns every check failure
into a finding against a requirement (scope.py says which, and what the suite may demand at all).

Check failures never raise out of schemathesis: each becomes a finding (`findings.expect`), so
the verdict model decides (a MUST fails the test, a SHOULD warns).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, NoReturn

import httpx
import requests
from requests.structures import CaseInsensitiveDict
from schemathesis.checks import CheckContext, run_checks
from schemathesis.core.failures import Failure
from schemathesis.core.transport import Response
from schemathesis.engine.run import PhaseName
from schemathesis.generation.case import Case
from schemathesis.generation.meta import CoveragePhaseData
from schemathesis.openapi.checks import IgnoredAuth

from assistant_conformance.suite import door, exchange, findings, strictjson, transport
from assistant_conformance.suite.exchange import Exchange
from assistant_conformance.suite.guard import Guard
from assistant_conformance.suite.ledger import Ledger
from assistant_conformance.suite.openapi import by_label
from assistant_conformance.suite.property import mapping, probes
from assistant_conformance.suite.property.cases import (
    judges_positive,
    negations,
    only_last_event_id,
    operation_id,
)
from assistant_conformance.suite.property.judge import Judge
from assistant_conformance.suite.property.mapping import CHECKS, LAST, STATEFUL_ONLY
from assistant_conformance.suite.property.scope import (
    ERROR_JSON,
    passed_requirements,
    requirement_for,
    status_requirement,
)
from assistant_conformance.suite.property.sessions import through_the_door
from assistant_conformance.suite.safety import Session as RunSafety
from assistant_conformance.suite.settings import SuiteSettings
from assistant_conformance.suite.target import Target

EXCERPT = 600


class TransportBroken(Exception):
    """The target stopped answering; the layer stops sending instead of waiting out each case."""


class Withheld(Exception):
    """A generated write would touch data the run did not create: the case is not sent."""


def json_of(response: Response) -> Any:
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
    examples: int = 10
    ledger: Ledger | None = None  # what a generated create made: written down, removed at the end
    guard: Guard | None = None  # owned data only: a write never reaches what the run did not make
    withheld: list[str] = field(default_factory=list)  # cases the guard kept from being sent
    broken: str = ""
    sent: int = 0
    seen: Counter[str] = field(default_factory=Counter)
    probed: set[str] = field(default_factory=set)  # operations whose auth or query was probed
    judge: Judge = field(default_factory=Judge)

    @classmethod
    def for_run(
        cls, target: Target, settings: SuiteSettings, session: requests.Session, run: RunSafety
    ) -> Runner:
        """The runner of a suite run: its target, depth, timeout, ledger and guard."""
        through_the_door(session, settings)
        return cls(
            base_url=target.base_url,
            token=target.token,
            timeout=settings.request_timeout,
            session=session,
            examples=settings.examples,
            ledger=run.ledger,
            guard=run.guard,
        )

    def call_kwargs(self) -> dict[str, Any]:
        # The policy's headers and TLS here too: schemathesis' auth probes keep these kwargs
        # (not the session; see sessions.py).
        policy = transport.current()
        return {
            "base_url": self.base_url,
            "headers": {**policy.headers, "Authorization": f"Bearer {self.token}"},
            "timeout": self.timeout,
            "session": self.session,
            "verify": policy.requests_verify,
        }

    def wanted(self, case: Case) -> bool:
        """At depth N keep N // 10 (at least 1) coverage cases per scenario and field."""
        meta = case.meta
        if self.broken or meta is None or not isinstance(meta.phase.data, CoveragePhaseData):
            return not self.broken
        data = meta.phase.data
        described = meta.generation.mode.is_positive and data.description
        key = f"{case.operation.label}|{data.scenario}|{data.parameter}|{data.location}|{described}"
        self.seen[key] += 1
        return self.seen[key] <= max(1, self.examples // 10)

    def run(self, case: Case) -> None:
        """Stateless: send one generated case and check the answer."""
        if not self.wanted(case):
            return
        try:
            response = self.send(case)
        except (TransportBroken, Withheld):
            return
        self.evaluate(case, response)

    def send(self, case: Case) -> Response:
        if self.broken:
            raise TransportBroken(self.broken)
        self.withhold_if_not_owned(case)
        body = case.body if isinstance(case.body, dict) else None
        intent = (
            self.ledger.intend_path(case.method, case.formatted_path, body) if self.ledger else None
        )
        self.sent += 1
        try:
            response = case.call(**self.call_kwargs())
        except door.AnswerFault as fault:
            self._fault(case, fault)
        except (requests.Timeout, requests.ConnectionError, TimeoutError) as exc:
            reason = type(exc).__name__
            self.broken = f"{case.operation.label}: no answer within {self.timeout:g} s ({reason})"
            expected = f"an answer within {self.timeout:g} s"
            evidence = self._unanswered(case)
            requirement = status_requirement(operation_id(case))
            findings.expect(requirement, False, expected, self.broken, evidence)
            raise TransportBroken(self.broken) from None
        answer = json_of(response)
        if self.guard is not None:
            self.guard.remember(answer)
        if intent is not None and self.ledger is not None:
            self.ledger.created(intent, response.status_code, answer)
        return response

    def _fault(self, case: Case, fault: door.AnswerFault) -> NoReturn:
        """A fault of the answer (the door's bounds): a finding; an operation that answers too
        slowly or too much is given up (each case would cost the bound again)."""
        op = operation_id(case)
        requirement = door.requirement_for(status_requirement(op))
        expected = door.EXPECTED[fault.kind]
        self.judge.judge(op, requirement, False, expected, fault.what, fault.evidence, fault.kind)
        if fault.kind in (door.SLOW, door.SILENT, door.LARGE):
            self.broken = fault.what
            raise TransportBroken(fault.what) from None
        raise Withheld(fault.what) from None  # no answer to judge: this case is not taken

    def withhold_if_not_owned(self, case: Case) -> None:
        """Raise Withheld for a write on an identifier the target showed and the run did not
        create (e.g. a generated path that happens to name someone's thread): never sent."""
        if self.guard is None:
            return
        url = f"{self.base_url.rstrip('/')}{case.formatted_path}"
        request = httpx.Request(case.method, url, headers=self.call_kwargs()["headers"])
        owned = self.ledger.owned if self.ledger is not None else set()
        reason = self.guard.refusal(request, owned)
        if reason is not None:
            self.withheld.append(reason)
            raise Withheld(reason)

    def _unanswered(self, case: Case) -> Exchange | None:
        """Evidence for a request that got no answer: the request alone (and its curl)."""
        sent = case.as_transport_kwargs(
            base_url=self.base_url, headers=self.call_kwargs()["headers"]
        )
        fields = ("method", "url", "headers", "params", "json", "data", "files", "cookies")
        try:
            request = requests.Request(**{k: v for k, v in sent.items() if k in fields}).prepare()
        except (TypeError, ValueError):
            return None
        return exchange.from_requests(request)

    def evaluate(
        self, case: Case, response: Response, recorder: Any = None, linked_body: bool = False
    ) -> None:
        """Judge one answer: every applicable check, each failure charged to its requirement, and
        what held recorded as a pass (once per requirement) where the check exercised it."""
        self._finish_with_the_test()
        op = by_label()[case.operation.label]
        self.check_strict_json(op.operation_id, case, response)
        if case.meta is None or case.meta.generation.mode.is_positive:
            self.judge.control(op.operation_id, op.label, response.status_code)
        if 200 <= response.status_code < 300:
            probes.required_query(self, case, response)
            probes.gone(self, case, response)
        every = CHECKS + (STATEFUL_ONLY if recorder is not None else ()) + LAST
        checks = [c for c in every if self._applies(c.__name__, case, response, linked_body)]
        failures, completed = self._failures(checks, case, response, recorder)
        for name, failure in failures:
            req_id = requirement_for(name, case, response, failure)
            if req_id is not None:
                self._record(req_id, name, case, response, failure)
        failed = {name for name, _ in failures}
        for name in completed - failed:
            for req_id in passed_requirements(name, case, response):
                self.judge.judge(op.operation_id, req_id, True)

    def check_strict_json(self, operation: str, case: Case, response: Response) -> None:
        """A JSON answer parses by RFC 8259 (schemathesis, like Python, reads NaN as a number)."""
        if not strictjson.is_json(response.headers.get("content-type", [""])[0]):
            return
        if (wrong := strictjson.problem(response.content)) is not None:
            actual = f"{case.operation.label}: HTTP {response.status_code}; {wrong}"
            evidence = exchange.from_schemathesis(response)
            shape, expected = strictjson.REQUIREMENT, strictjson.EXPECTED
            self.judge.judge(operation, shape, False, expected, actual, evidence, wrong)

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
        kwargs = self.call_kwargs()
        phase = PhaseName.from_str(case.meta.phase.name.value) if case.meta is not None else None
        config = case.operation.schema.config.checks_config_for(
            operation=case.operation, phase=phase.value if phase is not None else None
        )
        ctx = CheckContext(
            override=case._override,
            auth=None,
            headers=CaseInsensitiveDict(kwargs["headers"]),
            config=config,
            transport_kwargs=kwargs,
            recorder=recorder,
            response_checks=None,
            phase=phase,
        )
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
        except (requests.Timeout, requests.ConnectionError):
            completed.discard("ignored_auth")
        return found, completed

    def _record(
        self, req_id: str, check: str, case: Case, response: Response, failure: Failure
    ) -> None:
        broke = negations(case) if check == "negative_data_rejection" else []
        key = f"{check}|{failure.title}|{'; '.join(n.describe() for n in broke)}"
        actual = f"{case.operation.label}: HTTP {response.status_code}; {failure.title}."
        actual += f" {_lines(failure.message)}"
        if broke:
            actual += f" [sent {'; '.join(n.describe(case) for n in broke)}]"
        evidence = exchange.from_schemathesis(response, drop_auth=isinstance(failure, IgnoredAuth))
        expected = mapping.EXPECTED.get(check, check)
        if req_id == ERROR_JSON:
            expected = "a 4xx answer with a JSON body, declared application/json"
        self.judge.judge(operation_id(case), req_id, False, expected, actual, evidence, key)


def _lines(message: str, limit: int = 3) -> str:
    return " ".join([line.strip() for line in message.splitlines() if line.strip()][:limit])
