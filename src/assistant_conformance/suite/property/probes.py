"""Probes: requests the property layer adds on live resources, beyond the generated cases: a
required query parameter left out (once per operation), and a GET after a DELETE."""

from __future__ import annotations

import time
from collections.abc import Callable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import requests
from schemathesis.core.transport import Response
from schemathesis.generation.case import Case

from assistant_conformance.contract.openapi import by_label
from assistant_conformance.suite.http import exchange
from assistant_conformance.suite.judging import checks, findings, schemathesis_charges

# A GET of a URL with the run's credential: its answer, or None when none came within bounds.
Send = Callable[[str], requests.Response | None]


def required_query(send: Send, probed: set[str], case: Case, response: Response) -> None:
    """Once per operation (`probed` keeps which), on a request the target answered 2xx (a live
    resource, when a link supplied the path): the same request without each required query
    parameter is refused."""
    op = by_label()[case.operation.label]
    if "query" not in op.requirements or f"query:{op.operation_id}" in probed:
        return
    probed.add(f"query:{op.operation_id}")
    url = urlsplit(str(response.request.url))
    for name in op.query_params:
        kept = [(k, v) for k, v in parse_qsl(url.query, keep_blank_values=True) if k != name]
        probe = send(urlunsplit(url._replace(query=urlencode(kept))))
        if probe is None or probe.status_code >= 500:
            continue  # no answer, or a 5xx: proves nothing about the parameter
        # The same request answered 2xx with the parameter: a control of its own.
        check = checks.StatusClassCheck(entry=findings.current().entry(None), classes=(4,))
        findings.expect(
            op.requirements["query"],
            400 <= probe.status_code < 500,
            f"a 4xx for {op.label} without its required query parameter {name}",
            f"HTTP {probe.status_code} without `{name}` (with it: HTTP {response.status_code})",
            exchange.from_requests(probe),
            check=check,
        )


def gone(send: Send, case: Case, response: Response) -> None:
    """After a DELETE the target answered 2xx: a GET of the same resource no longer finds it
    (a 202 may finish later, so the GET is retried for about a second)."""
    op = by_label()[case.operation.label]
    requirement = schemathesis_charges.gone_requirement(op)
    if requirement is None:
        return
    probe = send(str(response.request.url))
    for _ in range(3):
        if probe is None or not 200 <= probe.status_code < 300:
            break
        time.sleep(0.3)
        probe = send(str(response.request.url))
    if probe is None or probe.status_code >= 500:
        return
    check = checks.StatusCheck(entry=findings.current().entry(None), statuses=(404, 410))
    findings.expect(
        requirement,
        probe.status_code in (404, 410),
        f"404 for the resource {op.label} deleted (HTTP {response.status_code})",
        f"GET answered HTTP {probe.status_code}",
        exchange.from_requests(probe),
        check=check,
    )
