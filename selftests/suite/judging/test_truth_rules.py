"""The rules that keep verdicts true on servers the suite was not built against, one by one:
a pass rests on every operation its requirement names; a 2xx carrying an error object is no
success; a 5xx is never a refusal of input; streams are compared by the events a client can name;
what differs between two idle reads is no effect."""

from __future__ import annotations

import httpx
import pytest

from assistant_conformance.contract.catalogue import load
from assistant_conformance.report import verdicts
from assistant_conformance.report.model import PASS, SKIP, Finding, TestResult
from assistant_conformance.suite.http import trail
from assistant_conformance.suite.http.sse import SseEvent
from assistant_conformance.suite.judging import checks, error_bodies, findings

LIST = "GET /api/ai/threads/{thread_id}/runs"
WAIT = "POST /api/ai/threads/{thread_id}/runs/wait"


def result_of(*found: Finding) -> str:
    test = TestResult("t::x", ["RUN-STATUS"], "passed", list(found))
    result = verdicts.requirement_results(load(), [test])["RUN-STATUS"]
    return f"{result.verdict}: {result.reason}"


def test_a_pass_rests_on_every_operation_the_requirement_names() -> None:
    named = load().operations["RUN-STATUS"]
    assert len(named) == 7 and LIST in named and WAIT in named
    only_list = result_of(Finding("RUN-STATUS", PASS, operation=LIST))
    assert only_list.startswith(f"{SKIP}: not exercised on 6 of the 7 operations it names: ")
    missing = only_list.split("names: ", 1)[1].split("; ")
    assert WAIT in missing and LIST not in missing
    every = [Finding("RUN-STATUS", PASS, operation=op) for op in named]
    assert result_of(*every) == f"{PASS}: "


def test_store_and_message_search_name_their_bodyless_calls() -> None:
    assert load().operations["STORE-NO-BODY"] == (
        "POST /api/ai/store/items/search",
        "POST /api/ai/store/namespaces",
    )
    assert load().operations["MSG-SEARCH-NO-BODY"] == (
        "POST /api/ai/conversations/{conversation_id}/messages/search",
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"message": "Cannot read properties of undefined (reading 'where')"}, "Cannot read"),
        ({"statusCode": 500, "message": "boom", "error": "Internal"}, "boom"),
        ({"__error__": {"error": "ValueError"}}, "ValueError"),
        ({"detail": "Not Found"}, "Not Found"),
        ({"items": [], "total": 0}, None),
        ({"message": "hello", "id": "m1", "content": "x"}, None),  # a resource named message
        ({"status": "success"}, None),
        ({}, None),
        ([], None),
    ],
)
def test_an_error_object_is_told_from_a_result(body: object, message: str | None) -> None:
    found = error_bodies.error_message(body)
    assert (found is None) if message is None else (found is not None and message in found)


def answer(status: int, body: bytes, method: str = "POST") -> httpx.Response:
    request = httpx.Request(method, "http://t/api/ai/threads/t1/runs/wait", content=b"{}")
    return httpx.Response(status, content=body, request=request)


def test_a_5xx_is_never_a_refusal_of_the_suites_reading() -> None:
    assert findings.refused_reading(answer(422, b'{"detail": "input"}'))
    assert not findings.refused_reading(answer(500, b'{"message": "boom"}'))
    assert error_bodies.error_in(answer(201, b'{"message": "[ZodError]"}')) == "[ZodError]"
    assert error_bodies.error_in(answer(201, b'{"messages": []}')) is None


def event(name: str, event_id: str, own: bool = True, data: str = "{}") -> SseEvent:
    return SseEvent(name, data, event_id, own)


def test_an_opening_frame_without_an_id_is_no_missing_id_but_others_are() -> None:
    opening = [event("metadata", "", own=False, data='{"attempt": 2}'), event("values", "1")]
    assert checks.unnamed(opening) == []
    assert checks.unnamed([event("values", "1"), event("values", "1", own=False)]) == ["#1 values"]
    assert checks.unnamed([event("a", "", False), event("b", "", False)]) == ["#0 a", "#1 b"]


def test_streams_are_compared_by_the_events_a_client_can_name() -> None:
    first = [event("metadata", "", own=False, data='{"attempt": 1}'), event("values", "1")]
    again = [event("metadata", "", own=False, data='{"attempt": 2}'), event("values", "1")]
    assert [checks.event_key(e) for e in checks.named(first)] == [
        checks.event_key(e) for e in checks.named(again)
    ]
    unnamed = [event("values", "", own=False, data="1"), event("values", "", own=False, data="2")]
    assert checks.named(unnamed) == unnamed  # no ids at all: every event is compared


def read(body: bytes) -> trail.Entry:
    entry = trail.Entry("GET", "http://t/api/ai/threads/t1/state", {}, None)
    entry.status = 200
    entry.take(body)
    return entry


def test_what_differs_between_idle_reads_is_no_effect() -> None:
    before = read(b'{"values": {"a": 1}, "created_at": "10:00", "checkpoint": {"id": "c1"}}')
    idle = read(b'{"values": {"a": 1}, "created_at": "10:01", "checkpoint": {"id": "c2"}}')
    same = read(b'{"values": {"a": 1}, "created_at": "10:02", "checkpoint": {"id": "c3"}}')
    changed = read(b'{"values": {"a": 2}, "created_at": "10:02", "checkpoint": {"id": "c3"}}')
    check = checks.SameReadsCheck(entries=(0, 1), idle=(2,))
    assert checks.evaluate(check, [before, same, idle])[0]
    assert not checks.evaluate(check, [before, changed, idle])[0]
    assert not checks.evaluate(checks.SameReadsCheck(entries=(0, 1)), [before, same])[0]


@pytest.mark.parametrize(
    ("query", "charged"),
    [
        ("limit=0.0&offset=0.0&=null", None),  # both required went: nothing is missing
        ("offset=0&=null", "MSG-PAGING-REQUIRED"),  # limit is missing: the paging requirement
    ],
)
def test_a_query_said_missing_is_judged_by_what_was_sent(query: str, charged: str | None) -> None:
    """A negative case whose only rule broken is "the query (whole) is missing something" but
    that sent every required parameter (found at --examples 1000: `limit=0.0&offset=0.0&=null`,
    accepted by the reference) breaks nothing the document states: not a refusal owed."""
    from types import SimpleNamespace

    from assistant_conformance.contract.openapi import by_label
    from assistant_conformance.suite.judging import schemathesis_charges
    from assistant_conformance.suite.judging.negations import Negation

    op = by_label()["GET /api/ai/conversations/{conversation_id}/messages"]
    url = f"http://127.0.0.1:1/api/ai/conversations/c1/messages?{query}"
    response = SimpleNamespace(request=SimpleNamespace(url=url))
    missing = Negation("query", "", "missing")
    got = schemathesis_charges._negation_requirement(op, missing, response)  # type: ignore[arg-type]
    assert got == charged
