"""What the property layer may demand, and which requirement a check failure is a finding against.

The suite may demand only what the interface document mandates (see spec/README.md):
- negative_data_rejection is a MUST only where the document mandates the input: the Knowledgebase
  body (enum -> KB-ALLOWED-VALUES, uuid format -> KB-UUID-FORMAT, type -> KB-FIELD-TYPES), the bulk
  array, the process array of strings, a missing body, the required query parameters, a missing
  Authorization. Anything else (interpreted bodies, `null` for an optional mandated field) is the
  SHOULD ROBUST-BAD-INPUT-4XX; `null` in an interpreted body and unknown parameters are not asked
  about. A missing or empty `last-event-id` is never demanded to be rejected.
- positive_data_acceptance judges only mandated bodies: Knowledgebase bodies without undeclared
  fields and with plausible values (bounds are "not shown", section 8), the empty bulk array (its
  items are interpreted), and a process body of ids a link took from a bulk answer (stateful).
- a 5xx on negative input is ROBUST-NO-5XX only; on valid input it also fails the status
  requirement.
- anything the catalogue does not refine maps through `Catalogue.for_check(check, operationId)`,
  and failing that to the operation's status requirement.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import yaml
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import Failure
from schemathesis.core.mutations import OperatorKind
from schemathesis.core.transport import Response
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

from .catalogue import OPENAPI_PATH, load

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


# --- the document's operations ------------------------------------------------------------------


@dataclass(frozen=True)
class Operation:
    id: str
    method: str
    path: str
    body: str  # kb | bulk | process (mandated), interpreted, or "" (none)
    required_query: tuple[str, ...]
    tags: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.method.upper()} {self.path}"


@cache
def _spec() -> dict:
    return yaml.safe_load(OPENAPI_PATH.read_text(encoding="utf-8"))


@cache
def operations() -> dict[str, Operation]:
    raw = _spec()
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
            tags = tuple(op.get("tags", ()))
            result[op["operationId"]] = Operation(
                op["operationId"], method, path, body, query, tags
            )
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
    gone = gone_requirement(op)
    if gone:
        ids.add(gone)
    return ids


def gone_requirement(op: Operation) -> str | None:
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


def stateful_requirements(tags: tuple[str, ...]) -> list[str]:
    """Every requirement the state machine over the operations of `tags` may record."""
    ops = [op.id for op in operations().values() if set(op.tags) & set(tags)]
    ids = {rid for op in ops for rid in requirements(op, stateful=True)}
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
    location = getattr(data, "parameter_location", None)
    if not result and location is not None:
        result.append(Negation(location.value, data.parameter or "", "unknown"))
    return result


def _is_last_event_id(n: Negation) -> bool:
    return n.location == "header" and n.name.lower() == LAST_EVENT_ID


def only_last_event_id(case: Case) -> bool:
    found = negations(case)
    return bool(found) and all(_is_last_event_id(n) for n in found)


# --- failure -> requirement ---------------------------------------------------------------------


def requirement_for(check: str, case: Case, response: Response, failure: Failure) -> str | None:
    """The requirement a check failure is a finding against; None where the suite may not ask."""
    op = operations()[operation_id(case)]
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
        candidates.insert(0, _label_id(failure.operation or ""))
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


def _missing_query(op: Operation, response: Response) -> bool:
    if op.id not in REQUIRED_QUERY:
        return False
    sent = {
        k for k, _ in parse_qsl(urlsplit(str(response.request.url)).query, keep_blank_values=True)
    }
    return not set(op.required_query) <= sent


def _negation_requirement(op: Operation, n: Negation, response: Response) -> str | None:
    if n.location == "header":
        if _is_last_event_id(n):
            return None  # absent or empty means "from the first event" (spec x-interpretation-note)
        if n.name.lower() == "authorization":  # other mutations: the suite's token replaced them
            sent = "authorization" in {k.lower() for k in response.request.headers}
            return "AUTH-MISSING-REJECTED" if n.keyword == "missing" and not sent else None
        return ROBUST
    if n.location == "query" and _missing_query(op, response):
        return REQUIRED_QUERY[op.id]  # what was sent lacks a required parameter, however described
    if n.location == "query" and n.name in op.required_query and n.keyword == "type":
        return REQUIRED_QUERY.get(op.id, ROBUST)
    if n.location in ("query", "header", "path") and n.keyword == "additionalProperties":
        return None  # an unknown parameter may be ignored
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
    kind = operations()[operation_id(case)].body
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


def _kb_schema() -> dict:
    return _spec()["components"]["schemas"]["CreateKnowledgebaseDTO"]


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


def operation_id(case: Case) -> str:
    return by_label()[case.operation.label].id


def _label_id(label: str) -> str:
    """The operationId of a label such as "DELETE /api/ai/threads/{thread_id}" (or "")."""
    method, _, path = label.partition(" ")
    op = by_label().get(f"{method.upper()} {path}")
    return op.id if op else ""
