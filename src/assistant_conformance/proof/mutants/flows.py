"""Mutants of the knowledge-base, conversation and chat-kit flows (tests/test_knowledge*.py...)."""

from __future__ import annotations

import json
import re
import secrets
import time
from typing import Any

from starlette.types import Receive, Scope, Send

from assistant_conformance.proof.mutants._base import (
    KB_PREFIXES,
    JsonAnswer,
    Mutant,
    answer_of,
    json_or_none,
    read_body,
    replay,
    send_answer,
    with_header,
)


class StatusAnswersOtherDocuments(Mutant):
    """KB-STATUS-EXACT: the document status query ignores `ids` and answers every document of
    the knowledge base."""

    method, path = "GET", re.compile(KB_PREFIXES + r"/([^/]+)/status")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = self.path.fullmatch(scope["path"])
        query = scope.get("query_string", b"")
        if match and self.authorized(scope) and re.search(rb"(?:^|&)ids=.", query):
            db = self.state.context.db
            every = [d["id"] for d in db.list("knowledge_document", None, parent=match[1])]
            scope = {**scope, "query_string": b"ids=" + ",".join(every).encode()}
        await self.app(scope, receive, send)


class ProcessNeverStarts(Mutant):
    """KB-PROCESS-COMPLETES: process answers 201 but starts nothing; documents stay `waiting`."""

    method, path = "POST", re.compile(KB_PREFIXES + r"/[^/]+/process")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        ids = json_or_none(body)
        if isinstance(ids, list) and all(isinstance(i, str) for i in ids):
            body = b"[]"  # a valid request: the reference answers 201 and processes nothing
            scope = with_header(scope, b"content-length", b"2")
        await self.app(scope, replay(body, receive), send)


class MessagesIgnoreLimit(Mutant):
    """MSG-LIST-PAGING: the message list answers every message, whatever `limit` says."""

    method, path = "GET", re.compile(r"/api/ai/conversations/[^/]+/messages")
    parameter, replacement = b"limit", b"1000000"

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        query = scope.get("query_string", b"")  # only numbers: a bad value is still rejected
        pattern = rb"(^|&)" + self.parameter + rb"=\d+"
        query = re.sub(pattern, rb"\g<1>" + self.parameter + b"=" + self.replacement, query)
        await self.app({**scope, "query_string": query}, receive, send)


class MessagesIgnoreOffset(MessagesIgnoreLimit):
    """MSG-LIST-PAGING: the message list always starts at the first message, whatever `offset`."""

    parameter, replacement = b"offset", b"0"


class ConversationPatchNotPersisted(Mutant):
    """CONV-PATCH-PERSISTS: PATCH answers the patched conversation but stores nothing."""

    method, path = "PATCH", re.compile(r"/api/ai/conversations/[^/]+")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        sent = await read_body(receive)
        fields = json_or_none(sent)
        if not isinstance(fields, dict) or not self.authorized(scope):
            await self.app(scope, replay(sent, receive), send)
            return

        class EchoPatch(JsonAnswer):
            def rewrite(self, body: Any) -> Any:
                return {**body, **fields} if isinstance(body, dict) else body

        scope = with_header(scope, b"content-length", b"2")
        await EchoPatch(self.app).mutate(scope, replay(b"{}", receive), send)


class KnowledgesPrefixDiverges(JsonAnswer):
    """KB-PREFIXES-IDENTICAL: under /api/ai/knowledges (only), answers lack `updatedAt`."""

    path = re.compile(r"/api/ai/knowledges(?:/.*)?")

    def applies(self, scope: Scope) -> bool:
        return bool(self.path.fullmatch(scope["path"]))

    def rewrite(self, body: Any) -> Any:
        if isinstance(body, dict):
            body.pop("updatedAt", None)
        return body


class KbDescriptionTruncated(JsonAnswer):
    """KB-UPDATE-ROUNDTRIP: knowledge-base answers cut `description` to 255 characters."""

    path = re.compile(KB_PREFIXES + r"(?:/[^/]+)?")

    def applies(self, scope: Scope) -> bool:
        return bool(self.path.fullmatch(scope["path"]))

    def rewrite(self, body: Any) -> Any:
        if isinstance(body, dict) and isinstance(body.get("description"), str):
            return {**body, "description": body["description"][:255]}
        return body


class ChatkitSecretNeverWorks(JsonAnswer):
    """CHATKIT-SECRET: a chat-kit session answers a client secret the server never accepts."""

    method, path = "POST", re.compile(r"/api/ai/v1/chatkit/sessions")

    def rewrite(self, body: Any) -> Any:
        if isinstance(body, dict) and "client_secret" in body:
            return {**body, "client_secret": "ck_" + secrets.token_urlsafe(32)}
        return body


class ChatkitSecretNeverExpires(Mutant):
    """CHATKIT-SECRET: a chat-kit session announces the lifetime asked; its secret works an hour."""

    method, path = "POST", re.compile(r"/api/ai/v1/chatkit/sessions")
    LASTING = 3600

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        asked = json_or_none(await read_body(receive))
        asked = asked if isinstance(asked, dict) else {}
        lasting = json.dumps({**asked, "expires_after": self.LASTING}).encode()
        scope = with_header(scope, b"content-length", str(len(lasting)).encode())
        start, content = await answer_of(self.app, scope, lasting)
        body, after = json_or_none(content), asked.get("expires_after")
        if isinstance(body, dict) and isinstance(after, int) and 200 <= start["status"] < 300:
            announced = {"expires_after": after, "expires_at": int(time.time()) + after}
            content = json.dumps({**body, **announced}).encode()
        await send_answer(send, start, start["status"], content)


REGISTRY: dict[str, tuple[type[Mutant], tuple[str, ...]]] = {
    "status-answers-other-documents": (StatusAnswersOtherDocuments, ("KB-STATUS-EXACT",)),
    "process-never-starts": (ProcessNeverStarts, ("KB-PROCESS-COMPLETES",)),
    "messages-ignore-limit": (MessagesIgnoreLimit, ("MSG-LIST-PAGING",)),
    "messages-ignore-offset": (MessagesIgnoreOffset, ("MSG-LIST-PAGING",)),
    "conversation-patch-not-persisted": (ConversationPatchNotPersisted, ("CONV-PATCH-PERSISTS",)),
    "knowledges-prefix-diverges": (KnowledgesPrefixDiverges, ("KB-PREFIXES-IDENTICAL",)),
    "kb-description-truncated": (KbDescriptionTruncated, ("KB-UPDATE-ROUNDTRIP",)),
    "chatkit-secret-never-works": (ChatkitSecretNeverWorks, ("CHATKIT-SECRET",)),
    "chatkit-secret-never-expires": (ChatkitSecretNeverExpires, ("CHATKIT-SECRET",)),
}
