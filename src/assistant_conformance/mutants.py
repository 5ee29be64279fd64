"""Deliberately wrong variants of the reference server, for the project's own tests.

Each mutant is a small ASGI middleware around the reference app that breaks exactly one
requirement (named in its docstring). `assistant-reference --mutant NAME` serves one.
MUTANTS maps a name to (middleware class, requirement IDs the suite must then report failed
or, for SHOULD requirements, warned).
"""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

KB_PREFIXES = r"/api/ai/(?:v1/kb|knowledges)"
PERMISSIONS = ("private", "organization", "public")


class Mutant:
    """Base: passes everything through; a subclass changes the requests `applies` selects."""

    method = ""
    path = re.compile(r"$^")

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.applies(scope):
            await self.mutate(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    def applies(self, scope: Scope) -> bool:
        return scope["method"] == self.method and bool(self.path.fullmatch(scope["path"]))

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)

    def authorized(self, scope: Scope) -> bool:
        """Whether the request carries one of the reference's tokens (so auth stays as it was)."""
        header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        scheme, _, credential = header.partition(" ")
        tokens = self.app.state.context.settings.tokens  # type: ignore[attr-defined]
        return scheme.lower() == "bearer" and credential.strip() in tokens

    def a_token(self) -> str:
        return next(iter(self.app.state.context.settings.tokens))  # type: ignore[attr-defined]


async def read_body(receive: Receive) -> bytes:
    chunks, more = [], True
    while more:
        message = await receive()
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    return b"".join(chunks)


def replay(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


def with_header(scope: Scope, name: bytes, value: bytes) -> Scope:
    headers = [(k, v) for k, v in scope["headers"] if k != name] + [(name, value)]
    return {**scope, "headers": headers}


async def respond(send: Send, status: int, body: Any) -> None:
    content = json.dumps(body).encode() if body is not None else b""
    headers = [(b"content-type", b"application/json")] if body is not None else []
    headers.append((b"content-length", str(len(content)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": content})


class CreateThread200(Mutant):
    """THR-STATUS: POST /api/ai/threads answers 200 instead of the documented 201."""

    method, path = "POST", re.compile(r"/api/ai/threads")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_200(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 201:
                message = {**message, "status": 200}
            await send(message)

        await self.app(scope, receive, send_200)


class SearchThreadsNoAuth(Mutant):
    """AUTH-MISSING-REJECTED: POST /api/ai/threads/search answers without a credential."""

    method, path = "POST", re.compile(r"/api/ai/threads/search")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.authorized(scope):
            scope = with_header(scope, b"authorization", f"Bearer {self.a_token()}".encode())
        await self.app(scope, receive, send)


class KbPermissionAnyString(Mutant):
    """KB-ALLOWED-VALUES: a knowledge base with a permission outside the enum is accepted."""

    path = re.compile(KB_PREFIXES + r"(?:/[^/]+)?")

    def applies(self, scope: Scope) -> bool:
        return scope["method"] in ("POST", "PUT") and bool(self.path.fullmatch(scope["path"]))

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        permission = data.get("permission") if isinstance(data, dict) else None
        if isinstance(permission, str) and permission not in PERMISSIONS:
            body = json.dumps({**data, "permission": "private"}).encode()
            scope = with_header(scope, b"content-length", str(len(body)).encode())
        await self.app(scope, replay(body), send)


class StatusIdsOptional(Mutant):
    """KB-STATUS-IDS-REQUIRED: the document status query answers without its required `ids`."""

    method, path = "GET", re.compile(KB_PREFIXES + r"/[^/]+/status")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        query = scope.get("query_string", b"")
        if not re.search(rb"(?:^|&)ids=", query):  # a missing ids is read as an empty one
            scope = {**scope, "query_string": (query + b"&" if query else b"") + b"ids="}
        await self.app(scope, receive, send)


class EmptyBulk500(Mutant):
    """KB-V1-STATUS / KB-KNOWLEDGES-STATUS: bulk with an empty array answers 500 (and
    ROBUST-NO-5XX warns)."""

    method, path = "POST", re.compile(KB_PREFIXES + r"/[^/]+/bulk")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        if self.authorized(scope) and body.strip() == b"[]":
            await respond(send, 500, {"statusCode": 500, "message": "Internal server error"})
            return
        await self.app(scope, replay(body), send)


class DeletedThreadReadable(Mutant):
    """THR-DELETE-GONE: DELETE /api/ai/threads/{thread_id} answers 202 but the thread stays."""

    method, path = "DELETE", re.compile(r"/api/ai/threads/[^/]+")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.authorized(scope):
            await self.app(scope, receive, send)
            return
        await respond(send, 202, None)


# --- scenario mutants: knowledge bases, conversations, chat-kit (tests/test_knowledge*.py, ...) ---


class JsonAnswer(Mutant):
    """Base: the app answers as usual, then `rewrite` changes its JSON answer on the way back."""

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        start: Message = {}
        chunks: list[bytes] = []

        async def keep(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            else:
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, keep)
        try:
            body = json.loads(b"".join(chunks))
        except ValueError:
            body = None
        if body is None or not 200 <= start["status"] < 300:
            content = b"".join(chunks)
        else:
            content = json.dumps(self.rewrite(body)).encode()
        headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(content)).encode()))
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": content})

    def rewrite(self, body: Any) -> Any:
        return body


class StatusAnswersOtherDocuments(Mutant):
    """KB-STATUS-EXACT: the document status query ignores `ids` and answers every document of
    the knowledge base."""

    method, path = "GET", re.compile(KB_PREFIXES + r"/([^/]+)/status")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = self.path.fullmatch(scope["path"])
        query = scope.get("query_string", b"")
        if match and self.authorized(scope) and re.search(rb"(?:^|&)ids=.", query):
            db = self.app.state.context.db  # type: ignore[attr-defined]
            every = [d["id"] for d in db.list("knowledge_document", None, parent=match[1])]
            scope = {**scope, "query_string": b"ids=" + ",".join(every).encode()}
        await self.app(scope, receive, send)


class ProcessNeverStarts(Mutant):
    """KB-PROCESS-COMPLETES: process answers 201 but starts nothing; documents stay `waiting`."""

    method, path = "POST", re.compile(KB_PREFIXES + r"/[^/]+/process")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        try:
            ids = json.loads(body)
        except ValueError:
            ids = None
        if isinstance(ids, list) and all(isinstance(i, str) for i in ids):
            body = b"[]"  # a valid request: the reference answers 201 and processes nothing
            scope = with_header(scope, b"content-length", b"2")
        await self.app(scope, replay(body), send)


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
        try:
            fields = json.loads(sent)
        except ValueError:
            fields = None
        if not isinstance(fields, dict) or not self.authorized(scope):
            await self.app(scope, replay(sent), send)
            return

        class EchoPatch(JsonAnswer):
            def rewrite(self, body: Any) -> Any:
                return {**body, **fields} if isinstance(body, dict) else body

        scope = with_header(scope, b"content-length", b"2")
        await EchoPatch(self.app).mutate(scope, replay(b"{}"), send)


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


MUTANTS: dict[str, tuple[type[Mutant], tuple[str, ...]]] = {
    "create-thread-200": (CreateThread200, ("THR-STATUS",)),
    "search-threads-no-auth": (SearchThreadsNoAuth, ("AUTH-MISSING-REJECTED",)),
    "kb-permission-any-string": (KbPermissionAnyString, ("KB-ALLOWED-VALUES",)),
    "status-ids-optional": (StatusIdsOptional, ("KB-STATUS-IDS-REQUIRED",)),
    "empty-bulk-500": (EmptyBulk500, ("KB-V1-STATUS", "KB-KNOWLEDGES-STATUS", "ROBUST-NO-5XX")),
    "deleted-thread-readable": (DeletedThreadReadable, ("THR-DELETE-GONE",)),
    "status-answers-other-documents": (StatusAnswersOtherDocuments, ("KB-STATUS-EXACT",)),
    "process-never-starts": (ProcessNeverStarts, ("KB-PROCESS-COMPLETES",)),
    "messages-ignore-limit": (MessagesIgnoreLimit, ("MSG-LIST-PAGING",)),
    "messages-ignore-offset": (MessagesIgnoreOffset, ("MSG-LIST-PAGING",)),
    "conversation-patch-not-persisted": (ConversationPatchNotPersisted, ("CONV-PATCH-PERSISTS",)),
    "knowledges-prefix-diverges": (KnowledgesPrefixDiverges, ("KB-PREFIXES-IDENTICAL",)),
    "kb-description-truncated": (KbDescriptionTruncated, ("KB-UPDATE-ROUNDTRIP",)),
    "chatkit-secret-never-works": (ChatkitSecretNeverWorks, ("CHATKIT-SECRET",)),
}


def wrap(app: ASGIApp, name: str) -> ASGIApp:
    """The reference app with mutant `name` around it."""
    try:
        middleware = MUTANTS[name][0]
    except KeyError:
        raise ValueError(f"unknown mutant {name!r}; known: {', '.join(sorted(MUTANTS))}") from None
    return middleware(app)
