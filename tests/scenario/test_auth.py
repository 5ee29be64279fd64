"""Authentication (interface §5), for every operation of spec/openapi.yaml, and principal isolation.

The operations come from the document (contract/openapi.py), never from a hand-made list: a test
id names the operation and the credential case, e.g. `POST /api/ai/threads-no-header`. The
credential cases' clients come from suite/http/clients.py like every other client, with the
run's guard and ledger around them: their answers are read under the same bounds (a hostile
answer to a request without a credential is a finding, AUTH-401, never a hang), their creates
written to the ledger before they are sent.

- every operation, times {no header, Basic scheme, empty bearer, unknown token}, on placeholder ids:
  never a 2xx, 401 with a Bearer challenge; a create refused leaves nothing behind;
- every operation on an identifier, without a header or with an unknown token, on a REAL resource
  of the main principal (a server that looks the resource up before checking the credential cannot
  hide a missing check there), and the resource is unchanged afterwards;
- the two streams with `last-event-id` (a real event id) and no credential: refused;
- the second principal (--alt-token) can neither reach nor find what the first one created.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from assistant_conformance.contract.openapi import (
    MARKER_KEY,
    Operation,
    basic_credential,
    by_id,
    operations,
)
from assistant_conformance.suite.config.settings import SuiteSettings
from assistant_conformance.suite.flows import is_success, json_of, send
from assistant_conformance.suite.flows.agent import Agent
from assistant_conformance.suite.flows.auth import (
    CONTEXT_FILES,
    Resources,
    Unavailable,
    created_path,
    track_created,
)
from assistant_conformance.suite.flows.owner_reads import AroundRequest
from assistant_conformance.suite.http import clients, sse
from assistant_conformance.suite.http.absent import unimplemented
from assistant_conformance.suite.http.policy import Policy
from assistant_conformance.suite.http.target import Target
from assistant_conformance.suite.http.trail import Entry
from assistant_conformance.suite.judging.checks import HeaderCheck, StatusCheck, StatusClassCheck
from assistant_conformance.suite.judging.findings import expect, index, judge, not_judged
from assistant_conformance.suite.safety.ledger import ANONYMOUS, Ledger
from assistant_conformance.suite.safety.session import SafetySession

MISSING, INVALID, STATUS_401 = "AUTH-MISSING-REJECTED", "AUTH-INVALID-REJECTED", "AUTH-401"
CHALLENGE, NO_EFFECT = "AUTH-WWW-AUTHENTICATE", "AUTH-REJECTED-NO-EFFECT"
ISOLATION, LAST_EVENT_ID = "AUTH-PRINCIPAL-ISOLATION", "AUTH-LAST-EVENT-ID-NOT-CREDENTIAL"
CASES: dict[str, str | None] = {
    "no-header": None,
    "basic": basic_credential(),
    "empty-bearer": "Bearer",
    "wrong-token": f"Bearer conformance-{secrets.token_urlsafe(24)}",
}
BEARER_CHALLENGE = re.compile(r"(^|,)\s*bearer(\s|,|$)", re.IGNORECASE)
STREAM_DEADLINE = 3.0  # seconds a stream that should have been refused is read


def _found_threads(api: httpx.Client, marker: str) -> list[str]:
    body = json_of(api.post("/api/ai/threads/search", json={"metadata": {MARKER_KEY: marker}}))
    found = body if isinstance(body, list) else []
    return [
        t["thread_id"]
        for t in found
        if isinstance(t, dict) and (t.get("metadata") or {}).get(MARKER_KEY) == marker
    ]


def _found_conversations(api: httpx.Client, marker: str) -> list[str]:
    body = json_of(api.post("/api/ai/conversations/search", json={"where": {"title": marker}}))
    found = body.get("items") if isinstance(body, dict) else None
    return [c["id"] for c in found or [] if isinstance(c, dict) and c.get("title") == marker]


# A create refused must leave nothing the owner can find by the marker its body carried.
MARKER_SEARCHES: dict[str, Callable[[httpx.Client, str], list[str]]] = {
    "createThread": _found_threads,
    "createConversation": _found_conversations,
}
BY_ID = [op for op in operations() if op.path_params]


def _reqs(case: str, *more: str) -> Any:
    return pytest.mark.req(MISSING if case == "no-header" else INVALID, *more)


def _every_operation() -> list[Any]:
    return [
        pytest.param(
            op,
            case,
            id=f"{op.label}-{case}",
            marks=_reqs(
                case,
                STATUS_401,
                CHALLENGE,
                *((NO_EFFECT,) if op.operation_id in MARKER_SEARCHES else ()),
            ),
        )
        for op in operations()
        for case in CASES
    ]


def _every_operation_on_a_resource() -> list[Any]:
    return [
        pytest.param(
            op,
            case,
            id=f"{op.label}-{case}",
            marks=_reqs(case, STATUS_401, *((NO_EFFECT,) if op.id_kind != "assistant" else ())),
        )
        for op in BY_ID
        for case in ("no-header", "wrong-token")
    ]


@pytest.fixture(scope="module")
def credential_clients(
    target: Target, policy: Policy, run_safety: SafetySession
) -> Iterator[dict[str, httpx.Client]]:
    """One client per credential case, through the run's policy and door, the run's guard and
    ledger around it: a create it sends is on the ledger before it goes out (it should make
    nothing; if it does, the run removes it)."""
    around = run_safety.around(ANONYMOUS, None)
    made = {case: clients.client(policy, target.base_url, around=around) for case in CASES}
    for case, value in CASES.items():
        if value is not None:
            made[case].headers["Authorization"] = value
    yield made
    for client in made.values():
        client.close()


@pytest.fixture(scope="module")
def owned(
    api: httpx.Client, ledger: Ledger, suite_settings: SuiteSettings, agent: Agent
) -> Resources:
    """Resources of the main principal, created on first need."""
    return Resources(api, ledger, suite_settings.process_timeout, agent)


def _real(owned: Resources, op: Operation) -> Any:
    try:
        return owned.isolated(op)
    except Unavailable as exc:
        pytest.skip(str(exc))


NOT_2XX = (1, 3, 4, 5)  # status classes


def _not_there(case: str, response: httpx.Response, ids: Any = ()) -> bool:
    """An operation the target does not implement refuses nothing: its credential check is not
    judged (the absence is its status requirement's finding, suite/http/absent.py). Its status says
    so, 405 or 501: a 404 may hide a resource from who lacks a credential (RFC 9110 §15.5.5), and
    a message may be about the credential sent."""
    why = unimplemented(response, set(ids)) if response.status_code in (405, 501) else None
    for rid in (MISSING if case == "no-header" else INVALID, STATUS_401) if why else ():
        not_judged(rid, f"not judged: the operation is not there ({why})")
    return why is not None


def _expect_refused(case: str, response: httpx.Response) -> None:
    judge(
        MISSING if case == "no-header" else INVALID,
        StatusClassCheck(entry=index(response), classes=NOT_2XX),
        f"not a 2xx: the request carries {'no' if case == 'no-header' else 'no valid'} credential",
        response,
    )


def _expect_401(response: httpx.Response) -> bool:
    at = index(response)
    return judge(STATUS_401, StatusCheck(entry=at, statuses=(401,)), "HTTP 401", response)


@pytest.mark.parametrize(("op", "case"), _every_operation())
def test_refused_without_valid_credential(
    op: Operation,
    case: str,
    credential_clients: dict[str, httpx.Client],
    api: httpx.Client,
    ledger: Ledger,
) -> None:
    marker = f"{ledger.run_prefix}-auth-{secrets.token_hex(4)}"
    response = send(credential_clients[case], op, **op.request(marker=marker))
    track_created(ledger, op, response)
    if _not_there(case, response):
        return
    _expect_refused(case, response)
    if _expect_401(response):
        challenge = HeaderCheck(
            entry=index(response),
            name="www-authenticate",
            pattern=BEARER_CHALLENGE.pattern,
            ignore_case=True,
        )
        judge(CHALLENGE, challenge, "a WWW-Authenticate header with a Bearer challenge", response)
    if search := MARKER_SEARCHES.get(op.operation_id):
        found = search(api, marker)
        for leftover in found:
            ledger.track("DELETE", f"{op.path}/{leftover}")
        expect(
            NO_EFFECT,
            not found,
            f"nothing carrying the marker {marker!r} exists afterwards",
            f"the owner finds {found}",
            response,
        )


@pytest.mark.parametrize(("op", "case"), _every_operation_on_a_resource())
def test_refused_on_an_existing_resource(
    op: Operation,
    case: str,
    credential_clients: dict[str, httpx.Client],
    owned: Resources,
    ledger: Ledger,
    api: httpx.Client,
) -> None:
    real = _real(owned, op)
    around = AroundRequest.read_before(api, owned.reads(op, real.ids))
    response = send(credential_clients[case], op, **op.request(real.ids, owned.marker, real.extra))
    track_created(ledger, op, response)
    if _not_there(case, response, real.ids.values()):
        return
    _expect_refused(case, response)
    _expect_401(response)
    if op.id_kind == "assistant":
        return
    if op.target == "context_file":  # no read: its owner's delete tells whether it is there
        deleted = api.delete(f"{CONTEXT_FILES}/{real.ids['context_file']}")
        expect(
            NO_EFFECT,
            is_success(deleted),
            "the context file still there: its owner's delete succeeds",
            f"the owner's delete answered HTTP {deleted.status_code}",
            response,
        )
        return
    around.read_after()
    around.judge(NO_EFFECT, response)


@pytest.mark.parametrize("operation_id", ["streamRun", "joinRunStream"])
@pytest.mark.req(LAST_EVENT_ID)
def test_last_event_id_is_not_a_credential(
    operation_id: str, anonymous_api: httpx.Client, api: httpx.Client, owned: Resources
) -> None:
    op = by_id(operation_id)
    join = by_id("joinRunStream")
    real, joined = _real(owned, op), _real(owned, join)
    # The id of an event the owner received: a server treating it as a resume token shows here.
    seen = sse.read_stream(api, "GET", join.url(joined.ids), deadline=STREAM_DEADLINE, max_events=1)
    event_id = seen.events[0].id if seen.events and seen.events[0].id else "0"
    args = op.request(real.ids, owned.marker, real.extra)
    read = sse.read_stream(
        anonymous_api,
        op.method,
        args["url"],
        deadline=STREAM_DEADLINE,
        max_events=1,
        headers={"last-event-id": event_id},
        json_body=args.get("json"),
    )
    judge(
        LAST_EVENT_ID,
        StatusClassCheck(entry=index(read.entry), classes=NOT_2XX),
        "not a 2xx: last-event-id is no credential",
        read.exchange,
    )


@pytest.mark.parametrize(
    "op", [pytest.param(op, id=op.label) for op in BY_ID if op.id_kind != "assistant"]
)
@pytest.mark.req(ISOLATION)
def test_other_principal_cannot_reach(
    op: Operation, alt_api: httpx.Client, owned: Resources
) -> None:
    """Another principal's resource is invisible: it is answered as an id that does not exist is
    (what that answer should be is ROBUST-UNKNOWN-ID-404's), and nothing of it shows or changes."""
    real = _real(owned, op)
    around = AroundRequest.read_before(owned.api, owned.reads(op, real.ids))
    foreign = _reach(alt_api, op, op.request(real.ids, owned.marker, real.extra))
    made = (
        created_path(op, foreign.evidence) if isinstance(foreign.evidence, httpx.Response) else None
    )
    if made is not None:
        alt_api.delete(made)  # a copy the other principal made: only it can remove it
    unknown = _reach(alt_api, op, op.request({}, owned.marker, real.extra))
    shown = [v for v in real.ids.values() if v in foreign.text]
    expect(
        ISOLATION,
        foreign.status in (403, 404) or (foreign.signature == unknown.signature and not shown),
        f"answered as an unknown id is ({unknown.signature}), or 404/403, showing nothing of it",
        foreign.signature + (f", showing {shown}" if shown else ""),
        foreign.evidence,
    )
    if op.target == "context_file":  # no read: its owner's delete tells whether it is there
        deleted = owned.api.delete(f"{CONTEXT_FILES}/{real.ids['context_file']}")
        expect(
            ISOLATION,
            is_success(deleted),
            "the context file still there: its owner's delete succeeds",
            f"the owner's delete answered HTTP {deleted.status_code}",
        )
        return
    around.read_after()
    around.judge(ISOLATION, foreign.evidence)


@dataclass
class Reached:
    evidence: httpx.Response | Entry
    status: int
    text: str  # a 2xx body, or the events a stream sent (a few, within a short deadline)
    signature: str  # what tells two answers apart: the status; for a stream, how many events


def _reach(client: httpx.Client, op: Operation, args: dict[str, Any]) -> Reached:
    if not op.streaming:
        response = send(client, op, **args)
        text = response.text if is_success(response) else ""
        return Reached(response, response.status_code, text, f"HTTP {response.status_code}")
    read = sse.read_stream(
        client,
        op.method,
        args["url"],
        deadline=STREAM_DEADLINE,
        max_events=3,
        headers=args.get("headers"),
        json_body=args.get("json"),
    )
    text = " ".join(f"{e.event} {e.data}" for e in read.events)
    return Reached(
        read.exchange, read.status, text, f"HTTP {read.status}, {len(read.events)} events"
    )


@pytest.mark.req(ISOLATION)
def test_other_principal_searches_do_not_list(alt_api: httpx.Client, owned: Resources) -> None:
    try:
        thread = owned.real(by_id("getThread")).ids["thread_id"]
        conversation = owned.real(by_id("getConversation")).ids["conversation_id"]
    except Unavailable as exc:
        pytest.skip(str(exc))
    threads = alt_api.post("/api/ai/threads/search", json={"limit": 1000})
    listed = json_of(threads)
    ids = (
        [t.get("thread_id") for t in listed if isinstance(t, dict)]
        if isinstance(listed, list)
        else []
    )
    expect(
        ISOLATION,
        thread not in ids,
        "thread search of another principal does not list it",
        threads,
        threads,
    )
    found = _found_conversations(alt_api, owned.marker)
    conversations = alt_api.post("/api/ai/conversations/search", json={"take": 1000})
    body = json_of(conversations)
    items = body.get("items") if isinstance(body, dict) else None
    listed_ids = [c.get("id") for c in items or [] if isinstance(c, dict)]
    expect(
        ISOLATION,
        not found and conversation not in listed_ids,
        "conversation search of another principal does not list it",
        conversations,
        conversations,
    )
