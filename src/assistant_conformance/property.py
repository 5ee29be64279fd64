"""The property layer's glue: schemathesis over spec/openapi.yaml, run against the target with
its token, every check failure recorded as a finding against a requirement (property_scope says
which, and what the suite may demand at all).

Used by tests/test_property.py (one pytest item per operation) and tests/test_stateful.py (one
links-driven state machine per chain). Check failures never raise out of schemathesis: each becomes
a finding (`findings.expect`), so the verdict model decides (a MUST fails the test, a SHOULD warns).
Deterministic: the seed of every operation's test derives from --seed; --examples N sets the
fuzzed cases per operation, N // 10 coverage cases per scenario and field, and about 4 x N
stateful scenarios.
"""

from __future__ import annotations

import time
from collections import Counter
from contextlib import suppress
from dataclasses import dataclass, field
from functools import cache
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
import hypothesis
import requests
import schemathesis
from requests.structures import CaseInsensitiveDict
from schemathesis.checks import CheckContext, run_checks
from schemathesis.core.failures import Failure
from schemathesis.core.transport import Response
from schemathesis.engine.run import PhaseName
from schemathesis.generation import derive_operation_seed
from schemathesis.generation.case import Case
from schemathesis.generation.meta import CoveragePhaseData
from schemathesis.openapi.checks import IgnoredAuth

from . import findings
from .catalogue import OPENAPI_PATH
from .exchange import Exchange
from .ledger import Ledger
from .property_scope import (
    CHECKS,
    LAST,
    REQUIRED_QUERY,
    STATEFUL_ONLY,
    by_label,
    gone_requirement,
    judges_positive,
    negations,
    only_last_event_id,
    operation_id,
    requirement_for,
    requirements,
    stateful_requirements,
    status_requirement,
)
from .safety import Guard
from .safety import Session as RunSafety
from .settings import SuiteSettings
from .target import Target

__all__ = ["AREAS", "Runner", "by_label", "configure", "requirements", "run_state_machine"]
__all__ += ["schema", "stateful_requirements"]

NO_POOL = {"responses": False}
MAX_STREAM_EVENTS = 10  # a stream is also cut at the request timeout, in total
FINDINGS_PER_REQUIREMENT = 5  # per test: the first few distinct ones, not a flood
EXCERPT = 600
EXPECTED = {
    "not_a_server_error": "no 5xx answer",
    "status_code_conformance": "the documented success status, or a 4xx for input refused",
    "content_type_conformance": "the Content-Type the document declares for this answer",
    "response_schema_conformance": "a body with the identifiers the suite's OpenAPI document names",
    "negative_data_rejection": "a 4xx for input that breaks what the document declares",
    "positive_data_acceptance": "a 2xx (or 404 for an unknown id) for a body the document allows",
    "missing_required_header": "a 401 for a request without Authorization",
    "ignored_auth": "a 401/403 for the same request without (or with an invalid) credential",
    "use_after_free": "404 for a resource deleted before",
    "ensure_resource_availability": "the resource just created can be used",
}
# --- schemathesis set-up ------------------------------------------------------------------------


@cache
def schema() -> Any:
    """spec/openapi.yaml, loaded once; the seed and depth are applied per test (see configure)."""
    config = schemathesis.Config.from_dict(
        {
            "generation": {"mode": "all", "allow-x00": False},
            # Identifiers come from links only, never from other answers (no extra data sources):
            # a DELETE must never reach a resource the suite did not create.
            "phases": {
                "coverage": {"unexpected-methods": [], "extra-data-sources": NO_POOL},
                "fuzzing": {"extra-data-sources": NO_POOL},
                "stateful": {"inference": {"algorithms": []}},  # the document's links only
            },
            "checks": {
                "negative_data_rejection": {"expected-statuses": ["4xx", "5xx"]},
                "positive_data_acceptance": {
                    "expected-statuses": ["2xx", "401", "403", "404", "409", "429", "5xx"]
                },
            },
            "max-stream-events": MAX_STREAM_EVENTS,
            "warnings": False,
        }
    )
    return schemathesis.openapi.from_path(str(OPENAPI_PATH), config=config)


def hypothesis_settings(
    examples: int, base: hypothesis.settings | None = None, **extra: Any
) -> hypothesis.settings:
    return hypothesis.settings(
        base,
        max_examples=examples,
        database=None,
        deadline=None,
        derandomize=False,
        suppress_health_check=list(hypothesis.HealthCheck),
        **extra,
    )


def configure(test: Any, label: str, seed: int, examples: int) -> None:
    """Apply the suite's seed and depth to one operation's generated (hypothesis) test."""
    test._hypothesis_internal_use_seed = derive_operation_seed(seed, label)
    test._hypothesis_internal_use_settings = hypothesis_settings(
        examples, test._hypothesis_internal_use_settings
    )


# --- running cases and recording findings ------------------------------------------------------


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
    recorded: Counter[str] = field(default_factory=Counter)
    probed: set[str] = field(default_factory=set)  # operations whose auth or query was probed

    @classmethod
    def for_run(
        cls, target: Target, settings: SuiteSettings, session: requests.Session, run: RunSafety
    ) -> Runner:
        """The runner of a suite run: its target, depth, timeout, ledger and guard."""
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
        headers = {"Authorization": f"Bearer {self.token}"}
        return {
            "base_url": self.base_url,
            "headers": headers,
            "timeout": self.timeout,
            "session": self.session,
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
        return exchange_of_requests(request)

    def evaluate(
        self, case: Case, response: Response, recorder: Any = None, linked_body: bool = False
    ) -> None:
        if 200 <= response.status_code < 300:
            self.probe_required_query(case, response)
            self.probe_gone(case, response)
        every = CHECKS + (STATEFUL_ONLY if recorder is not None else ()) + LAST
        checks = [c for c in every if self._applies(c.__name__, case, response, linked_body)]
        for name, failure in self._failures(checks, case, response, recorder):
            req_id = requirement_for(name, case, response, failure)
            if req_id is not None:
                self._record(req_id, name, case, response, failure)

    def probe_required_query(self, case: Case, response: Response) -> None:
        """Once per operation, on a request the target answered 2xx (a live resource, when a link
        supplied the path): the same request without each required query parameter is refused."""
        op = by_label()[case.operation.label]
        if op.id not in REQUIRED_QUERY or f"query:{op.id}" in self.probed:
            return
        self.probed.add(f"query:{op.id}")
        url = urlsplit(str(response.request.url))
        for name in op.required_query:
            kept = [(k, v) for k, v in parse_qsl(url.query, keep_blank_values=True) if k != name]
            probe = self._send_probe("GET", urlunsplit(url._replace(query=urlencode(kept))))
            if probe is not None and 200 <= probe.status_code < 300:
                expected = f"a 4xx for {op.label} without its required query parameter {name}"
                actual = f"HTTP {probe.status_code} without `{name}`"
                findings.expect(
                    REQUIRED_QUERY[op.id], False, expected, actual, exchange_of_requests(probe)
                )

    def probe_gone(self, case: Case, response: Response) -> None:
        """After a DELETE the target answered 2xx: a GET of the same resource no longer finds it
        (a 202 may finish later, so the GET is retried for about a second)."""
        op = by_label()[case.operation.label]
        requirement = gone_requirement(op)
        if requirement is None:
            return
        probe = self._send_probe("GET", str(response.request.url))
        for _ in range(3):
            if probe is None or not 200 <= probe.status_code < 300:
                return
            time.sleep(0.3)
            probe = self._send_probe("GET", str(response.request.url))
        if probe is None or not 200 <= probe.status_code < 300:
            return
        expected = f"404 for the resource {op.label} deleted (HTTP {response.status_code})"
        findings.expect(
            requirement,
            False,
            expected,
            f"GET answered HTTP {probe.status_code}",
            exchange_of_requests(probe),
        )

    def _send_probe(self, method: str, url: str) -> requests.Response | None:
        try:
            return self.session.request(
                method, url, headers=self.call_kwargs()["headers"], timeout=self.timeout
            )
        except requests.RequestException:
            return None

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
    ) -> list[tuple[str, Failure]]:
        """Run the checks in one context (as Case.validate_response does), naming each failure's."""
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
        # A probe of ignored_auth (the last check) that gets no answer proves nothing either way.
        with suppress(requests.Timeout, requests.ConnectionError):
            run_checks(
                case=case,
                response=response,
                ctx=ctx,
                checks=checks,
                on_failure=lambda name, _, failure: found.append((name, failure)),
            )
        return found

    def _record(
        self, req_id: str, check: str, case: Case, response: Response, failure: Failure
    ) -> None:
        summary = (
            "; ".join(n.describe() for n in negations(case))
            if check == "negative_data_rejection"
            else ""
        )
        key = f"{req_id}|{check}|{failure.title}|{summary}"
        self.recorded[key] += 1
        self.recorded[req_id] += 1
        if self.recorded[key] > 1 or self.recorded[req_id] > FINDINGS_PER_REQUIREMENT:
            return
        actual = f"{case.operation.label}: HTTP {response.status_code}; {failure.title}."
        actual += f" {_lines(failure.message)}"
        if summary:
            actual += f" [{summary}]"
        evidence = exchange_of(response, drop_auth=isinstance(failure, IgnoredAuth))
        findings.expect(req_id, False, EXPECTED.get(check, check), actual, evidence)


def exchange_of(response: Response, drop_auth: bool = False) -> Exchange:
    """The suite's evidence (redacted excerpt and curl) from a schemathesis response."""
    request = response.request
    headers = {
        k: v
        for k, v in _text_headers(request.headers).items()
        if not (drop_auth and k.lower() == "authorization")
    }
    body = request.body.encode() if isinstance(request.body, str) else request.body
    return Exchange(
        method=str(request.method),
        url=str(request.url),
        request_headers=headers,
        request_body=body if isinstance(body, bytes) else None,
        status=response.status_code,
        response_headers={k: ", ".join(v) for k, v in response.headers.items()},
        response_excerpt=response.content[:EXCERPT].decode("utf-8", "replace"),
    )


def _text_headers(headers: Any) -> dict[str, str]:
    return {k: v.decode("latin-1") if isinstance(v, bytes) else str(v) for k, v in headers.items()}


def exchange_of_requests(sent: requests.PreparedRequest | requests.Response) -> Exchange:
    """Evidence of a request sent with requests: with its answer, or alone (none came)."""
    response = sent if isinstance(sent, requests.Response) else None
    request = sent.request if isinstance(sent, requests.Response) else sent
    body = request.body.encode() if isinstance(request.body, str) else request.body
    return Exchange(
        method=str(request.method),
        url=str(request.url),
        request_headers=_text_headers(request.headers),
        request_body=body if isinstance(body, bytes) else None,
        status=response.status_code if response is not None else None,
        response_headers=dict(response.headers) if response is not None else {},
        response_excerpt=response.text[:EXCERPT] if response is not None else "",
    )


def _lines(message: str, limit: int = 3) -> str:
    return " ".join([line.strip() for line in message.splitlines() if line.strip()][:limit])


# --- stateful -----------------------------------------------------------------------------------


RUN_CREATES = ("createRun", "streamRun", "waitRun")
# One state machine per chain of the document's links, each with its share of the scenarios.
AREAS = {
    "knowledge bases and documents": (("AI/v1", "AI/Knowledges"), 1.0),
    "threads and runs": (("AI/Threads",), 1.5),
    "conversations and messages": (("AI/Conversations",), 1.0),
    "context files": (("AI/Contexts",), 0.5),
}


def state_machine(tags: tuple[str, ...]) -> Any:
    """The links among the operations of `tags` as a state machine. Scenarios start at operations
    that create a resource from nothing (POST without path parameters): schemathesis' heuristics
    would drop the knowledge-base creates, reading workspaceId/integrationId as foreign keys."""
    import schemathesis.specs.openapi.stateful as stateful

    original = stateful.is_likely_root_transition
    stateful.is_likely_root_transition = lambda operation, *_: (
        operation.method == "post" and not operation.path_parameters
    )
    try:
        return schema().include(tag=list(tags)).as_state_machine()
    finally:
        stateful.is_likely_root_transition = original


def first_assistant(runner: Runner) -> str | None:
    """An assistant to run: deployed servers need `assistant_id`, which no link provides."""
    try:
        response = runner.session.post(
            f"{runner.base_url}/api/ai/assistants/search",
            json={"limit": 1},
            headers=runner.call_kwargs()["headers"],
            timeout=runner.timeout,
        )
        found = response.json() if response.ok else []
    except (requests.RequestException, ValueError):
        return None
    first = found[0] if isinstance(found, list) and found else None
    return first.get("assistant_id") if isinstance(first, dict) else None


def run_state_machine(runner: Runner, area: str, seed: int, examples: int, steps: int) -> int:
    """Follow the links of one area (create -> use -> delete) for its share of about 4 x
    `examples` scenarios of at most `steps` steps; answer how many ran."""
    tags, share = AREAS[area]
    machine = workflow(state_machine(tags), runner, first_assistant(runner))
    return run_machine(machine, runner, seed, max(1, round(examples * share)), steps)


def workflow(base: Any, runner: Runner, assistant: str | None) -> Any:
    from schemathesis.core.parameters import ParameterLocation

    class Workflow(base):
        linked_body = False
        completed = 0

        def step(self, input: Any) -> Any:
            self.linked_body = (ParameterLocation.BODY, None) in input.applied_parameters
            return super().step(input)

        def before_call(self, case: Case) -> None:
            # A runnable body (an existing assistant) so that linked runs, streams included, do
            # run; the variety of run bodies is the stateless test's job.
            positive = case.meta is None or case.meta.generation.mode.is_positive
            if assistant and positive and operation_id(case) in RUN_CREATES:
                metadata = case.body.get("metadata") if isinstance(case.body, dict) else None
                case.body = {"assistant_id": assistant, "metadata": metadata or {}}

        def get_call_kwargs(self, case: Case) -> dict[str, Any]:
            return runner.call_kwargs()

        def call(self, case: Case, **kwargs: Any) -> Response:
            try:
                return runner.send(case)
            except Withheld:
                hypothesis.reject()  # this step is not taken; the scenario goes on without it

        def validate_response(
            self, response: Response, case: Case, *args: Any, **kwargs: Any
        ) -> None:
            positive = case.meta is None or case.meta.generation.mode.is_positive
            linked = self.linked_body and positive
            runner.evaluate(case, response, self.recorder, linked_body=linked)

        def teardown(self) -> None:
            type(self).completed += 1
            super().teardown()

    return Workflow


def run_machine(machine: Any, runner: Runner, seed: int, budget: int, steps: int) -> int:
    """Run `budget` scenarios. A real server is external state, so hypothesis may call a replay
    "flaky"; as schemathesis' own engine does, the run then goes on with the next seed."""
    from hypothesis.errors import Flaky
    from schemathesis.engine.errors import is_inconsistent_replay

    for suite in range(4):
        if machine.completed >= budget or runner.broken:
            break
        suite_seed = derive_operation_seed(seed, f"stateful-{machine.__name__}-{suite}")
        machine._hypothesis_internal_use_seed = suite_seed
        machine.rule_order_seed = suite_seed
        left = budget - machine.completed
        settings = hypothesis_settings(
            left, phases=[hypothesis.Phase.generate], stateful_step_count=steps
        )
        try:
            machine.run(settings=settings)
        except TransportBroken:
            break  # recorded as a finding already
        except (Flaky, AssertionError) as exc:
            if not isinstance(exc, Flaky) and not is_inconsistent_replay(exc):
                raise
    return machine.completed
