"""Variants whose threads and runs follow the older habits of the family, within what the document
leaves open (bodies and event names "not shown"):

- `StateWriteNeedsRun`: a state write on a thread that never ran answers 409 ("run an assistant
  first"), as a server that keeps state only in the checkpoints a run makes; after one run the same
  write is taken and read back.
- `IdsOnContinueOnly`: a run's events carry ids (and so can be resumed) only where the run was
  asked `on_disconnect: "continue"`, the older spelling the official LangGraph clients still
  offer; a run asked `stream_resumable: true` (or nothing) streams without ids.
"""

from __future__ import annotations

import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assistant_conformance.proof.mutants._base import (
    STREAMS,
    THREAD,
    answer_of,
    as_request,
    json_or_none,
    read_body,
    replay,
    send_json,
)
from assistant_conformance.proof.variants._base import Variant, asgi_header
from assistant_conformance.proof.variants.dialects import RUN_CREATES
from assistant_conformance.proof.variants.queued import stream_run_id

STATE_WRITE = re.compile(f"({THREAD})/state")


class StateWriteNeedsRun(Variant):
    """POST .../state on a thread without a run answers `409 {"message": "... run an assistant
    first"}`; on a thread that has had a run it is the reference's (201, read back)."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = STATE_WRITE.fullmatch(scope["path"])
        if scope["method"] != "POST" or match is None:
            await self.app(scope, receive, send)
            return
        runs = as_request(scope, "GET", match[1] + "/runs")
        listed, content = await answer_of(self.app, {**runs, "query_string": b"limit=1&offset=0"})
        if listed["status"] == 200 and json_or_none(content) == []:
            thread = match[1].rsplit("/", 1)[-1]
            why = f"Thread {thread} has no checkpoint yet: run an assistant first"
            await send_json(send, 409, {"statusCode": 409, "message": why, "error": "Conflict"})
            return
        await self.app(scope, receive, send)  # 401, 404, a thread that ran: as the reference


def without_ids(frame: bytes) -> bytes:
    return b"".join(line for line in frame.splitlines(True) if not line.startswith(b"id:"))


class IdsOnContinueOnly(Variant):
    """Events carry `id:` only in the streams (POST and join) of a run created with
    `on_disconnect: "continue"`; every other run's events are sent without ids."""

    def __init__(self, app: ASGIApp) -> None:
        super().__init__(app)
        self.numbered: set[str] = set()  # runs asked to continue on disconnect

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        method, path = scope["method"], scope["path"]
        creates = method == "POST" and bool(RUN_CREATES.fullmatch(path))
        if not creates and not (method == "GET" and STREAMS.fullmatch(path)):
            await self.app(scope, receive, send)
            return
        raw = await read_body(receive) if creates else b""
        body = json_or_none(raw)
        asked = isinstance(body, dict) and body.get("on_disconnect") == "continue"
        await self.app(scope, replay(raw, receive), self.numbering(scope, send, asked))

    def numbering(self, scope: Scope, send: Send, asked: bool) -> Send:
        buffer, stripping = b"", False

        async def numbered(message: Message) -> None:
            nonlocal buffer, stripping
            if message["type"] == "http.response.start":
                run = stream_run_id(message, scope)
                if asked and run:
                    self.numbered.add(run)
                event_stream = asgi_header(message, b"content-type").startswith(
                    b"text/event-stream"
                )
                stripping = event_stream and run not in self.numbered
                await send(message)
                return
            if not stripping:
                await send(message)
                return
            *frames, buffer = (buffer + message.get("body", b"")).split(b"\n\n")
            content = b"".join(without_ids(frame + b"\n\n") for frame in frames)
            if not message.get("more_body", False):
                content, buffer = content + without_ids(buffer), b""
            await send({**message, "body": content})

        return numbered
