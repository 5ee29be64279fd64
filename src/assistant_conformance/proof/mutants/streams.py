"""Mutants of streams, runs, threads, robustness, assistants, contexts and the store."""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

from starlette.types import Message, Receive, Scope, Send

from assistant_conformance.proof.mutants._base import (
    RUN,
    STREAMS,
    THREAD,
    EventFrames,
    JsonAnswer,
    Mutant,
    answer_of,
    as_request,
    json_or_none,
    read_body,
    replay,
    send_answer,
    send_json,
)

# --- streams -------------------------------------------------------------------------------------


class EventsWithoutIds(EventFrames):
    """RUN-STREAM-EVENT-IDS: the run streams send their events without `id:` fields."""

    def frame(self, frame: bytes) -> bytes:
        return b"".join(line for line in frame.splitlines(True) if not line.startswith(b"id:"))


class StreamServedAsText(EventFrames):
    """RUN-STREAM-CONTENT-TYPE: the run streams answer Content-Type text/plain."""

    def start(self, message: Message) -> Message:
        headers = [(k, v) for k, v in message["headers"] if k.lower() != b"content-type"]
        return {**message, "headers": [*headers, (b"content-type", b"text/plain; charset=utf-8")]}


class LastEventIdChanged(EventFrames):
    """Base: the stream's `last-event-id` request header is dropped or moved by `shift`."""

    method = ""
    shift: int | None = None  # None: the header is ignored

    def applies(self, scope: Scope) -> bool:
        return scope["method"] == self.method and super().applies(scope)

    def request(self, scope: Scope) -> Scope:
        value = dict(scope["headers"]).get(b"last-event-id", b"").decode("latin-1").strip()
        headers = [(k, v) for k, v in scope["headers"] if k != b"last-event-id"]
        if self.shift is not None and value.isdigit():  # the reference's ids are numbers
            headers.append((b"last-event-id", str(max(0, int(value) + self.shift)).encode()))
        return {**scope, "headers": headers}


class PostStreamIgnoresLastEventId(LastEventIdChanged):
    """RUN-STREAM-RESUME: POST .../runs/stream ignores last-event-id and sends every event."""

    method = "POST"


class JoinIgnoresLastEventId(LastEventIdChanged):
    """RUN-JOIN-RESUME: joining a run stream ignores last-event-id and sends every event."""

    method = "GET"


class JoinRepeatsLastEvent(LastEventIdChanged):
    """RUN-JOIN-RESUME: joining with last-event-id sends the named event again (a duplicate)."""

    method, shift = "GET", -1


class PostStreamSkipsEvent(LastEventIdChanged):
    """RUN-STREAM-RESUME: POST .../runs/stream with last-event-id skips the event after it."""

    method, shift = "POST", 1


# --- runs --------------------------------------------------------------------------------------


class AnswersTheReadInstead(Mutant):
    """Base: a POST to `<resource><suffix>` changes nothing and answers 201 with the resource as
    a GET reads it."""

    suffix = ""

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        resource = scope["path"].removesuffix(self.suffix)
        start, content = await answer_of(self.app, as_request(scope, "GET", resource))
        await send_answer(send, start, 201 if start["status"] == 200 else start["status"], content)


class CancelDoesNothing(AnswersTheReadInstead):
    """RUN-CANCEL: cancel answers 201 with the run and leaves it running."""

    method, path, suffix = "POST", re.compile(RUN + r"/cancel"), "/cancel"


class WaitReturnsEarly(Mutant):
    """RUN-WAIT-COMPLETES: runs/wait starts the run and answers 201 at once, before it ends."""

    method, path = "POST", re.compile(THREAD + r"/runs/wait")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        runs = scope["path"].removesuffix("/wait")
        await self.app({**scope, "path": runs, "raw_path": runs.encode()}, receive, send)


class RunsIgnoreOffset(Mutant):
    """RUN-LIST-PAGING: the run list always starts at the newest run, whatever `offset` says."""

    method, path = "GET", re.compile(THREAD + r"/runs")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        query = re.sub(rb"(^|&)offset=\d+", rb"\g<1>offset=0", scope.get("query_string", b""))
        await self.app({**scope, "query_string": query}, receive, send)


# --- threads -------------------------------------------------------------------------------------


class ThreadPatchNotPersisted(Mutant):
    """THR-PATCH-PERSISTS: PATCH answers the thread with the metadata sent but stores nothing."""

    method, path = "PATCH", re.compile(THREAD)

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        sent = json_or_none(await read_body(receive))
        start, content = await answer_of(self.app, as_request(scope, "GET", scope["path"]))
        thread = json_or_none(content)
        metadata = sent.get("metadata") if isinstance(sent, dict) else None
        if start["status"] == 200 and isinstance(thread, dict) and isinstance(metadata, dict):
            patched = {**thread, "metadata": {**thread["metadata"], **metadata}}
            content = json.dumps(patched).encode()
        await send_answer(send, start, start["status"], content)


class StateWriteNotPersisted(Mutant):
    """THR-STATE-PERSISTS: POST state answers 201 with a checkpoint but writes nothing."""

    method, path = "POST", re.compile(THREAD + r"/state")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        await read_body(receive)
        start, content = await answer_of(self.app, as_request(scope, "GET", scope["path"]))
        state = json_or_none(content)
        if start["status"] == 200 and isinstance(state, dict):
            fresh = "-".join(secrets.token_hex(n) for n in (4, 2, 2, 2, 6))
            checkpoint = {**(state.get("checkpoint") or {}), "checkpoint_id": fresh}
            await send_answer(send, start, 201, json.dumps({"checkpoint": checkpoint}).encode())
            return
        await send_answer(send, start, start["status"], content)


class CopyAnswersTheOriginal(AnswersTheReadInstead):
    """THR-COPY-NEW-THREAD: copy answers 201 with the original thread, not a new one."""

    method, path, suffix = "POST", re.compile(THREAD + r"/copy"), "/copy"


# --- robustness, assistants, contexts, store ------------------------------------------------------


class UnknownIdAnswersEmpty(Mutant):
    """ROBUST-UNKNOWN-ID-404: a GET the reference answers 404 is answered 200 with `{}`."""

    method, path = "GET", re.compile(r"/api/ai/.+")

    def applies(self, scope: Scope) -> bool:
        return super().applies(scope) and not STREAMS.fullmatch(scope["path"])

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        start, content = await answer_of(self.app, scope, await read_body(receive))
        if start["status"] == 404:
            await send_json(send, 200, {})
            return
        await send_answer(send, start, start["status"], content)


class MalformedJson500(Mutant):
    """ROBUST-NO-5XX: a request body that is not JSON answers 500 (the finding is the 5xx, charged
    there only)."""

    def applies(self, scope: Scope) -> bool:
        content_type = dict(scope["headers"]).get(b"content-type", b"")
        return scope["method"] in ("POST", "PUT", "PATCH") and b"json" in content_type

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        try:
            json.loads(body)
        except (ValueError, RecursionError):
            if body.strip() and self.authorized(scope):
                await send_json(send, 500, {"statusCode": 500, "message": "Internal server error"})
                return
        await self.app(scope, replay(body, receive), send)


class MalformedJsonTaken(MalformedJson500):
    """ROBUST-BAD-INPUT-4XX: a request body that is not JSON is read as `{}` and accepted wherever
    an empty object is."""

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        try:
            json.loads(body)
        except (ValueError, RecursionError):
            body = b"{}" if body.strip() else body
        await self.app(scope, replay(body, receive), send)


class ErrorsAsText(Mutant):
    """ROBUST-ERROR-JSON: 4xx answers carry a text/plain body instead of JSON."""

    method, path = "", re.compile(r"/api/ai/.+")

    def applies(self, scope: Scope) -> bool:
        return bool(self.path.fullmatch(scope["path"])) and not STREAMS.fullmatch(scope["path"])

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        start, content = await answer_of(self.app, scope, await read_body(receive))
        if 400 <= start["status"] < 500:
            plain = [(k, v) for k, v in start["headers"] if k.lower() != b"content-type"]
            start = {**start, "headers": [*plain, (b"content-type", b"text/plain; charset=utf-8")]}
            content = f"Error {start['status']}\n".encode()
        await send_answer(send, start, start["status"], content)


class AssistantCountOffByOne(JsonAnswer):
    """ASST-COUNT-CONSISTENT: the assistant count is one more than search finds."""

    method, path = "POST", re.compile(r"/api/ai/assistants/count")

    def rewrite(self, body: Any) -> Any:
        return body + 1 if isinstance(body, int) and not isinstance(body, bool) else body


class ContextDeleteKeepsFile(Mutant):
    """CTX-DELETE-GONE: deleting a context file answers 200 and removes nothing."""

    method, path = "DELETE", re.compile(r"/api/ai/contexts/file/([^/]+)")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        file = f"/api/ai/files/{scope['path'].rsplit('/', 1)[-1]}"  # the reference's download
        start, content = await answer_of(self.app, as_request(scope, "GET", file))
        if start["status"] == 200:
            await send_json(send, 200, {"raw": [], "affected": 1})
            return
        await send_answer(send, start, start["status"], content)


class StoreSearchFindsNothing(JsonAnswer):
    """STORE-SEARCH-FINDS: store item search answers no items, whatever is stored."""

    method, path = "POST", re.compile(r"/api/ai/store/items/search")

    def rewrite(self, body: Any) -> Any:
        return {**body, "items": []} if isinstance(body, dict) else body


REGISTRY: dict[str, tuple[type[Mutant], tuple[str, ...]]] = {
    "events-without-ids": (EventsWithoutIds, ("RUN-STREAM-EVENT-IDS",)),
    "stream-served-as-text": (StreamServedAsText, ("RUN-STREAM-CONTENT-TYPE",)),
    "post-stream-ignores-last-event-id": (PostStreamIgnoresLastEventId, ("RUN-STREAM-RESUME",)),
    "join-ignores-last-event-id": (JoinIgnoresLastEventId, ("RUN-JOIN-RESUME",)),
    "join-repeats-last-event": (JoinRepeatsLastEvent, ("RUN-JOIN-RESUME",)),
    "post-stream-skips-event": (PostStreamSkipsEvent, ("RUN-STREAM-RESUME",)),
    "cancel-does-nothing": (CancelDoesNothing, ("RUN-CANCEL",)),
    "wait-returns-early": (WaitReturnsEarly, ("RUN-WAIT-COMPLETES",)),
    "runs-ignore-offset": (RunsIgnoreOffset, ("RUN-LIST-PAGING",)),
    "thread-patch-not-persisted": (ThreadPatchNotPersisted, ("THR-PATCH-PERSISTS",)),
    "state-write-not-persisted": (StateWriteNotPersisted, ("THR-STATE-PERSISTS",)),
    "copy-answers-the-original": (CopyAnswersTheOriginal, ("THR-COPY-NEW-THREAD",)),
    "unknown-id-answers-empty": (UnknownIdAnswersEmpty, ("ROBUST-UNKNOWN-ID-404",)),
    "malformed-json-500": (MalformedJson500, ("ROBUST-NO-5XX",)),
    "malformed-json-taken": (MalformedJsonTaken, ("ROBUST-BAD-INPUT-4XX",)),
    "errors-as-text": (ErrorsAsText, ("ROBUST-ERROR-JSON",)),
    "assistant-count-off-by-one": (AssistantCountOffByOne, ("ASST-COUNT-CONSISTENT",)),
    "context-delete-keeps-file": (ContextDeleteKeepsFile, ("CTX-DELETE-GONE",)),
    "store-search-finds-nothing": (StoreSearchFindsNothing, ("STORE-SEARCH-FINDS",)),
}
