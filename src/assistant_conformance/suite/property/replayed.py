"""A property-layer finding's check in words a replay can judge again (suite/evidence/replay.py).

Checks that read the case's generation (negative or positive data, a missing header) or the
state machine's history (use after free, availability) become status checks of the answer,
with the statuses the check expected; the others are schemathesis' own, run again on the new
answer with a case rebuilt from the request that got it: its path parameters, query (a name
given twice keeps both), headers, and its body as the very bytes sent under the very content
type (JSON, text, a multipart upload; application/octet-stream where none was sent), or no body
at all where none was sent (an operation the document gives no body, a bodyless POST).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

import requests
from schemathesis.checks import run_checks
from schemathesis.core import NOT_SET
from schemathesis.core.failures import Failure
from schemathesis.core.transport import Response

from assistant_conformance.contract.openapi import match_path
from assistant_conformance.suite.http import trail
from assistant_conformance.suite.judging import schemathesis_charges
from assistant_conformance.suite.judging.checks import (
    Check,
    SchemathesisCheck,
    StatusCheck,
    StatusClassCheck,
    Verdict,
)
from assistant_conformance.suite.property import compat, generation
from assistant_conformance.suite.property.scope import CHECKS, LAST, STATEFUL_ONLY

AS_STATUS: dict[str, tuple[tuple[int, ...], tuple[int, ...] | None]] = {
    # the status classes and statuses each check accepts (generation.schema's configuration,
    # schemathesis' rules)
    "negative_data_rejection": ((4, 5), None),
    "positive_data_acceptance": ((2, 5), (401, 403, 404, 409, 429)),
    "missing_required_header": ((4,), None),
    "use_after_free": ((4, 5), None),
    "ensure_resource_availability": ((2,), None),
}


def replay_check(name: str, failure: Failure, entry: int) -> Check:
    """How a replay judges a failure of check `name` on the answer at trail index `entry`."""
    if name in AS_STATUS:
        statuses = getattr(failure, "expected_statuses", None)
        if name == "missing_required_header" and statuses:
            return StatusCheck(entry=entry, statuses=tuple(sorted(statuses)))
        classes, accepted = AS_STATUS[name]
        return StatusClassCheck(entry=entry, classes=classes, statuses=accepted)
    return SchemathesisCheck(name=name, entry=entry)


def judge_again(
    check: SchemathesisCheck, requirement: str, answer: trail.Entry, kwargs: dict[str, Any]
) -> Verdict:
    """Run schemathesis' check `check.name` on a replayed answer; it holds unless a failure
    is charged to `requirement`. `kwargs`: the transport (session, headers) its probes use."""
    if answer.status is None:
        return False, f"no answer: {answer.fault or 'none came'}"
    case = rebuilt(answer)
    response = _response(answer)
    every = {c.__name__: c for c in CHECKS + STATEFUL_ONLY + LAST}
    failures: list[tuple[str, Failure]] = []
    run_checks(
        case=case,
        response=response,
        ctx=compat.check_context(case, kwargs, None),
        checks=[every[check.name]],
        on_failure=lambda name, _, failure: failures.append((name, failure)),
    )
    charged = [
        f
        for n, f in failures
        if schemathesis_charges.check_failure(n, case, response, f) == requirement
    ]
    if charged:
        return False, f"HTTP {answer.status}; {charged[0].title}"
    return True, f"HTTP {answer.status}"


# Headers of the transport, not of the case: the client that sends it again writes its own.
TRANSPORT_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection"})
RAW = "application/octet-stream"  # schemathesis sends bytes of this type as they are


def rebuilt(answer: trail.Entry) -> Any:
    """The schemathesis case of the request that got `answer`, as it was sent (LookupError for a
    request of no operation of the document: there is no case to rebuild)."""
    url = urlsplit(answer.url)
    template, parameters = match_path(url.path) or (url.path, {})
    try:
        operation = generation.schema()[template][answer.method]
    except LookupError:
        raise LookupError(f"{answer.method} {url.path}: not an operation of the document") from None
    headers = {
        k: v for k, v in answer.request_headers.items() if k.lower() not in TRANSPORT_HEADERS
    }
    sent = answer.request_body
    return operation.Case(
        path_parameters=parameters,  # as written in the path: schemathesis writes them as given
        query=_query(url.query),
        headers=headers,
        # the bytes sent, under the Content-Type sent (kept in `headers`); none: no body at all
        body=bytes(sent) if sent else NOT_SET,
        media_type=RAW if sent else None,
    )


def _query(query: str) -> dict[str, Any]:
    """The query as schemathesis takes it: a name given twice keeps both values."""
    found: dict[str, list[str]] = {}
    for name, value in parse_qsl(query, keep_blank_values=True):
        found.setdefault(name, []).append(value)
    return {name: values[0] if len(values) == 1 else values for name, values in found.items()}


def _response(answer: trail.Entry) -> Response:
    prepared = requests.Request(
        answer.method, answer.url, headers=answer.request_headers, data=answer.request_body
    ).prepare()
    return Response(
        status_code=answer.status or 0,
        headers={k.lower(): [v] for k, v in answer.response_headers.items()},
        content=bytes(answer.response_body),
        request=prepared,
        elapsed=answer.seconds,
        verify=True,
    )
