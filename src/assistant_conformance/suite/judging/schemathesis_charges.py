"""The judge of what schemathesis saw: each check failure becomes a finding on one requirement
here (what the doors saw is judged in suite/judging/answer_charges.py; the scenario flows and tests
judge their own behaviours with suite/judging/findings.py, naming their requirements).

- A schemathesis check failure: the refinements below (which rule of the document a negative
  case broke), then the operation's own requirements in spec/openapi.yaml (`x-requirements`),
  then EVERY_OPERATION.

The document states no rejection (its section 7), so rejecting input that breaks it is a SHOULD,
charged to the rule the input broke: the Knowledgebase body (enum -> KB-ALLOWED-VALUES, uuid
format -> KB-UUID-FORMAT, type -> KB-FIELD-TYPES), the bulk array, the process array of strings,
a missing body, the required query parameters; anything else is ROBUST-BAD-INPUT-4XX. `null` in
an interpreted body, unknown parameters and a missing `last-event-id` are not asked about. A 5xx
on negative or interpreted input is ROBUST-NO-5XX only; a non-JSON 4xx is ROBUST-ERROR-JSON. An
operation's status is judged only on requests the document shows valid: not where a reference (a
path id, the status query's `ids`, the process body's strings:
property/owned_bodies.names_owned) names what the run neither created nor followed a link to (a
generated `0` or `LPT1` names nothing; a 5xx there: ROBUST-NO-5XX).
Each finding carries how a replay judges it again (suite/evidence/replay.py).
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

from schemathesis.core.failures import Failure
from schemathesis.core.transport import Response
from schemathesis.generation.case import Case
from schemathesis.openapi.checks import (
    AuthScenario,
    EnsureResourceAvailability,
    IgnoredAuth,
    MissingHeaderNotRejected,
    UseAfterFree,
)

from assistant_conformance.contract.openapi import Operation, by_id, by_label
from assistant_conformance.suite.http import strictjson
from assistant_conformance.suite.http.absent import NOT_SERVED
from assistant_conformance.suite.judging.error_bodies import error_message
from assistant_conformance.suite.judging.negations import (
    LAST_EVENT_ID,
    Negation,
    is_last_event_id,
    negations,
    operation_id,
)

SHAPE, ERROR_JSON = "ROBUST-RESPONSE-SHAPE", "ROBUST-ERROR-JSON"
ROBUST, NO_5XX = "ROBUST-BAD-INPUT-4XX", "ROBUST-NO-5XX"
AUTH = MISSING, INVALID, AUTH_401 = "AUTH-MISSING-REJECTED", "AUTH-INVALID-REJECTED", "AUTH-401"
BODY_REQUIRED = "KB-BODY-REQUIRED"
KB_KEYWORDS = {"enum": "KB-ALLOWED-VALUES", "format": "KB-UUID-FORMAT", "type": "KB-FIELD-TYPES"}
BODY_SHAPE = {"kb": "KB-FIELD-TYPES", "bulk": "KB-BULK-ARRAY", "process": "KB-PROCESS-STRINGS"}
POSITIVE = {"kb": "KB-VALID-ACCEPTED", "bulk": "KB-BULK-ARRAY", "process": "KB-PROCESS-STRINGS"}
# use_after_free never sees a context file used after its delete: nothing else uses one.
UNOBSERVABLE_STATEFUL = frozenset({"CTX-DELETE-GONE"})

# Checks charged to the operation's own requirement (x-requirements in spec/openapi.yaml).
PER_OPERATION = {
    "status_code_conformance": "status",
    "use_after_free": "deleted",
    "ensure_resource_availability": "created",
    "content_type_conformance": "content-type",
}
# Checks charged alike on every operation: the first is charged, all may be recorded.
EVERY_OPERATION: dict[str, tuple[str, ...]] = {
    "ignored_auth": (MISSING,),
    "missing_required_header": (MISSING, ROBUST),
    "not_a_server_error": (NO_5XX,),
    "negative_data_rejection": (ROBUST,),
    "content_type_conformance": ("ROBUST-JSON-CONTENT-TYPE",),
    "response_schema_conformance": (SHAPE,),
}
# Judged only beside a control (the same operation accepted a valid request in the same test).
CONTROLLED = frozenset(
    {ROBUST, BODY_REQUIRED, *KB_KEYWORDS.values(), *BODY_SHAPE.values(), *POSITIVE.values()}
    | {op.requirements["query"] for op in by_label().values() if "query" in op.requirements}
)

FINDINGS_PER_REQUIREMENT = 5  # per test: the first few distinct ones, not a flood
# What each schemathesis check expects, for the failure text.
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
ERROR_JSON_EXPECTED = "a 4xx answer with a JSON body, declared application/json"


# --- schemathesis' checks (the property layer) ----------------------------------------------------


def for_check(check: str, op: Operation) -> str | None:
    """The requirement a failure of `check` on `op` is charged to by the tables."""
    own = op.requirements.get(PER_OPERATION.get(check, ""))
    return own or next(iter(EVERY_OPERATION.get(check, ())), None)


def covered(checks: set[str], op: Operation) -> set[str]:
    """Every requirement the tables charge a failure of one of `checks` on `op` to."""
    own = {op.requirements.get(PER_OPERATION.get(c, "")) for c in checks}
    return {r for r in own if r} | {r for c in checks for r in EVERY_OPERATION.get(c, ())}


def refinements(op: Operation) -> set[str]:
    """Requirements the refinements name beyond the tables."""
    ids = {*AUTH, ERROR_JSON, op.status_requirement}
    if op.body_kind in BODY_SHAPE:
        ids |= {BODY_REQUIRED, BODY_SHAPE[op.body_kind], POSITIVE[op.body_kind]}
    if op.body_kind == "kb":
        ids |= set(KB_KEYWORDS.values())
    if "query" in op.requirements:
        ids.add(op.requirements["query"])
    if gone := gone_requirement(op):
        ids.add(gone)
    return ids


def gone_requirement(op: Operation) -> str | None:
    """For a DELETE whose resource has a GET on the same path: the requirement that it is gone."""
    if op.method != "DELETE" or f"GET {op.path}" not in by_label():
        return None
    return op.requirements.get("deleted")


def check_failure(
    check: str, case: Case, response: Response, failure: Failure, known: bool = True
) -> str | None:
    """The requirement a check failure is a finding against; None where the suite may not ask.
    `known`: every reference names what the run created or followed a link to (else the request
    is none the document shows valid: its status is not judged, a 5xx is ROBUST-NO-5XX's)."""
    op = by_id(operation_id(case))
    negative = case.meta is not None and case.meta.generation.mode.is_negative
    if check == "negative_data_rejection":
        return _negative_requirement(op, case, response)
    if check == "positive_data_acceptance":
        return POSITIVE.get(op.body_kind)
    if check == "missing_required_header" and isinstance(failure, MissingHeaderNotRejected):
        if failure.status_code in NOT_SERVED:
            return None  # the operation is not there to refuse anything (suite/http/absent.py)
        return _auth_requirement(failure.header_name, failure.status_code)
    if check == "ignored_auth" and isinstance(failure, IgnoredAuth):
        status = re.search(r"got `(\d{3})", failure.message)
        code = int(status.group(1)) if status else 200
        if failure.scenario == AuthScenario.INVALID_AUTH and 200 <= code < 300:
            return INVALID
        return _auth_requirement("authorization", code)
    if check == "status_code_conformance":
        if not known:
            return None  # e.g. `0` for an id: the document shows no request on it
        if (negative or op.body_kind == "interpreted") and response.status_code >= 500:
            return None  # ROBUST-NO-5XX: the input is not one the document states
        return op.status_requirement
    if check in ("content_type_conformance", "response_schema_conformance"):
        if check == "response_schema_conformance" and negative and response.status_code < 300:
            return None  # it echoes the bad input it accepted: that acceptance is the finding
        if 400 <= response.status_code < 500:
            return ERROR_JSON  # an error answer that is not JSON (or not a JSON object)
        if response.status_code >= 500:
            return None
    candidates = [op]
    if isinstance(failure, UseAfterFree):
        candidates[:0] = _by_label(failure.operation or "")
    if isinstance(failure, EnsureResourceAvailability):
        labels = (failure.not_available_with, failure.created_with)
        candidates[:0] = [found for label in labels for found in _by_label(label)]
    for candidate in candidates:
        if (req := for_check(check, candidate)) is not None:
            return req
    return op.status_requirement


def check_passed(check: str, case: Case, response: Response, known: bool = True) -> list[str]:
    """What a check that ran and did not fail shows to hold, where it exercised the behaviour:
    the documented success status on a 2xx, a JSON answer of the right type and shape on a 2xx,
    a rejection of input that breaks the document, a valid body accepted, no 5xx for malformed
    input, a request refused without (or with a wrong) credential."""
    op = by_id(operation_id(case))
    success = 200 <= response.status_code < 300
    negative = case.meta is not None and case.meta.generation.mode.is_negative
    if success and response.content and _error_answer(response):
        return []  # an error object under a success status: nothing was shown to hold
    if check == "status_code_conformance" and success and not negative and known:
        return [op.status_requirement]
    if check in ("content_type_conformance", "response_schema_conformance") and success:
        found = for_check(check, op)
        return [found] if found and response.content else []
    if check == "negative_data_rejection" and 400 <= response.status_code < 500:
        found = _negative_requirement(op, case, response)
        return [found] if found else []
    if check == "positive_data_acceptance" and success:
        return [POSITIVE[op.body_kind]] if op.body_kind in POSITIVE else []
    if check == "not_a_server_error" and negative:
        return [NO_5XX]
    if check == "ignored_auth":
        return [MISSING, INVALID]
    return []


def _error_answer(response: Response) -> bool:
    return error_message(strictjson.lenient(response.content)) is not None


def _auth_requirement(header: str, status: int) -> str | None:
    if header.lower() == LAST_EVENT_ID:
        return None
    if header.lower() != "authorization":
        return ROBUST
    return MISSING if 200 <= status < 400 else AUTH_401


def _negative_requirement(op: Operation, case: Case, response: Response) -> str | None:
    found = [_negation_requirement(op, n, response) for n in negations(case)]
    if not found:
        return for_check("negative_data_rejection", op) or ROBUST
    mandated = [r for r in found if r not in (None, ROBUST)]
    return mandated[0] if mandated else (ROBUST if ROBUST in found else None)


def _missing_query(op: Operation, response: Response) -> bool:
    return "query" in op.requirements and _required_query_absent(op, response)


def _required_query_absent(op: Operation, response: Response) -> bool:
    query = parse_qsl(urlsplit(str(response.request.url)).query, keep_blank_values=True)
    return not set(op.query_params) <= {k for k, _ in query}


def _negation_requirement(op: Operation, n: Negation, response: Response) -> str | None:
    if n.location == "header":
        if is_last_event_id(n):
            return None  # absent or empty means "from the first event" (spec x-interpretation-note)
        if n.name.lower() == "authorization":  # other mutations: the suite's token replaced them
            sent = "authorization" in {k.lower() for k in response.request.headers}
            return MISSING if n.keyword == "missing" and not sent else None
        return ROBUST
    if n.location == "query" and _missing_query(op, response):
        return op.requirements["query"]  # a required parameter missing, however described
    if (
        n.location == "query"
        and n.keyword == "missing"
        and not _required_query_absent(op, response)
    ):
        # Every required parameter went (a mutation of the whole query that removed none, beside
        # a name the document does not know): the request breaks nothing the document states.
        return None
    if n.location == "query" and n.name in op.query_params and n.keyword == "type":
        return op.requirements.get("query", ROBUST)
    if n.location in ("query", "header", "path") and n.keyword == "additionalProperties":
        return None  # an unknown parameter may be ignored
    if n.null and n.location == "body" and op.body_kind not in BODY_SHAPE:
        return None  # null for an optional interpreted field: LangGraph's models read it as absent
    if n.location != "body" or op.body_kind not in BODY_SHAPE:
        return ROBUST
    if n.keyword == "missing" and n.name == "":
        return BODY_REQUIRED
    if n.null:
        return ROBUST  # null for an optional field: many servers read it as absent
    if n.name == "" and n.keyword in ("type", "syntax"):
        return BODY_SHAPE[op.body_kind]
    if op.body_kind == "process" and n.name == "[]" and n.keyword == "type":
        return BODY_SHAPE[op.body_kind]
    if op.body_kind == "kb" and n.keyword in KB_KEYWORDS:
        return KB_KEYWORDS[n.keyword]
    return ROBUST  # e.g. the bulk array's items: KnowledgeDocument fields are interpreted


def _by_label(label: str) -> list[Operation]:
    """The operation of a label such as "DELETE /api/ai/threads/{thread_id}" (none, or one)."""
    method, _, path = label.partition(" ")
    op = by_label().get(f"{method.upper()} {path}")
    return [op] if op else []
