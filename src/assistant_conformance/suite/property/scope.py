"""What the property layer may demand, and which requirement a check failure is a finding against.

The document states no rejection (its section 7: errors "not shown"), so rejecting input that
breaks it is a SHOULD, charged to the rule the input broke: the Knowledgebase body (enum ->
KB-ALLOWED-VALUES, uuid format -> KB-UUID-FORMAT, type -> KB-FIELD-TYPES), the bulk array, the
process array of strings, a missing body, the required query parameters; anything else
(interpreted bodies, `null` for an optional mandated field) is ROBUST-BAD-INPUT-4XX. `null` in an
interpreted body, unknown parameters and a missing or empty `last-event-id` are not asked about.
A request without Authorization that succeeds fails the MUST AUTH-MISSING-REJECTED.

positive_data_acceptance judges only mandated bodies: Knowledgebase bodies without undeclared
fields and with plausible values (bounds are "not shown", section 8), the empty bulk array (its
items are interpreted), and a process body of ids a link took from a bulk answer (stateful).

A 5xx on negative input, or on an interpreted body, is ROBUST-NO-5XX only; on input the document
mandates (or no body) it also fails the status requirement. A non-JSON or off-schema 4xx answer is
ROBUST-ERROR-JSON, never a success-shape finding. Anything not refined here maps through the table
of property/mapping.py, and failing that to the operation's status requirement.

`CONTROLLED` requirements are judged only against a control: the same operation accepted a valid
request in the same test (runner.py). A rejection proves nothing where the operation refuses all.
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

from assistant_conformance.report.catalogue import load
from assistant_conformance.suite.openapi import (
    Operation,
    by_id,
    by_label,
    operations,
)
from assistant_conformance.suite.property import mapping
from assistant_conformance.suite.property.cases import (
    LAST_EVENT_ID,
    Negation,
    is_last_event_id,
    negations,
    operation_id,
)
from assistant_conformance.suite.property.mapping import (
    AUTH,
    BODY_SHAPE,
    CHECKS,
    KB_KEYWORDS,
    LAST,
    POSITIVE,
    REQUIRED_QUERY,
    ROBUST,
    STATEFUL_ONLY,
)

# --- the document's operations ------------------------------------------------------------------


def status_requirement(operation_id: str) -> str:
    req = mapping.for_check("status_code_conformance", operation_id)
    if req is None:
        raise KeyError(f"no status requirement names {operation_id} in property/mapping.py")
    return req


CONTROLLED = frozenset(
    {ROBUST, "KB-BODY-REQUIRED", *REQUIRED_QUERY.values(), *KB_KEYWORDS.values()}
    | set(BODY_SHAPE.values())
    | set(POSITIVE.values())
)
ERROR_JSON = "ROBUST-ERROR-JSON"


def refinements(op: Operation) -> set[str]:
    """Requirements the mapping names beyond the table's check -> requirement rows."""
    ids = {*AUTH, ERROR_JSON, status_requirement(op.operation_id)}
    if op.body_kind in BODY_SHAPE:
        ids |= {"KB-BODY-REQUIRED", BODY_SHAPE[op.body_kind], POSITIVE[op.body_kind]}
    if op.body_kind == "kb":
        ids |= set(KB_KEYWORDS.values())
    if op.operation_id in REQUIRED_QUERY:
        ids.add(REQUIRED_QUERY[op.operation_id])
    gone = gone_requirement(op)
    if gone:
        ids.add(gone)
    return ids


def gone_requirement(op: Operation) -> str | None:
    """For a DELETE whose resource has a GET on the same path: the requirement that it is gone."""
    if op.method != "DELETE" or f"GET {op.path}" not in by_label():
        return None
    return mapping.for_check("use_after_free", op.operation_id)


def requirements(operation_id: str, stateful: bool = False) -> list[str]:
    """Every requirement a property test of this operation may record (its req marker)."""
    names = {c.__name__ for c in CHECKS + LAST + (STATEFUL_ONLY if stateful else ())}
    ids = mapping.covered(names, operation_id)
    return sorted(ids | refinements(by_id(operation_id)))


def area_operations(tags: tuple[str, ...]) -> list[str]:
    """The operations of a state machine: those of `tags` in the capability group of the first
    (AI/v1 also holds the file and chat-kit creates, which belong to groups of their own)."""
    catalogue = load()

    def group(op: Operation) -> str | None:
        return catalogue.group_of_section(catalogue[status_requirement(op.operation_id)].section)

    ops = [op for op in operations() if set(op.tags) & set(tags)]
    return [op.operation_id for op in ops if group(op) == group(ops[0])]


def stateful_requirements(tags: tuple[str, ...]) -> list[str]:
    """Every requirement the state machine over the operations of `tags` may record."""
    ops = area_operations(tags)
    ids = {rid for op in ops for rid in requirements(op, stateful=True)}
    # use_after_free skips a repeated DELETE and nothing else uses a context file: not observable.
    ids.discard("CTX-DELETE-GONE")
    return sorted(ids)


# --- failure -> requirement ---------------------------------------------------------------------


def requirement_for(check: str, case: Case, response: Response, failure: Failure) -> str | None:
    """The requirement a check failure is a finding against; None where the suite may not ask."""
    op = by_id(operation_id(case))
    if check == "negative_data_rejection":
        return _negative_requirement(op, case, response)
    if check == "positive_data_acceptance":
        return POSITIVE.get(op.body_kind)
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
        guessed = negative or op.body_kind == "interpreted"
        if guessed and response.status_code >= 500:
            return None  # ROBUST-NO-5XX: the input is not one the document states
        return status_requirement(op.operation_id)
    if check in ("content_type_conformance", "response_schema_conformance"):
        negative = case.meta is not None and case.meta.generation.mode.is_negative
        if check == "response_schema_conformance" and negative and response.status_code < 300:
            return None  # it echoes the bad input it accepted: that acceptance is the finding
        if 400 <= response.status_code < 500:
            return ERROR_JSON  # an error answer that is not JSON (or not a JSON object)
        if response.status_code >= 500:
            return None
    candidates = [op.operation_id]
    if isinstance(failure, UseAfterFree):
        candidates.insert(0, _label_id(failure.operation or ""))
    if isinstance(failure, EnsureResourceAvailability):
        candidates[:0] = [_label_id(failure.not_available_with), _label_id(failure.created_with)]
    for candidate in candidates:
        req = mapping.for_check(check, candidate) if candidate else None
        if req is not None:
            return req
    return status_requirement(op.operation_id)


def passed_requirements(check: str, case: Case, response: Response) -> list[str]:
    """What a check that ran and did not fail shows to hold, where it exercised the behaviour:
    the documented success status on a 2xx, a JSON answer of the right type and shape on a 2xx,
    a rejection of input that breaks the document, a valid body accepted, no 5xx for malformed
    input, a request refused without (or with a wrong) credential."""
    op = by_id(operation_id(case))
    success = 200 <= response.status_code < 300
    negative = case.meta is not None and case.meta.generation.mode.is_negative
    if check == "status_code_conformance" and success and not negative:
        return [status_requirement(op.operation_id)]
    if check in ("content_type_conformance", "response_schema_conformance") and success:
        found = mapping.for_check(check, op.operation_id)
        return [found] if found and response.content else []
    if check == "negative_data_rejection" and 400 <= response.status_code < 500:
        found = _negative_requirement(op, case, response)
        return [found] if found else []
    if check == "positive_data_acceptance" and success:
        return [POSITIVE[op.body_kind]] if op.body_kind in POSITIVE else []
    if check == "not_a_server_error" and negative:
        return ["ROBUST-NO-5XX"]
    if check == "ignored_auth":
        return ["AUTH-MISSING-REJECTED", "AUTH-INVALID-REJECTED"]
    return []


def _auth_requirement(header: str, status: int) -> str | None:
    if header.lower() == LAST_EVENT_ID:
        return None
    if header.lower() != "authorization":
        return ROBUST
    return "AUTH-MISSING-REJECTED" if 200 <= status < 400 else "AUTH-401"


def _negative_requirement(op: Operation, case: Case, response: Response) -> str | None:
    found = [_negation_requirement(op, n, response) for n in negations(case)]
    if not found:
        return mapping.for_check("negative_data_rejection", op.operation_id) or ROBUST
    mandated = [r for r in found if r not in (None, ROBUST)]
    return mandated[0] if mandated else (ROBUST if ROBUST in found else None)


def _missing_query(op: Operation, response: Response) -> bool:
    if op.operation_id not in REQUIRED_QUERY:
        return False
    sent = {
        k for k, _ in parse_qsl(urlsplit(str(response.request.url)).query, keep_blank_values=True)
    }
    return not set(op.query_params) <= sent


def _negation_requirement(op: Operation, n: Negation, response: Response) -> str | None:
    if n.location == "header":
        if is_last_event_id(n):
            return None  # absent or empty means "from the first event" (spec x-interpretation-note)
        if n.name.lower() == "authorization":  # other mutations: the suite's token replaced them
            sent = "authorization" in {k.lower() for k in response.request.headers}
            return "AUTH-MISSING-REJECTED" if n.keyword == "missing" and not sent else None
        return ROBUST
    if n.location == "query" and _missing_query(op, response):
        return REQUIRED_QUERY[op.operation_id]  # a required parameter missing, however described
    if n.location == "query" and n.name in op.query_params and n.keyword == "type":
        return REQUIRED_QUERY.get(op.operation_id, ROBUST)
    if n.location in ("query", "header", "path") and n.keyword == "additionalProperties":
        return None  # an unknown parameter may be ignored
    if n.null and n.location == "body" and op.body_kind not in BODY_SHAPE:
        return (
            None  # null for an optional interpreted field: LangGraph's own models read it as absent
        )
    if n.location != "body" or op.body_kind not in BODY_SHAPE:
        return ROBUST
    if n.keyword == "missing" and n.name == "":
        return "KB-BODY-REQUIRED"
    if n.null:
        return ROBUST  # null for an optional field: many servers read it as absent
    if n.name == "" and n.keyword in ("type", "syntax"):
        return BODY_SHAPE[op.body_kind]
    if op.body_kind == "process" and n.name == "[]" and n.keyword == "type":
        return BODY_SHAPE[op.body_kind]
    if op.body_kind == "kb" and n.keyword in KB_KEYWORDS:
        return KB_KEYWORDS[n.keyword]
    return ROBUST  # e.g. the bulk array's items: KnowledgeDocument fields are interpreted


def _label_id(label: str) -> str:
    """The operationId of a label such as "DELETE /api/ai/threads/{thread_id}" (or "")."""
    method, _, path = label.partition(" ")
    op = by_label().get(f"{method.upper()} {path}")
    return op.operation_id if op else ""
