"""Mutants of what real servers do wrong: one run path broken, a 2xx that carries an error, a
challenge missing on one operation, a body declared as text, bad state after a run."""

from __future__ import annotations

import re
from typing import Any

from starlette.types import Message, Receive, Scope, Send

from assistant_conformance.proof.mutants._base import (
    ERROR_500,
    RUN,
    RUN_TERMINAL,
    THREAD,
    Mutant,
    answer_of,
    as_request,
    json_or_none,
    read_body,
    replay,
    send_answer,
    send_json,
)
from assistant_conformance.proof.mutants.statuses import NoWwwAuthenticate
from assistant_conformance.proof.mutants.streams import EventsWithoutIds

WAIT = re.compile(THREAD + r"/runs/wait")
JOIN = re.compile(f"({RUN})/stream")
# What any run path serves, as `-k` words (each matches the IDs it is part of; the whole
# expression must stay short: the command line reads each argument as a possible path): a
# mutant that breaks one run path is run against all of it, so a verdict the broken path takes
# down wrongly shows beside the expected ones.
RUN_SERVED = (
    "RUN-STATUS",
    "RUN-STREAM",
    "RUN-JOIN",
    "RUN-WAIT",
    "RUN-CANCEL",
    "RUN-GET",
    "RUN-LIST",
    "USAGE-ROWS",
    "LAST-EVENT-ID",
)


class WaitFailsAfterRun(Mutant):
    """RUN-STATUS: runs/wait runs the graph to its end (the run reads `success`), then answers 500
    (ROBUST-NO-5XX too); streams, background runs, join, cancel, list and get work."""

    method, path = "POST", WAIT

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        start, content = await answer_of(self.app, scope, await read_body(receive))
        if 200 <= start["status"] < 300:
            await send_json(send, 500, ERROR_500)
            return
        await send_answer(send, start, start["status"], content)


class WaitAnswersTextPlain(Mutant):
    """RUN-STATUS: runs/wait answers 200, not 201, and declares its JSON body `text/plain`
    (ROBUST-JSON-CONTENT-TYPE too)."""

    method, path = "POST", WAIT

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        start, content = await answer_of(self.app, scope, await read_body(receive))
        if start["status"] == 201:
            await send_answer(send, as_text(start), 200, content)
            return
        await send_answer(send, start, start["status"], content)


def as_text(start: Message) -> Message:
    headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-type"]
    return {**start, "headers": [*headers, (b"content-type", b"text/plain; charset=utf-8")]}


class CrashAsSuccess(Mutant):
    """Base: a call without a body that the reference answers with a 2xx is answered with the same
    status and `{"message": crash}` instead, as a server whose handler read a field of the missing
    body and whose error filter kept the status."""

    crash = ""

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        start, content = await answer_of(self.app, scope, body)
        if not body.strip() and 200 <= start["status"] < 300:
            await send_json(send, start["status"], {"message": self.crash})
            return
        await send_answer(send, start, start["status"], content)


class MessageSearchCrashAsSuccess(CrashAsSuccess):
    """MSG-SEARCH-NO-BODY: messages search without a body answers `200 {"message": "Cannot read
    properties of undefined (reading 'where')"}`, no items; with a body, as the reference."""

    method, path = "POST", re.compile(r"/api/ai/conversations/[^/]+/messages/search")
    crash = "Cannot read properties of undefined (reading 'where')"


class MessageSearchCrashKeepsStatus(MessageSearchCrashAsSuccess):
    """MSG-SEARCH-NO-BODY: as message-search-2xx-error, judged over the whole conversations area
    (its scenarios and the property layer): a search with a body answers 200 with its results, so
    MSG-STATUS is kept on every message operation (it must pass)."""

    kept = ("MSG-STATUS",)


class StoreCrashAsSuccess(CrashAsSuccess):
    """STORE-NO-BODY: store item search and namespaces without a body answer `201 {"message":
    "Cannot read properties of undefined (reading 'namespace_prefix')"}`; with a body, as the
    reference."""

    method, path = "POST", re.compile(r"/api/ai/store/(?:items/search|namespaces)")
    crash = "Cannot read properties of undefined (reading 'namespace_prefix')"


class ThreadSearchWithoutChallenge(NoWwwAuthenticate):
    """AUTH-WWW-AUTHENTICATE: the 401s of POST /api/ai/threads/search (and of it alone) carry no
    WWW-Authenticate header; the suite refuses credentials there in its auth checks and with an
    expired chat-kit secret."""

    method, path = "POST", re.compile(r"/api/ai/threads/search")
    applies = Mutant.applies  # one operation, not every request


class IdlessReplayEmpty(EventsWithoutIds):
    """RUN-STREAM-EVENT-IDS: events carry no `id:`; RUN-JOIN-REPLAY: joining a finished run
    (without last-event-id: the whole run again) answers an event stream that ends at once,
    empty; a join of a run still going streams the rest, as the reference."""

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        joined = JOIN.fullmatch(scope["path"]) if scope["method"] == "GET" else None
        if joined is not None:
            start, content = await answer_of(self.app, as_request(scope, "GET", joined[1]))
            run = json_or_none(content)
            ended = isinstance(run, dict) and run.get("status") in RUN_TERMINAL
            if start["status"] == 200 and ended:
                headers = [(b"content-type", b"text/event-stream"), (b"content-length", b"0")]
                await send({"type": "http.response.start", "status": 200, "headers": headers})
                await send({"type": "http.response.body", "body": b""})
                return
        await super().mutate(scope, receive, send)


def message_like(entry: Any) -> bool:
    """What a LangChain client coerces to a message: a text, or an object with a type (or role)
    and a content."""
    if isinstance(entry, str):
        return True
    return isinstance(entry, dict) and ("type" in entry or "role" in entry) and "content" in entry


def malformed_messages(body: Any) -> bool:
    """A state write whose `values.messages` holds something that is not a message."""
    values = body.get("values") if isinstance(body, dict) else None
    if not isinstance(values, dict) or "messages" not in values:
        return False
    messages = values["messages"]
    entries = messages if isinstance(messages, list) else [messages]
    return not all(message_like(entry) for entry in entries)


class StateWriteCrashesAfterRun(Mutant):
    """ROBUST-NO-5XX: a state write whose `values.messages` holds a non-message answers 500 on a
    thread that has had a run (its graph's reducer fails on it), 400 on a thread that never ran."""

    method, path = "POST", re.compile(THREAD + r"/state")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        if malformed_messages(json_or_none(body)):
            runs = as_request(scope, "GET", scope["path"].removesuffix("/state") + "/runs")
            query = b"limit=1&offset=0"
            listed, content = await answer_of(self.app, {**runs, "query_string": query})
            found = json_or_none(content)
            if listed["status"] == 200 and isinstance(found, list):
                await refuse(send, ran=bool(found))
                return
        await self.app(scope, replay(body, receive), send)  # 401, 404: as the reference


async def refuse(send: Send, ran: bool) -> None:
    if ran:
        await send_json(send, 500, ERROR_500)
        return
    why = "values.messages must hold messages (a text, or an object with type and content)"
    await send_json(send, 400, {"statusCode": 400, "message": why, "error": "Bad Request"})


REGISTRY: dict[str, tuple[type[Mutant], tuple[str, ...]]] = {
    "wait-500-after-run": (WaitFailsAfterRun, ("RUN-STATUS", "ROBUST-NO-5XX")),
    "message-search-2xx-error": (MessageSearchCrashAsSuccess, ("MSG-SEARCH-NO-BODY",)),
    "store-2xx-error": (StoreCrashAsSuccess, ("STORE-NO-BODY",)),
    "www-authenticate-missing-on-one-operation": (
        ThreadSearchWithoutChallenge,
        ("AUTH-WWW-AUTHENTICATE",),
    ),
    "wait-200-text-plain": (WaitAnswersTextPlain, ("RUN-STATUS", "ROBUST-JSON-CONTENT-TYPE")),
    "state-write-500-after-run": (StateWriteCrashesAfterRun, ("ROBUST-NO-5XX",)),
    "events-without-ids-replay-empty": (
        IdlessReplayEmpty,
        ("RUN-STREAM-EVENT-IDS", "RUN-JOIN-REPLAY"),
    ),
    "message-search-2xx-error-status-kept": (
        MessageSearchCrashKeepsStatus,
        ("MSG-SEARCH-NO-BODY",),
    ),
}
