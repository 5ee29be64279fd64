"""The property layer's glue: schemathesis over spec/openapi.yaml, checks scoped to what the
interface document mandates, and every check failure recorded as a finding against a requirement.

Used by tests/test_property.py (one pytest item per operation) and tests/test_stateful.py (the
links-driven state machine). Check failures never raise out of schemathesis: each becomes a
finding (`findings.expect`), so the verdict model decides (a MUST fails the test, a SHOULD warns).

Scoping (what the suite may demand by the document's authority, see spec/README.md):
- negative_data_rejection is a MUST only where the document mandates the input: the Knowledgebase
  body (enum -> KB-ALLOWED-VALUES, uuid format -> KB-UUID-FORMAT, type -> KB-FIELD-TYPES), the bulk
  array, the process array of strings, a missing body, the required query parameters, a missing
  Authorization. Anything else (interpreted bodies, `null` for an optional field) is the SHOULD
  ROBUST-BAD-INPUT-4XX. A missing or empty `last-event-id` is never demanded to be rejected.
- positive_data_acceptance judges only mandated bodies: Knowledgebase bodies without undeclared
  fields and with plausible values (bounds are "not shown", section 8), the empty bulk array (its
  items are interpreted), and a process body of ids a link took from a bulk answer (stateful).
- a 5xx on negative input is ROBUST-NO-5XX only; on valid input it also fails the status
  requirement.
"""

from __future__ import annotations

import re
import time
import uuid
from collections import Counter
from contextlib import suppress
from dataclasses import dataclass, field
from functools import cache
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import hypothesis
import requests
import schemathesis
import yaml
from requests.structures import CaseInsensitiveDict
from schemathesis.checks import CheckContext, not_a_server_error, run_checks
from schemathesis.core.failures import Failure
from schemathesis.core.mutations import OperatorKind
from schemathesis.core.transport import Response
from schemathesis.engine.run import PhaseName
from schemathesis.generation import derive_operation_seed
from schemathesis.generation.case import Case
from schemathesis.generation.meta import CoveragePhaseData, CoverageScenario
from schemathesis.openapi.checks import (
    AuthScenario,
    EnsureResourceAvailability,
    IgnoredAuth,
    MissingHeaderNotRejected,
    UseAfterFree,
)
from schemathesis.specs.openapi import checks as st

from . import findings
from .catalogue import OPENAPI_PATH, load
from .exchange import Exchange

MAX_STREAM_EVENTS = 10  # a stream is also cut at the request timeout, in total
FINDINGS_PER_REQUIREMENT = 5  # per test: the first few distinct ones, not a flood
EXCERPT = 600
ROBUST = "ROBUST-BAD-INPUT-4XX"
LAST_EVENT_ID = "last-event-id"
CHECKS = (
    not_a_server_error,
    st.status_code_conformance,
    st.content_type_conformance,
    st.response_schema_conformance,
    st.negative_data_rejection,
    st.positive_data_acceptance,
    st.missing_required_header,
)
STATEFUL_ONLY = (st.use_after_free, st.ensure_resource_availability)
LAST = (st.ignored_auth,)  # sends probes: last, so a probe without answer loses no other failure
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
BODY_KINDS = {"Knowledgebase": "kb", "KnowledgeDocuments": "bulk", "DocumentIds": "process"}
KB_KEYWORDS = {"enum": "KB-ALLOWED-VALUES", "format": "KB-UUID-FORMAT", "type": "KB-FIELD-TYPES"}
BODY_SHAPE = {"kb": "KB-FIELD-TYPES", "bulk": "KB-BULK-ARRAY", "process": "KB-PROCESS-STRINGS"}
POSITIVE = {"kb": "KB-VALID-ACCEPTED", "bulk": "KB-BULK-ARRAY", "process": "KB-PROCESS-STRINGS"}
REQUIRED_QUERY = {
    "v1GetDocumentStatus": "KB-STATUS-IDS-REQUIRED",
    "knowledgesGetDocumentStatus": "KB-STATUS-IDS-REQUIRED",
    "listRuns": "RUN-PAGING-REQUIRED",
    "listMessages": "MSG-PAGING-REQUIRED",
    "getThreadUsage": "USAGE-RANGE-REQUIRED",
}
AUTH = ("AUTH-MISSING-REJECTED", "AUTH-INVALID-REJECTED", "AUTH-401")
# What a generated create leaves behind, and the operation (and answer field) that removes it.
CLEAN_UP = {
    "createThread": ("deleteThread", "thread_id"),
    "copyThread": ("deleteThread", "thread_id"),
    "createConversation": ("deleteConversation", "id"),
    "v1CreateKnowledgebase": ("v1DeleteKnowledgebase", "id"),
    "knowledgesCreateKnowledgebase": ("knowledgesDeleteKnowledgebase", "id"),
    "createContextFile": ("deleteContextFile", "id"),
}


# --- the document's operations ------------------------------------------------------------------


@dataclass(frozen=True)
class Operation:
    id: str
    method: str
    path: str
    body: str  # kb | bulk | process (mandated), interpreted, or "" (none)
    required_query: tuple[str, ...]

    @property
    def label(self) -> str:
        return f"{self.method.upper()} {self.path}"


@cache
def operations() -> dict[str, Operation]:
    raw = yaml.safe_load(OPENAPI_PATH.read_text(encoding="utf-8"))
    shared = raw["components"]["parameters"]

    def resolve(p: dict) -> dict:
        return shared[p["$ref"].rsplit("/", 1)[-1]] if "$ref" in p else p

    result = {}
    for path, item in raw["paths"].items():
        for method, op in item.items():
            if method == "parameters":
                continue
            params = [resolve(p) for p in item.get("parameters", []) + op.get("parameters", [])]
            body_ref = op.get("requestBody", {}).get("$ref", "").rsplit("/", 1)[-1]
            body = BODY_KINDS.get(body_ref, "interpreted" if "requestBody" in op else "")
            query = tuple(p["name"] for p in params if p["in"] == "query" and p.get("required"))
            result[op["operationId"]] = Operation(op["operationId"], method, path, body, query)
    return result


@cache
def by_label() -> dict[str, Operation]:
    return {op.label: op for op in operations().values()}


def status_requirement(operation_id: str) -> str:
    req = load().for_check("status_code_conformance", operation_id)
    if req is None:
        raise KeyError(f"no status requirement names {operation_id} in the catalogue")
    return req.id


def refinements(op: Operation) -> set[str]:
    """Requirements the mapping names beyond the catalogue's check -> requirement entries."""
    ids = {*AUTH, status_requirement(op.id)}
    if op.body in BODY_SHAPE:
        ids |= {"KB-BODY-REQUIRED", BODY_SHAPE[op.body], POSITIVE[op.body]}
    if op.body == "kb":
        ids |= set(KB_KEYWORDS.values())
    if op.id in REQUIRED_QUERY:
        ids.add(REQUIRED_QUERY[op.id])
    gone = _gone_requirement(op)
    if gone:
        ids.add(gone)
    return ids


def _gone_requirement(op: Operation) -> str | None:
    """For a DELETE whose resource has a GET on the same path: the requirement that it is gone."""
    if op.method != "delete" or f"GET {op.path}" not in by_label():
        return None
    req = load().for_check("use_after_free", op.id)
    return req.id if req else None


def requirements(operation_id: str, stateful: bool = False) -> list[str]:
    """Every requirement a property test of this operation may record (its req marker)."""
    names = {c.__name__ for c in CHECKS + LAST + (STATEFUL_ONLY if stateful else ())}
    ids = {
        r.id for r in load().requirements.values() if any(r.covers(n, operation_id) for n in names)
    }
    return sorted(ids | refinements(operations()[operation_id]))


def stateful_requirements() -> list[str]:
    ids = {rid for op in operations() for rid in requirements(op, stateful=True)}
    # use_after_free skips a repeated DELETE and nothing else uses a context file: not observable.
    ids.discard("CTX-DELETE-GONE")
    return sorted(ids)


# --- what a negative case broke -----------------------------------------------------------------


@dataclass(frozen=True)
class Negation:
    location: str  # body, query, header, path, cookie
    name: str  # parameter name, or the body property path ("recall.topK", "[]" = items, "" = whole)
    keyword: str  # type, enum, format, missing, syntax, ...
    null: bool = False

    def describe(self) -> str:
        null = ", null" if self.null else ""
        return f"{self.location} {self.name or '(whole)'} ({self.keyword}{null})"


_COVERAGE_KEYWORDS = {
    CoverageScenario.INCORRECT_TYPE: "type",
    CoverageScenario.INVALID_ENUM_VALUE: "enum",
    CoverageScenario.INVALID_FORMAT: "format",
    CoverageScenario.MISSING_PARAMETER: "missing",
    CoverageScenario.OBJECT_MISSING_REQUIRED_PROPERTY: "missing",
}
_MISSING = object()


def _pointer_path(pointer: str) -> list[str]:
    tokens, path = pointer.strip("/").split("/") if pointer else [], []
    for i, token in enumerate(tokens):
        if token == "items":
            path.append("[]")
        elif i > 0 and tokens[i - 1] == "properties":
            path.append(token)
    return path


def _value_at(body: Any, path: list[str]) -> Any:
    for key in path:
        if not isinstance(body, dict) or key not in body:
            return _MISSING
        body = body[key]
    return body


def negations(case: Case) -> list[Negation]:
    meta = case.meta
    if meta is None or not meta.generation.mode.is_negative:
        return []
    data = meta.phase.data
    if isinstance(data, CoveragePhaseData):
        loc = data.parameter_location.value if data.parameter_location else ""
        keyword = _COVERAGE_KEYWORDS.get(data.scenario, data.scenario.value)
        if loc != "body":
            return [Negation(loc, data.parameter or "", keyword)]
        path = _pointer_path(data.location or "")
        null = keyword == "type" and _value_at(case.body, path) is None
        return [Negation(loc, ".".join(path), keyword, null)]
    result = []
    for m in getattr(data, "mutations", ()):
        loc = m.parameter_location.value
        keywords = set(m.keywords)
        if m.operator == OperatorKind.SYNTAX_FUZZING:
            keyword = "syntax"
        elif m.operator == OperatorKind.REMOVE_REQUIRED_PROPERTY or "required" in keywords:
            keyword = "missing"
        elif m.operator == OperatorKind.CHANGE_TYPE or "type" in keywords:
            keyword = "type"
        else:
            keyword = next(
                (k for k in ("enum", "format") if k in keywords), ",".join(sorted(keywords))
            )
        name = ".".join(_pointer_path(m.schema_pointer)) if loc == "body" else (m.parameter or "")
        result.append(Negation(loc, name, keyword, keyword == "type" and m.new_value == "null"))
    if not result and getattr(data, "parameter_location", None) is not None:
        result.append(Negation(data.parameter_location.value, data.parameter or "", "unknown"))
    return result


def _is_last_event_id(n: Negation) -> bool:
    return n.location == "header" and n.name.lower() == LAST_EVENT_ID


def only_last_event_id(case: Case) -> bool:
    found = negations(case)
    return bool(found) and all(_is_last_event_id(n) for n in found)


# --- failure -> requirement ---------------------------------------------------------------------


def requirement_for(check: str, case: Case, response: Response, failure: Failure) -> str | None:
    """The requirement a check failure is a finding against; None where the suite may not ask."""
    op = operations()[_operation_id(case)]
    if check == "negative_data_rejection":
        return _negative_requirement(op, case, response)
    if check == "positive_data_acceptance":
        return POSITIVE.get(op.body)
    if check == "missing_required_header" and isinstance(failure, MissingHeaderNotRejected):
        return _auth_requirement(failure.header_name, failure.status_code)
    if check == "ignored_auth" and isinstance(failure, IgnoredAuth):
        status = re.search(r"got `(\d{3})", failure.message)
        code = int(status.group(1)) if status else 200
        if failure.scenario == AuthScenario.INVALID_AUTH and 200 <= code < 300:
            return "AUTH-INVALID-REJECTED"
        return _auth_requirement("authorization", code)
    if check == "status_code_conformance":
        negative = case.meta is not None and case.meta.generation.mode.is_negative
        return None if negative and response.status_code >= 500 else status_requirement(op.id)
    if check == "content_type_conformance" and not 200 <= response.status_code < 300:
        return "ROBUST-JSON-CONTENT-TYPE"
    candidates = [op.id]
    if isinstance(failure, UseAfterFree):
        candidates.insert(0, _label_id(failure.operation))
    if isinstance(failure, EnsureResourceAvailability):
        candidates[:0] = [_label_id(failure.not_available_with), _label_id(failure.created_with)]
    for candidate in candidates:
        req = load().for_check(check, candidate) if candidate else None
        if req is not None:
            return req.id
    return status_requirement(op.id)


def _auth_requirement(header: str, status: int) -> str | None:
    if header.lower() == LAST_EVENT_ID:
        return None
    if header.lower() != "authorization":
        return ROBUST
    return "AUTH-MISSING-REJECTED" if 200 <= status < 400 else "AUTH-401"


def _negative_requirement(op: Operation, case: Case, response: Response) -> str | None:
    found = [_negation_requirement(op, n, response) for n in negations(case)]
    if not found:
        req = load().for_check("negative_data_rejection", op.id)
        return req.id if req else ROBUST
    mandated = [r for r in found if r not in (None, ROBUST)]
    return mandated[0] if mandated else (ROBUST if ROBUST in found else None)


def _negation_requirement(op: Operation, n: Negation, response: Response) -> str | None:
    if n.location == "header":
        if _is_last_event_id(n):
            return None  # absent or empty means "from the first event" (spec x-interpretation-note)
        if n.name.lower() == "authorization":  # other mutations: the suite's token replaced them
            sent = "authorization" in {k.lower() for k in response.request.headers}
            return "AUTH-MISSING-REJECTED" if n.keyword == "missing" and not sent else None
        return ROBUST
    if n.location == "query" and n.name in op.required_query and n.keyword in ("missing", "type"):
        return REQUIRED_QUERY.get(op.id, ROBUST)
    if n.null and n.location == "body" and op.body not in BODY_SHAPE:
        return (
            None  # null for an optional interpreted field: LangGraph's own models read it as absent
        )
    if n.location != "body" or op.body not in BODY_SHAPE:
        return ROBUST
    if n.keyword == "missing" and n.name == "":
        return "KB-BODY-REQUIRED"
    if n.null:
        return ROBUST  # null for an optional field: many servers read it as absent
    if n.name == "" and n.keyword in ("type", "syntax"):
        return BODY_SHAPE[op.body]
    if op.body == "process" and n.name == "[]" and n.keyword == "type":
        return BODY_SHAPE[op.body]
    if op.body == "kb" and n.keyword in KB_KEYWORDS:
        return KB_KEYWORDS[n.keyword]
    return ROBUST  # e.g. the bulk array's items: KnowledgeDocument fields are interpreted


# --- positive bodies the document lets the suite judge -------------------------------------------


def judges_positive(case: Case, linked_body: bool) -> bool:
    kind = operations()[_operation_id(case)].body
    if kind == "kb":
        return plausible_kb_body(case.body)
    if kind == "bulk":
        return case.body == []
    return kind == "process" and linked_body


def plausible_kb_body(body: Any) -> bool:
    """Declared fields only, non-empty printable strings, uuids, and numbers a server cannot refuse
    as out of bounds (bounds are "not shown", interface section 8)."""
    if not isinstance(body, dict):
        return False
    schema = _kb_schema()
    return _plausible(body, schema) and _plausible_overlap(body.get("parserConfig"))


@cache
def _kb_schema() -> dict:
    raw = yaml.safe_load(OPENAPI_PATH.read_text(encoding="utf-8"))
    return raw["components"]["schemas"]["CreateKnowledgebaseDTO"]


def _plausible(body: dict, schema: dict) -> bool:
    declared = schema.get("properties", {})
    for key, value in body.items():
        spec = declared.get(key)
        if spec is None:
            return False
        kind = spec.get("type")
        if kind == "object" and not (isinstance(value, dict) and _plausible(value, spec)):
            return False
        if kind == "string" and not _plausible_string(value, spec):
            return False
        if kind == "number" and not _plausible_number(key, value):
            return False
    return True


def _plausible_string(value: Any, spec: dict) -> bool:
    if not isinstance(value, str) or not 0 < len(value) <= 200 or not value.isprintable():
        return False
    if spec.get("format") == "uuid":
        try:
            return str(uuid.UUID(value)) == value.lower()
        except ValueError:
            return False
    return value in spec.get("enum", [value])


def _plausible_number(key: str, value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if key == "score":
        return 0 <= value <= 1
    low = 0 if key == "chunkOverlap" else 1
    return float(value).is_integer() and low <= value <= 1000


def _plausible_overlap(config: Any) -> bool:
    if not isinstance(config, dict) or not {"chunkSize", "chunkOverlap"} <= config.keys():
        return True
    return config["chunkOverlap"] < config["chunkSize"]


# --- schemathesis set-up ------------------------------------------------------------------------


@cache
def schema() -> Any:
    """spec/openapi.yaml, loaded once; the seed and depth are applied per test (see configure)."""
    config = schemathesis.Config.from_dict(
        {
            "generation": {"mode": "all", "allow-x00": False},
            "phases": {
                "coverage": {"unexpected-methods": []},
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


@dataclass
class Runner:
    """Sends cases to the target and turns check failures into findings. One per pytest item."""

    base_url: str
    token: str
    timeout: float
    session: requests.Session
    examples: int = 10
    ledger: Any = None  # the session's Ledger: what a generated create made is removed at the end
    broken: str = ""
    sent: int = 0
    seen: Counter[str] = field(default_factory=Counter)
    recorded: Counter[str] = field(default_factory=Counter)
    auth_probed: set[str] = field(default_factory=set)

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
        except TransportBroken:
            return
        self.evaluate(case, response)

    def send(self, case: Case) -> Response:
        if self.broken:
            raise TransportBroken(self.broken)
        self.sent += 1
        try:
            return case.call(**self.call_kwargs())
        except (requests.Timeout, requests.ConnectionError, TimeoutError) as exc:
            reason = type(exc).__name__
            self.broken = f"{case.operation.label}: no answer within {self.timeout:g} s ({reason})"
            expected = f"an answer within {self.timeout:g} s"
            findings.expect(status_requirement(_operation_id(case)), False, expected, self.broken)
            raise TransportBroken(self.broken) from None

    def evaluate(
        self, case: Case, response: Response, recorder: Any = None, linked_body: bool = False
    ) -> None:
        self.track_created(case, response)
        if 200 <= response.status_code < 300:
            self.probe_required_query(case, response)
            self.probe_gone(case, response)
        every = CHECKS + (STATEFUL_ONLY if recorder is not None else ()) + LAST
        checks = [c for c in every if self._applies(c.__name__, case, response, linked_body)]
        for name, failure in self._failures(checks, case, response, recorder):
            req_id = requirement_for(name, case, response, failure)
            if req_id is not None:
                self._record(req_id, name, case, response, failure)

    def track_created(self, case: Case, response: Response) -> None:
        entry = CLEAN_UP.get(_operation_id(case))
        if entry is None or self.ledger is None or not 200 <= response.status_code < 300:
            return
        try:
            body = response.json()
        except ValueError:
            return
        value = body.get(entry[1]) if isinstance(body, dict) else None
        if isinstance(value, str) and value:
            path = re.sub(r"\{[^}]+\}", quote(value, safe=""), operations()[entry[0]].path)
            self.ledger.track("DELETE", path)

    def probe_required_query(self, case: Case, response: Response) -> None:
        """Once per operation, on a request the target answered 2xx (a live resource, when a link
        supplied the path): the same request without each required query parameter is refused."""
        op = by_label()[case.operation.label]
        if op.id not in REQUIRED_QUERY or f"query:{op.id}" in self.auth_probed:
            return
        self.auth_probed.add(f"query:{op.id}")
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
        requirement = _gone_requirement(op)
        if requirement is None:
            return
        probe = None
        for _ in range(4):
            probe = self._send_probe("GET", str(response.request.url))
            if probe is None or not 200 <= probe.status_code < 300:
                return
            time.sleep(0.3)
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
            if not 200 <= response.status_code < 300 or case.operation.label in self.auth_probed:
                return False
            self.auth_probed.add(case.operation.label)
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
        k: v for k, v in request.headers.items() if not (drop_auth and k.lower() == "authorization")
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


def exchange_of_requests(response: requests.Response) -> Exchange:
    request = response.request
    body = request.body.encode() if isinstance(request.body, str) else request.body
    return Exchange(
        method=str(request.method),
        url=str(request.url),
        request_headers=dict(request.headers),
        request_body=body if isinstance(body, bytes) else None,
        status=response.status_code,
        response_headers=dict(response.headers),
        response_excerpt=response.text[:EXCERPT],
    )


def _operation_id(case: Case) -> str:
    return by_label()[case.operation.label].id


def _label_id(label: str) -> str:
    """The operationId of a label such as "DELETE /api/ai/threads/{thread_id}" (or "")."""
    method, _, path = label.partition(" ")
    op = by_label().get(f"{method.upper()} {path}")
    return op.id if op else ""


def _lines(message: str, limit: int = 3) -> str:
    return " ".join([line.strip() for line in message.splitlines() if line.strip()][:limit])


# --- stateful -----------------------------------------------------------------------------------


RUN_CREATES = ("createRun", "streamRun", "waitRun")


def state_machine() -> Any:
    """The document's links as a state machine. Scenarios start at the operations that create a
    resource from nothing (POST without path parameters): schemathesis' heuristics would otherwise
    drop the knowledge-base creates, whose workspaceId/integrationId it reads as foreign keys."""
    import schemathesis.specs.openapi.stateful as stateful

    original = stateful.is_likely_root_transition
    stateful.is_likely_root_transition = lambda operation, *_: (
        operation.method == "post" and not operation.path_parameters
    )
    try:
        return schema().as_state_machine()
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


def run_state_machine(runner: Runner, seed: int, examples: int, steps: int) -> int:
    """Follow the document's links (create -> use -> delete) for 2 x `examples` scenarios; answer
    how many ran. A real server is external state, so hypothesis may call a replay "flaky"; as
    schemathesis' own engine does, the run then goes on with the next seed (at most 4 suites)."""
    from hypothesis.errors import Flaky
    from schemathesis.core.parameters import ParameterLocation
    from schemathesis.engine.errors import is_inconsistent_replay

    budget, completed = examples * 2, 0
    assistant = first_assistant(runner)

    class Workflow(state_machine()):  # type: ignore[misc]
        linked_body = False

        def step(self, input: Any) -> Any:
            self.linked_body = (ParameterLocation.BODY, None) in input.applied_parameters
            return super().step(input)

        def before_call(self, case: Case) -> None:
            if assistant and _operation_id(case) in RUN_CREATES and isinstance(case.body, dict):
                case.body["assistant_id"] = assistant

        def get_call_kwargs(self, case: Case) -> dict[str, Any]:
            return runner.call_kwargs()

        def call(self, case: Case, **kwargs: Any) -> Response:
            return runner.send(case)

        def validate_response(
            self, response: Response, case: Case, *args: Any, **kwargs: Any
        ) -> None:
            positive = case.meta is None or case.meta.generation.mode.is_positive
            runner.evaluate(
                case, response, self.recorder, linked_body=self.linked_body and positive
            )

        def teardown(self) -> None:
            nonlocal completed
            completed += 1
            super().teardown()

    for suite in range(4):
        if completed >= budget or runner.broken:
            break
        suite_seed = derive_operation_seed(seed, f"stateful-{suite}")
        Workflow._hypothesis_internal_use_seed = suite_seed  # type: ignore[attr-defined]
        Workflow.rule_order_seed = suite_seed
        settings = hypothesis_settings(
            budget - completed, phases=[hypothesis.Phase.generate], stateful_step_count=steps
        )
        try:
            Workflow.run(settings=settings)
        except TransportBroken:
            break  # recorded as a finding already
        except (Flaky, AssertionError) as exc:
            if not isinstance(exc, Flaky) and not is_inconsistent_replay(exc):
                raise
    return completed
