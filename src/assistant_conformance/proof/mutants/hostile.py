"""Hostile mutants: targets that misbehave below the contract (answers that drip, never end, are
cut short, streams that stay open, operations that never answer). Each breaks one requirement
and carries a Bound: the suite, with default options, must end within it, in bounded memory,
with the named requirement failed, never a hang, an out-of-memory kill or a harness error.
Every request to the operation is hostile, with or without a valid credential: the answer's head
is the reference's (a 401 stays a 401), its body is the misbehaviour, so every client of the
suite (the credential cases of the auth checks included) meets it.
"""

from __future__ import annotations

import asyncio
import re

from starlette.types import Message, Receive, Scope, Send

from assistant_conformance.proof.mutants._base import RUN, THREAD, Bound, EventFrames, Mutant

STREAM = re.compile(THREAD + r"/runs/stream")
STREAM_BOUND = Bound(exit=0)  # RUN-STREAM-ENDS is a SHOULD: a warning, exit 0


def without_length(message: Message) -> Message:
    """An answer's head without its Content-Length: the body that follows is not the app's."""
    headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"content-length"]
    return {**message, "headers": headers}


def pinging_forever(send: Send) -> Send:
    """`send`, except that the end of a body becomes `: ping` comments every 0.2 s, forever
    (until the client goes away: the send then fails)."""

    async def kept_open(message: Message) -> None:
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            await send({**message, "more_body": True})
            while True:
                await asyncio.sleep(0.2)
                await send({"type": "http.response.body", "body": b": ping\n\n", "more_body": True})
        await send(message)

    return kept_open


class Hostile(Mutant):
    """Base: every request to the operation gets the reference's head and a hostile body."""

    bound = Bound()


class AnswerDrips(Hostile):
    """THR-STATUS: POST /api/ai/threads/{id}/history sends its head, then one body byte every
    half second, forever (each read is quick: only a bound on the whole answer ends it)."""

    timed = True  # its deadlines are counted across workers (observe.Deadlines)

    method, path = "POST", re.compile(THREAD + "/history")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def dripping(message: Message) -> None:
            if message["type"] == "http.response.start":
                await send(without_length(message))
                return
            while True:
                await send({"type": "http.response.body", "body": b" ", "more_body": True})
                await asyncio.sleep(0.5)

        await self.app(scope, receive, dripping)


class AnswerNeverEnds(Hostile):
    """THR-STATUS: GET /api/ai/threads/{id}/state answers a JSON body that never ends, as fast
    as the connection takes it (a 3 GB answer, and more)."""

    method, path = "GET", re.compile(THREAD + "/state")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def endless(message: Message) -> None:
            if message["type"] == "http.response.start":
                await send(without_length(message))
                return
            await send({"type": "http.response.body", "body": b'{"values": [', "more_body": True})
            chunk = b'"' + b"x" * 65_530 + b'",'
            while True:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await asyncio.sleep(0)

        await self.app(scope, receive, endless)


class AnswerCutShort(Hostile):
    """RUN-STATUS: GET /api/ai/threads/{id}/runs/{run_id} announces 1000 bytes, sends 12 and
    closes the connection (RFC 9112 §8: an incomplete message)."""

    method, path = "GET", re.compile(RUN)

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def cut(message: Message) -> None:
            if message["type"] == "http.response.start":
                head = without_length(message)
                await send({**head, "headers": [*head["headers"], (b"content-length", b"1000")]})
                return
            await send({"type": "http.response.body", "body": b'{"run_id": "', "more_body": True})
            raise RuntimeError("connection dropped mid-answer")  # uvicorn closes the connection

        await self.app(scope, receive, cut)


class StreamNeverEnds(Hostile):
    """RUN-STREAM-ENDS: POST .../runs/stream answers 201 and a stream of events that never ends
    (a request the reference refuses gets its refusal, with a body that never ends)."""

    bound = STREAM_BOUND
    method, path = "POST", STREAM

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.authorized(scope):
            await endless_events(send)
        else:
            await self.app(scope, receive, pinging_forever(send))


async def endless_events(send: Send, pause: float = 0.02) -> None:
    """Answer 201 and an event stream that never ends (until the client goes away)."""
    headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
    await send({"type": "http.response.start", "status": 201, "headers": headers})
    n = 0
    while True:
        n += 1
        event = f'id: {n}\nevent: values\ndata: {{"n": {n}}}\n\n'.encode()
        await send({"type": "http.response.body", "body": event, "more_body": True})
        await asyncio.sleep(pause)


class StreamOpenAfterEnd(Hostile):
    """RUN-STREAM-ENDS: POST .../runs/stream sends the run's events, its last one included, then
    keeps the connection open with `: ping` comments forever."""

    bound = STREAM_BOUND
    method, path = "POST", STREAM

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, pinging_forever(send))


class StreamPingsWithoutEnd(EventFrames):
    """RUN-STREAM-ENDS: the run streams leave out their last event (`end`) and, once the run has
    ended, stay open with `: ping` comments forever: only GET of the run tells it has ended."""

    bound = STREAM_BOUND

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        await super().mutate(scope, receive, pinging_forever(send))

    def frame(self, frame: bytes) -> bytes:
        return b"" if b"event: end" in frame.split(b"\n") else frame


class ConversationSearchHangs(Hostile):
    """CONV-STATUS: POST /api/ai/conversations/search never answers."""

    timed = True  # its deadlines are counted across workers (observe.Deadlines)

    method, path = "POST", re.compile(r"/api/ai/conversations/search")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        await asyncio.sleep(3600)


# The answer mutants' runs include the checks sending no credential to their operation: what
# should be a 401 comes as the same hostile answer (AUTH-401, a SHOULD: a warning). The hanging
# search is also the conversations group's capability probe (one per worker, at the same moment):
# a probe's missed deadline is one a request that breaks the document or lacks the credential may
# spend, so the checks without a credential are not judged, and a valid search is still given its
# own deadline whatever the probes spent (CONV-STATUS).
REGISTRY: dict[str, tuple[type[Mutant], tuple[str, ...]]] = {
    "answer-drips": (AnswerDrips, ("THR-STATUS", "AUTH-401")),
    "answer-never-ends": (AnswerNeverEnds, ("THR-STATUS", "AUTH-401")),
    "answer-cut-short": (AnswerCutShort, ("RUN-STATUS", "AUTH-401")),
    "stream-never-ends": (StreamNeverEnds, ("RUN-STREAM-ENDS",)),
    "stream-open-after-end": (StreamOpenAfterEnd, ("RUN-STREAM-ENDS",)),
    "stream-pings-without-end": (StreamPingsWithoutEnd, ("RUN-STREAM-ENDS",)),
    "conversation-search-hangs": (ConversationSearchHangs, ("CONV-STATUS",)),
}
