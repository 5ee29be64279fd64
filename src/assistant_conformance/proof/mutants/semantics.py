"""Mutants of what reads, deletes, cancel and replay mean: deletes that keep, reads that answer
something else."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assistant_conformance.proof.mutants._base import (
    ERROR_500,
    KB_PREFIXES,
    RUN,
    RUN_TERMINAL,
    STREAMS,
    THREAD,
    DeleteKeeps,
    EventFrames,
    JsonAnswer,
    JsonRequest,
    Mutant,
    answer_of,
    as_request,
    json_or_none,
    not_found_body,
    read_body,
    send_answer,
    send_json,
    with_header,
)

# --- deletes that keep ------------------------------------------------------------------------


class KbDeleteKeeps(DeleteKeeps):
    """KB-DELETE-GONE: deleting a knowledge base answers 200 and removes nothing."""

    path = re.compile(KB_PREFIXES + r"/[^/]+")


class ConversationDeleteKeeps(DeleteKeeps):
    """CONV-DELETE-GONE: deleting a conversation answers 202 and removes nothing."""

    path, status, body = re.compile(r"/api/ai/conversations/[^/]+"), 202, None


class FeedbackDeleteKeeps(DeleteKeeps):
    """MSG-FEEDBACK-DELETE: deleting a feedback answers 200 and leaves it in the list."""

    path = re.compile(r"/api/ai/conversations/[^/]+/messages/[^/]+/feedbacks/[^/]+")

    def probe(self, path: str) -> str:
        return path.rsplit("/", 1)[0]  # the message's feedback list

    def found(self, path: str, body: Any) -> bool:
        items = body.get("items") if isinstance(body, dict) else None
        feedback = path.rsplit("/", 1)[-1]
        return any(isinstance(f, dict) and f.get("id") == feedback for f in items or [])


# --- reads that answer something else -----------------------------------------------------------


class HistoryOldestFirst(JsonAnswer):
    """THR-HISTORY-ORDERED: thread history answers its states oldest first."""

    method, path = "POST", re.compile(THREAD + r"/history")

    def rewrite(self, body: Any) -> Any:
        return body[::-1] if isinstance(body, list) else body


class ThreadSearchIgnoresMetadata(JsonRequest):
    """THR-SEARCH-METADATA: thread search ignores its `metadata` filter (answers every thread)."""

    method, path = "POST", re.compile(r"/api/ai/threads/search")

    def change(self, data: Any) -> Any:
        if isinstance(data, dict) and "metadata" in data:
            return {k: v for k, v in data.items() if k != "metadata"}
        return data


class RunReadAsError(JsonAnswer):
    """RUN-STREAM-AGREES: a run that succeeded (its stream sent no error event) reads as `error`."""

    method, path = "GET", re.compile(RUN)

    def rewrite(self, body: Any) -> Any:
        if isinstance(body, dict) and body.get("status") == "success":
            return {**body, "status": "error"}
        return body


class RunGetAnswersNewest(Mutant):
    """RUN-GET-CREATED: GET .../runs/{run_id} answers the thread's newest run, whichever asked."""

    method, path = "GET", re.compile(RUN)

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        start, content = await answer_of(self.app, scope)
        if start["status"] == 200:
            runs = scope["path"].rsplit("/", 1)[0]
            listed = {**as_request(scope, "GET", runs), "query_string": b"limit=1&offset=0"}
            newest = json_or_none((await answer_of(self.app, listed))[1])
            if isinstance(newest, list) and newest:
                content = json.dumps(newest[0]).encode()
        await send_answer(send, start, start["status"], content)


class CopiedThreadNotFound(Mutant):
    """THR-GET-CREATED: a thread made by copy answers 404 to GET /api/ai/threads/{thread_id}."""

    def __init__(self, app: ASGIApp) -> None:
        super().__init__(app)
        self.copies: set[str] = set()

    def applies(self, scope: Scope) -> bool:
        method, path = scope["method"], scope["path"]
        copy = method == "POST" and re.fullmatch(THREAD + r"/copy", path)
        return bool(copy or (method == "GET" and re.fullmatch(THREAD, path)))

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] == "GET":
            if scope["path"].rsplit("/", 1)[-1] in self.copies and self.authorized(scope):
                await send_json(send, 404, not_found_body("thread"))
                return
            await self.app(scope, receive, send)
            return
        start, content = await answer_of(self.app, scope, await read_body(receive))
        copy = json_or_none(content)
        if start["status"] == 201 and isinstance(copy, dict):
            self.copies.add(str(copy.get("thread_id")))
        await send_answer(send, start, start["status"], content)


class AssistantGetAnswersFirst(Mutant):
    """ASST-GET-FOUND: GET /api/ai/assistants/{assistant_id} answers the first assistant search
    finds, whichever is asked."""

    method, path = "GET", re.compile(r"/api/ai/assistants/[^/]+")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        start, content = await answer_of(self.app, scope)
        if start["status"] == 200:
            search = as_request(scope, "POST", "/api/ai/assistants/search")
            search["headers"] = [*search["headers"], (b"content-type", b"application/json")]
            found = json_or_none((await answer_of(self.app, search, b'{"limit": 1}'))[1])
            if isinstance(found, list) and found:
                content = json.dumps(found[0]).encode()
        await send_answer(send, start, start["status"], content)


class MessageGetAnswersConversation(Mutant):
    """MSG-GET-CREATED: GET .../messages/{message_id} answers the conversation, not the message."""

    method, path = "GET", re.compile(r"(/api/ai/conversations/[^/]+)/messages/[^/]+")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = self.path.fullmatch(scope["path"])
        assert match is not None
        await self.app(as_request(scope, "GET", match[1]), receive, send)


class ConversationSearchFindsNothing(JsonAnswer):
    """CONV-SEARCH-FINDS: conversation search answers no conversation, whatever is stored."""

    method, path = "POST", re.compile(r"/api/ai/conversations/search")

    def rewrite(self, body: Any) -> Any:
        return {**body, "items": [], "total": 0} if isinstance(body, dict) else body


class UsageCountsNoTokens(JsonAnswer):
    """USAGE-ROWS: thread usage answers its rows with no tokens (and no price), runs or not."""

    method, path = "GET", re.compile(THREAD + r"/usage")

    def rewrite(self, body: Any) -> Any:
        if not isinstance(body, list):
            return body
        return [{**r, "tokenUsed": 0, "priceUsed": 0} if isinstance(r, dict) else r for r in body]


class BulkAnswersNoIds(JsonAnswer):
    """KB-BULK-CREATES: bulk answers the documents it created without their ids."""

    method, path = "POST", re.compile(KB_PREFIXES + r"/[^/]+/bulk")

    def rewrite(self, body: Any) -> Any:
        if not isinstance(body, list):
            return body
        return [{k: v for k, v in d.items() if k != "id"} for d in body if isinstance(d, dict)]


# --- runs: cancel and replay --------------------------------------------------------------------


class CancelledStreamStaysOpen(Mutant):
    """RUN-CANCEL-ENDS-STREAM: cancel stops the run, but a stream of its thread never ends (it
    sends keep-alive comments instead)."""

    def __init__(self, app: ASGIApp) -> None:
        super().__init__(app)
        self.cancelled: set[str] = set()  # thread ids

    def applies(self, scope: Scope) -> bool:
        method, path = scope["method"], scope["path"]
        cancel = method == "POST" and re.fullmatch(RUN + r"/cancel", path)
        return bool(cancel or (method in ("GET", "POST") and STREAMS.fullmatch(path)))

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        thread = scope["path"].split("/")[4]  # /api/ai/threads/{thread_id}/...
        if scope["path"].endswith("/cancel"):
            self.cancelled.add(thread)
            await self.app(scope, receive, send)
            return
        streaming = False

        async def held(message: Message) -> None:
            nonlocal streaming
            if message["type"] == "http.response.start":
                content_type = dict(message["headers"]).get(b"content-type", b"")
                streaming = content_type.startswith(b"text/event-stream")
            elif streaming and not message.get("more_body") and thread in self.cancelled:
                await send({**message, "more_body": True})
                while True:  # until the client goes away (the app's task is then cancelled)
                    await asyncio.sleep(0.2)
                    comment = {"type": "http.response.body", "body": b": alive\n\n"}
                    await send({**comment, "more_body": True})
            await send(message)

        await self.app(scope, receive, held)


class RecancelFails(Mutant):
    """RUN-CANCEL-IDEMPOTENT: cancelling a run that has already ended answers 500."""

    method, path = "POST", re.compile(RUN + r"/cancel")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        run = scope["path"].removesuffix("/cancel")
        start, content = await answer_of(self.app, as_request(scope, "GET", run))
        status = (json_or_none(content) or {}).get("status") if start["status"] == 200 else None
        if status in RUN_TERMINAL:
            await send_json(send, 500, ERROR_500)
            return
        await self.app(scope, receive, send)


class JoinReplayMissesFirst(EventFrames):
    """RUN-JOIN-REPLAY: joining a run stream without last-event-id starts after its first event."""

    def applies(self, scope: Scope) -> bool:
        return scope["method"] == "GET" and super().applies(scope)

    def request(self, scope: Scope) -> Scope:
        if dict(scope["headers"]).get(b"last-event-id", b"").strip():
            return scope
        return with_header(scope, b"last-event-id", b"1")  # the reference's ids: 1, 2, ...


REGISTRY: dict[str, tuple[type[Mutant], tuple[str, ...]]] = {
    "kb-delete-keeps": (KbDeleteKeeps, ("KB-DELETE-GONE",)),
    "conversation-delete-keeps": (ConversationDeleteKeeps, ("CONV-DELETE-GONE",)),
    "feedback-delete-keeps": (FeedbackDeleteKeeps, ("MSG-FEEDBACK-DELETE",)),
    "history-oldest-first": (HistoryOldestFirst, ("THR-HISTORY-ORDERED",)),
    "thread-search-ignores-metadata": (ThreadSearchIgnoresMetadata, ("THR-SEARCH-METADATA",)),
    "run-read-as-error": (RunReadAsError, ("RUN-STREAM-AGREES",)),
    "run-get-answers-newest": (RunGetAnswersNewest, ("RUN-GET-CREATED",)),
    "copied-thread-not-found": (CopiedThreadNotFound, ("THR-GET-CREATED",)),
    "assistant-get-answers-first": (AssistantGetAnswersFirst, ("ASST-GET-FOUND",)),
    "message-get-answers-conversation": (MessageGetAnswersConversation, ("MSG-GET-CREATED",)),
    "conversation-search-finds-nothing": (
        ConversationSearchFindsNothing,
        ("CONV-SEARCH-FINDS",),
    ),
    "usage-counts-no-tokens": (UsageCountsNoTokens, ("USAGE-ROWS",)),
    "bulk-answers-no-ids": (BulkAnswersNoIds, ("KB-BULK-CREATES",)),
    "cancelled-stream-stays-open": (CancelledStreamStaysOpen, ("RUN-CANCEL-ENDS-STREAM",)),
    "recancel-fails": (RecancelFails, ("RUN-CANCEL-IDEMPOTENT",)),
    "join-replay-misses-first": (JoinReplayMissesFirst, ("RUN-JOIN-REPLAY",)),
}
