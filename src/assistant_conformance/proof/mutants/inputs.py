"""Mutants of knowledge-base input, the two prefixes, answer shapes and content types."""

from __future__ import annotations

import re
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from assistant_conformance.proof.mutants._base import (
    KB_PREFIXES,
    STREAMS,
    THREAD,
    JsonAnswer,
    JsonRequest,
    KbWrite,
    Mutant,
    answer_of,
    json_or_none,
    not_found_body,
    read_body,
    replay,
    send_answer,
    send_json,
    with_header,
)

# --- knowledge-base input and the two prefixes ----------------------------------------------------


class KbPrefixesSeparate(Mutant):
    """KB-PREFIXES-SHARED: each prefix keeps its own knowledge bases; the other answers 404."""

    path = re.compile(r"/api/ai/(v1/kb|knowledges)(?:/([^/]+)(?:/.*)?)?")

    def __init__(self, app: ASGIApp) -> None:
        super().__init__(app)
        self.home: dict[str, str] = {}  # knowledge-base id -> the prefix it was created under

    def applies(self, scope: Scope) -> bool:
        return bool(self.path.fullmatch(scope["path"]))

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = self.path.fullmatch(scope["path"])
        assert match is not None
        prefix, kb_id = match[1], match[2]
        if kb_id is not None:
            if self.home.get(kb_id, prefix) != prefix and self.authorized(scope):
                await send_json(send, 404, not_found_body("knowledge base"))
                return
            await self.app(scope, receive, send)
            return
        start, content = await answer_of(self.app, scope, await read_body(receive))
        created = json_or_none(content)
        if start["status"] == 201 and isinstance(created, dict):
            self.home[str(created.get("id"))] = prefix
        await send_answer(send, start, start["status"], content)


class KbNumericNameAccepted(JsonRequest):
    """KB-FIELD-TYPES: a knowledge base whose `name` is a number is accepted (stored as text)."""

    path = re.compile(KB_PREFIXES + r"(?:/[^/]+)?")

    def applies(self, scope: Scope) -> bool:
        return scope["method"] in ("POST", "PUT") and bool(self.path.fullmatch(scope["path"]))

    def change(self, data: Any) -> Any:
        name = data.get("name") if isinstance(data, dict) else None
        if isinstance(name, int | float) and not isinstance(name, bool):
            return {**data, "name": str(name)}
        return data


class KbExtIdRejected(KbWrite):
    """KB-VALID-ACCEPTED: a knowledge-base body carrying `extKnowledgebaseId` (a field of interface
    2.1, a string as declared) answers 400; one without it is taken."""

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        data = json_or_none(body)
        if isinstance(data, dict) and "extKnowledgebaseId" in data and self.authorized(scope):
            message = "extKnowledgebaseId: external knowledge bases are not supported"
            await send_json(send, 400, {"statusCode": 400, "message": message})
            return
        await self.app(scope, replay(body, receive), send)


class BulkObjectAccepted(JsonRequest):
    """KB-BULK-ARRAY: bulk with a JSON object body (not an array) takes it as one document."""

    method, path = "POST", re.compile(KB_PREFIXES + r"/[^/]+/bulk")

    def change(self, data: Any) -> Any:
        return [data] if isinstance(data, dict) else data


class ProcessSkipsNonStrings(JsonRequest):
    """KB-PROCESS-STRINGS: process drops the elements that are not strings instead of refusing."""

    method, path = "POST", re.compile(KB_PREFIXES + r"/[^/]+/process")

    def change(self, data: Any) -> Any:
        if isinstance(data, list) and not all(isinstance(i, str) for i in data):
            return [i for i in data if isinstance(i, str)]
        return data


# --- authentication, answer shapes and content types ----------------------------------------------


class LastEventIdAuthorizes(Mutant):
    """AUTH-LAST-EVENT-ID-NOT-CREDENTIAL: a run stream request with a last-event-id header and no
    Authorization is served (as the first principal's)."""

    path = STREAMS

    def applies(self, scope: Scope) -> bool:
        headers = dict(scope["headers"])
        anonymous = b"authorization" not in headers and b"last-event-id" in headers
        return anonymous and bool(self.path.fullmatch(scope["path"]))

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope = with_header(scope, b"authorization", f"Bearer {self.a_token()}".encode())
        await self.app(scope, receive, send)


class MessageCreatedWithoutId(JsonAnswer):
    """ROBUST-RESPONSE-SHAPE: a created message is answered with `messageId` instead of `id`."""

    method, path = "POST", re.compile(r"/api/ai/conversations/[^/]+/messages")

    def rewrite(self, body: Any) -> Any:
        if isinstance(body, dict) and "id" in body:
            return {"messageId": body["id"], **{k: v for k, v in body.items() if k != "id"}}
        return body


class ThreadReadWithNaN(JsonAnswer):
    """ROBUST-RESPONSE-SHAPE: a thread read back carries `NaN` in its metadata, which Python reads
    as a number but is not JSON (RFC 8259 §6; JSON.parse throws on it)."""

    method, path = "GET", re.compile(THREAD)

    def rewrite(self, body: Any) -> Any:
        if isinstance(body, dict):
            return {**body, "metadata": {**(body.get("metadata") or {}), "score": float("nan")}}
        return body


class CountAsText(Mutant):
    """ROBUST-JSON-CONTENT-TYPE: the assistant count (a JSON number) is declared text/plain."""

    method, path = "POST", re.compile(r"/api/ai/assistants/count")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        start, content = await answer_of(self.app, scope, await read_body(receive))
        if 200 <= start["status"] < 300:
            kept = [(k, v) for k, v in start["headers"] if k.lower() != b"content-type"]
            start = {**start, "headers": [*kept, (b"content-type", b"text/plain; charset=utf-8")]}
        await send_answer(send, start, start["status"], content)


REGISTRY: dict[str, tuple[type[Mutant], tuple[str, ...]]] = {
    "kb-prefixes-separate": (KbPrefixesSeparate, ("KB-PREFIXES-SHARED",)),
    "kb-numeric-name-accepted": (KbNumericNameAccepted, ("KB-FIELD-TYPES",)),
    "kb-ext-id-rejected": (KbExtIdRejected, ("KB-VALID-ACCEPTED",)),
    "bulk-object-accepted": (BulkObjectAccepted, ("KB-BULK-ARRAY",)),
    "process-skips-non-strings": (ProcessSkipsNonStrings, ("KB-PROCESS-STRINGS",)),
    "last-event-id-authorizes": (LastEventIdAuthorizes, ("AUTH-LAST-EVENT-ID-NOT-CREDENTIAL",)),
    "message-created-without-id": (MessageCreatedWithoutId, ("ROBUST-RESPONSE-SHAPE",)),
    "count-as-text": (CountAsText, ("ROBUST-JSON-CONTENT-TYPE",)),
    "thread-read-with-nan": (ThreadReadWithNaN, ("ROBUST-RESPONSE-SHAPE",)),
}
