"""Deliberately wrong variants of the reference server, for the project's own tests.

Each mutant is a small ASGI middleware around the reference app that breaks exactly one
requirement (named in its docstring). `assistant-reference --mutant NAME` serves one.
MUTANTS maps a name to (middleware class, requirement IDs the suite must then report failed
or, for SHOULD requirements, warned).
"""

from __future__ import annotations

import asyncio
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


class StreamNeverEnds(Mutant):
    """RUN-STREAM-ENDS: POST .../runs/stream answers 201 and a stream of events that never ends."""

    method, path = "POST", re.compile(r"/api/ai/threads/[^/]+/runs/stream")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.authorized(scope):
            await self.app(scope, receive, send)
            return
        headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
        await send({"type": "http.response.start", "status": 201, "headers": headers})
        n = 0
        while True:  # until the client goes away (the send then fails)
            n += 1
            event = f'id: {n}\nevent: values\ndata: {{"n": {n}}}\n\n'.encode()
            await send({"type": "http.response.body", "body": event, "more_body": True})
            await asyncio.sleep(0.02)


class ConversationSearchHangs(Mutant):
    """CONV-STATUS: POST /api/ai/conversations/search never answers."""

    method, path = "POST", re.compile(r"/api/ai/conversations/search")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.authorized(scope):
            await self.app(scope, receive, send)
            return
        await asyncio.sleep(3600)


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
    "stream-never-ends": (StreamNeverEnds, ("RUN-STREAM-ENDS",)),
    "conversation-search-hangs": (ConversationSearchHangs, ("CONV-STATUS",)),
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


# =================================================================================================
# The rest of the catalogue (issue 6): every area, several mutants each. Appended after the registry
# so the classes and entries above stay as their layers wrote them; MUTANTS.update adds these.
# SELECTIONS says which part of the suite each mutant needs; the default (`selection`) runs the
# scenario modules whose tests name one of the mutant's requirement IDs (-k on the IDs).
# =================================================================================================

UUID_TEXT = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
THREAD = r"/api/ai/threads/[^/]+"
RUN = THREAD + r"/runs/[^/]+"
STREAMS = re.compile(THREAD + r"/runs(?:/[^/]+)?/stream")
NIL_UUID = "00000000-0000-4000-8000-000000000000"


def as_request(scope: Scope, method: str, path: str) -> Scope:
    """The same request (credential included) sent as `method path`, without a body."""
    headers = [(k, v) for k, v in scope["headers"] if k not in (b"content-length", b"content-type")]
    return {
        **scope,
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": headers,
    }


async def answer_of(app: ASGIApp, scope: Scope, body: bytes = b"") -> tuple[Message, bytes]:
    """What `app` answers to `scope` with `body`, in full: the start message and the body."""
    start: Message = {}
    chunks: list[bytes] = []

    async def keep(message: Message) -> None:
        if message["type"] == "http.response.start":
            start.update(message)
        else:
            chunks.append(message.get("body", b""))

    await app(scope, replay(body), keep)
    return start, b"".join(chunks)


async def send_answer(send: Send, start: Message, status: int, content: bytes) -> None:
    """Answer `status` with `content` and the headers of `start` (a 204 carries no body at all)."""
    content = b"" if status == 204 else content
    drop = (b"content-length",) if content else (b"content-length", b"content-type")
    headers = [(k, v) for k, v in start["headers"] if k.lower() not in drop]
    if status != 204:
        headers.append((b"content-length", str(len(content)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": content})


def json_or_none(content: bytes) -> Any:
    try:
        return json.loads(content)
    except ValueError:
        return None


# --- a success status changed, per operation group (and per knowledge-base prefix) ---------------


class SuccessStatusChanged(Mutant):
    """Base: the operation answers `now` where the contract says `was`; the body is unchanged."""

    was, now = 0, 0

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        start, content = await answer_of(self.app, scope, await read_body(receive))
        status = self.now if start["status"] == self.was else start["status"]
        await send_answer(send, start, status, content)


class V1CreateKb200(SuccessStatusChanged):
    """KB-V1-STATUS: POST /api/ai/v1/kb answers 200 instead of 201 (so the prefixes differ too:
    KB-PREFIXES-IDENTICAL)."""

    method, path, was, now = "POST", re.compile(r"/api/ai/v1/kb"), 201, 200


class KnowledgesDelete204(SuccessStatusChanged):
    """KB-KNOWLEDGES-STATUS: DELETE /api/ai/knowledges/{id} answers 204 instead of 200 (so the
    prefixes differ too: KB-PREFIXES-IDENTICAL)."""

    method, path, was, now = "DELETE", re.compile(r"/api/ai/knowledges/[^/]+"), 200, 204


class ConversationDelete200(SuccessStatusChanged):
    """CONV-STATUS: DELETE /api/ai/conversations/{conversation_id} answers 200 instead of 202."""

    method, path, was, now = "DELETE", re.compile(r"/api/ai/conversations/[^/]+"), 202, 200


class MessageCreate200(SuccessStatusChanged):
    """MSG-STATUS: POST /api/ai/conversations/{conversation_id}/messages answers 200, not 201."""

    method, path, was, now = "POST", re.compile(r"/api/ai/conversations/[^/]+/messages"), 201, 200


class StoreSearch200(SuccessStatusChanged):
    """STORE-STATUS: POST /api/ai/store/items/search answers 200 instead of 201."""

    method, path, was, now = "POST", re.compile(r"/api/ai/store/items/search"), 201, 200


class RunsCancel200(SuccessStatusChanged):
    """RUN-STATUS: POST .../runs/{run_id}/cancel answers 200 instead of 201."""

    method, path, was, now = "POST", re.compile(RUN + r"/cancel"), 201, 200


class AssistantsCount200(SuccessStatusChanged):
    """ASST-STATUS: POST /api/ai/assistants/count answers 200 instead of 201."""

    method, path, was, now = "POST", re.compile(r"/api/ai/assistants/count"), 201, 200


class FileUpload200(SuccessStatusChanged):
    """FILE-STATUS: POST /api/ai/v1/file answers 200 instead of 201."""

    method, path, was, now = "POST", re.compile(r"/api/ai/v1/file"), 201, 200


class ContextUpload200(SuccessStatusChanged):
    """CTX-STATUS: POST /api/ai/contexts/file answers 200 instead of 201."""

    method, path, was, now = "POST", re.compile(r"/api/ai/contexts/file"), 201, 200


class ChatkitSession200(SuccessStatusChanged):
    """CHATKIT-STATUS: POST /api/ai/v1/chatkit/sessions answers 200 instead of 201."""

    method, path, was, now = "POST", re.compile(r"/api/ai/v1/chatkit/sessions"), 201, 200


class Usage201(SuccessStatusChanged):
    """USAGE-STATUS: GET .../usage answers 201 instead of 200."""

    method, path, was, now = "GET", re.compile(THREAD + r"/usage"), 200, 201


# --- authentication --------------------------------------------------------------------------


class AnyTokenAccepted(Mutant):
    """AUTH-INVALID-REJECTED: any bearer token is accepted (as the first principal's), so an
    unknown token gets no 401 (AUTH-401) and its requests take effect (AUTH-REJECTED-NO-EFFECT)."""

    def applies(self, scope: Scope) -> bool:
        return True

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        scheme, _, credential = header.partition(" ")
        if scheme.lower() == "bearer" and credential.strip() and not self.authorized(scope):
            scope = with_header(scope, b"authorization", f"Bearer {self.a_token()}".encode())
        await self.app(scope, receive, send)


class MissingToken500(Mutant):
    """AUTH-401: a request without an Authorization header answers 500 (not a 2xx, not a 401)."""

    def applies(self, scope: Scope) -> bool:
        return b"authorization" not in dict(scope["headers"])

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        await respond(send, 500, {"statusCode": 500, "message": "Internal server error"})


class GetRunNoAuth(Mutant):
    """AUTH-MISSING-REJECTED: GET .../runs/{run_id} without an Authorization header answers the
    run (as the first principal's), so no 401 either (AUTH-401)."""

    method, path = "GET", re.compile(RUN)

    def applies(self, scope: Scope) -> bool:
        missing = b"authorization" not in dict(scope["headers"])
        return missing and super().applies(scope)

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope = with_header(scope, b"authorization", f"Bearer {self.a_token()}".encode())
        await self.app(scope, receive, send)


class NoWwwAuthenticate(Mutant):
    """AUTH-WWW-AUTHENTICATE: 401 answers carry no WWW-Authenticate header."""

    def applies(self, scope: Scope) -> bool:
        return True

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def bare(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 401:
                kept = [(k, v) for k, v in message["headers"] if k.lower() != b"www-authenticate"]
                message = {**message, "headers": kept}
            await send(message)

        await self.app(scope, receive, bare)


class ThreadsReadableByAnyPrincipal(Mutant):
    """AUTH-PRINCIPAL-ISOLATION: GET on a thread (and below it) answers any principal as the
    first one, so one principal reads another's threads, state and runs."""

    method, path = "GET", re.compile(THREAD + r"(?:/.*)?")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.authorized(scope):
            scope = with_header(scope, b"authorization", f"Bearer {self.a_token()}".encode())
        await self.app(scope, receive, send)


# --- knowledge bases ---------------------------------------------------------------------------


class KbUuidAnyString(Mutant):
    """KB-UUID-FORMAT: a workspaceId or integrationId that is not a UUID is accepted."""

    path = re.compile(KB_PREFIXES + r"(?:/[^/]+)?")
    stand_in = NIL_UUID

    def applies(self, scope: Scope) -> bool:
        return scope["method"] in ("POST", "PUT") and bool(self.path.fullmatch(scope["path"]))

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        data = json_or_none(body)
        if isinstance(data, dict):
            fields = ("workspaceId", "integrationId")
            bad = [f for f in fields if f in data and not re.fullmatch(UUID_TEXT, str(data[f]))]
            if bad:
                body = json.dumps({**data, **dict.fromkeys(bad, self.stand_in)}).encode()
                scope = with_header(scope, b"content-length", str(len(body)).encode())
        await self.app(scope, replay(body), send)


class KbCreateEmptyBody500(Mutant):
    """KB-BODY-REQUIRED: creating a knowledge base without a body answers 500, not a 4xx."""

    method, path = "POST", re.compile(KB_PREFIXES)

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        if self.authorized(scope) and not body.strip():
            await respond(send, 500, {"statusCode": 500, "message": "Internal server error"})
            return
        await self.app(scope, replay(body), send)


# --- a body required where the contract sends none; required query parameters not required -----


class BodyRequired(Mutant):
    """Base: the operation refuses a request without a body (422)."""

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        if self.authorized(scope) and not body.strip():
            await respond(send, 422, {"statusCode": 422, "message": "a JSON body is required"})
            return
        await self.app(scope, replay(body), send)


class StoreSearchNeedsBody(BodyRequired):
    """STORE-NO-BODY: POST /api/ai/store/items/search without a body answers 422 (so not the 201
    of STORE-STATUS either)."""

    method, path = "POST", re.compile(r"/api/ai/store/items/search")


class MessageSearchNeedsBody(BodyRequired):
    """MSG-SEARCH-NO-BODY: POST .../messages/search without a body answers 422 (so not the 200
    of MSG-STATUS either)."""

    method, path = "POST", re.compile(r"/api/ai/conversations/[^/]+/messages/search")


class QueryDefault(Mutant):
    """Base: a required query parameter that is missing gets a default instead of a 4xx."""

    parameter, default = b"", b""

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        query = scope.get("query_string", b"")
        if not re.search(rb"(?:^|&)" + self.parameter + rb"=", query):
            added = self.parameter + b"=" + self.default
            scope = {**scope, "query_string": query + b"&" + added if query else added}
        await self.app(scope, receive, send)


class RunsLimitOptional(QueryDefault):
    """RUN-PAGING-REQUIRED: the run list answers without its required `limit` (default 10)."""

    method, path, parameter, default = "GET", re.compile(THREAD + r"/runs"), b"limit", b"10"


class MessagesOffsetOptional(QueryDefault):
    """MSG-PAGING-REQUIRED: the message list answers without its required `offset` (default 0)."""

    method, path = "GET", re.compile(r"/api/ai/conversations/[^/]+/messages")
    parameter, default = b"offset", b"0"


class UsageStartOptional(QueryDefault):
    """USAGE-RANGE-REQUIRED: thread usage answers without its required `start` (from 2000)."""

    method, path = "GET", re.compile(THREAD + r"/usage")
    parameter, default = b"start", b"2000-01-01T00%3A00%3A00Z"


# --- streams -------------------------------------------------------------------------------------


class EventFrames(Mutant):
    """Base: rewrites the run streams frame by frame (`frame`: one event with its blank line)."""

    path = STREAMS

    def applies(self, scope: Scope) -> bool:
        return scope["method"] in ("GET", "POST") and bool(self.path.fullmatch(scope["path"]))

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        buffer, streaming = b"", False

        async def framed(message: Message) -> None:
            nonlocal buffer, streaming
            if message["type"] == "http.response.start":
                content_type = dict(message["headers"]).get(b"content-type", b"")
                streaming = content_type.startswith(b"text/event-stream")
                if streaming:
                    message = self.start(message)
                await send(message)
                return
            if not streaming:
                await send(message)
                return
            *frames, buffer = (buffer + message.get("body", b"")).split(b"\n\n")
            content = b"".join(self.frame(f + b"\n\n") for f in frames)
            if not message.get("more_body", False):
                content, buffer = content + buffer, b""
            await send({**message, "body": content})

        await self.app(self.request(scope), receive, framed)

    def request(self, scope: Scope) -> Scope:
        return scope

    def start(self, message: Message) -> Message:
        return message

    def frame(self, frame: bytes) -> bytes:
        return frame


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


class CancelDoesNothing(Mutant):
    """RUN-CANCEL: cancel answers 201 with the run and leaves it running."""

    method, path = "POST", re.compile(RUN + r"/cancel")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        run = scope["path"].removesuffix("/cancel")
        start, content = await answer_of(self.app, as_request(scope, "GET", run))
        await send_answer(send, start, 201 if start["status"] == 200 else start["status"], content)


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


class CopyAnswersTheOriginal(Mutant):
    """THR-COPY-NEW-THREAD: copy answers 201 with the original thread, not a new one."""

    method, path = "POST", re.compile(THREAD + r"/copy")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        original = scope["path"].removesuffix("/copy")
        start, content = await answer_of(self.app, as_request(scope, "GET", original))
        await send_answer(send, start, 201 if start["status"] == 200 else start["status"], content)


# --- robustness, assistants, contexts, store ------------------------------------------------------


class UnknownIdAnswersEmpty(Mutant):
    """ROBUST-UNKNOWN-ID-404: a GET the reference answers 404 is answered 200 with `{}`."""

    method, path = "GET", re.compile(r"/api/ai/.+")

    def applies(self, scope: Scope) -> bool:
        return super().applies(scope) and not STREAMS.fullmatch(scope["path"])

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        start, content = await answer_of(self.app, scope, await read_body(receive))
        if start["status"] == 404:
            await respond(send, 200, {})
            return
        await send_answer(send, start, start["status"], content)


class MalformedJson500(Mutant):
    """ROBUST-NO-5XX: a request body that is not JSON answers 500 (so not the 4xx of
    ROBUST-BAD-INPUT-4XX either)."""

    def applies(self, scope: Scope) -> bool:
        content_type = dict(scope["headers"]).get(b"content-type", b"")
        return scope["method"] in ("POST", "PUT", "PATCH") and b"json" in content_type

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        try:
            json.loads(body)
        except (ValueError, RecursionError):
            if body.strip() and self.authorized(scope):
                await respond(send, 500, {"statusCode": 500, "message": "Internal server error"})
                return
        await self.app(scope, replay(body), send)


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


class AssistantCountOffByOne(Mutant):
    """ASST-COUNT-CONSISTENT: the assistant count is one more than search finds."""

    method, path = "POST", re.compile(r"/api/ai/assistants/count")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        start, content = await answer_of(self.app, scope, await read_body(receive))
        count = json_or_none(content)
        if isinstance(count, int) and not isinstance(count, bool):
            content = str(count + 1).encode()
        await send_answer(send, start, start["status"], content)


class ContextDeleteKeepsFile(Mutant):
    """CTX-DELETE-GONE: deleting a context file answers 200 and removes nothing."""

    method, path = "DELETE", re.compile(r"/api/ai/contexts/file/([^/]+)")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        file = f"/api/ai/files/{scope['path'].rsplit('/', 1)[-1]}"  # the reference's download
        start, content = await answer_of(self.app, as_request(scope, "GET", file))
        if start["status"] == 200:
            await respond(send, 200, {"raw": [], "affected": 1})
            return
        await send_answer(send, start, start["status"], content)


class StoreSearchFindsNothing(Mutant):
    """STORE-SEARCH-FINDS: store item search answers no items, whatever is stored."""

    method, path = "POST", re.compile(r"/api/ai/store/items/search")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        start, content = await answer_of(self.app, scope, await read_body(receive))
        found = json_or_none(content)
        if start["status"] == 201 and isinstance(found, dict):
            content = json.dumps({**found, "items": []}).encode()
        await send_answer(send, start, start["status"], content)


MUTANTS.update(
    {
        "v1-create-kb-200": (V1CreateKb200, ("KB-V1-STATUS", "KB-PREFIXES-IDENTICAL")),
        "knowledges-delete-204": (
            KnowledgesDelete204,
            ("KB-KNOWLEDGES-STATUS", "KB-PREFIXES-IDENTICAL"),
        ),
        "conversation-delete-200": (ConversationDelete200, ("CONV-STATUS",)),
        "message-create-200": (MessageCreate200, ("MSG-STATUS",)),
        "store-search-200": (StoreSearch200, ("STORE-STATUS",)),
        "runs-cancel-200": (RunsCancel200, ("RUN-STATUS",)),
        "assistants-count-200": (AssistantsCount200, ("ASST-STATUS",)),
        "file-upload-200": (FileUpload200, ("FILE-STATUS",)),
        "context-upload-200": (ContextUpload200, ("CTX-STATUS",)),
        "chatkit-session-200": (ChatkitSession200, ("CHATKIT-STATUS",)),
        "usage-201": (Usage201, ("USAGE-STATUS",)),
        "any-token-accepted": (
            AnyTokenAccepted,
            ("AUTH-INVALID-REJECTED", "AUTH-401", "AUTH-REJECTED-NO-EFFECT"),
        ),
        "missing-token-500": (MissingToken500, ("AUTH-401",)),
        "get-run-no-auth": (GetRunNoAuth, ("AUTH-MISSING-REJECTED", "AUTH-401")),
        "no-www-authenticate": (NoWwwAuthenticate, ("AUTH-WWW-AUTHENTICATE",)),
        "threads-readable-by-any-principal": (
            ThreadsReadableByAnyPrincipal,
            ("AUTH-PRINCIPAL-ISOLATION",),
        ),
        "kb-uuid-any-string": (KbUuidAnyString, ("KB-UUID-FORMAT",)),
        "kb-create-empty-body-500": (KbCreateEmptyBody500, ("KB-BODY-REQUIRED",)),
        "store-search-needs-body": (StoreSearchNeedsBody, ("STORE-NO-BODY", "STORE-STATUS")),
        "message-search-needs-body": (MessageSearchNeedsBody, ("MSG-SEARCH-NO-BODY", "MSG-STATUS")),
        "runs-limit-optional": (RunsLimitOptional, ("RUN-PAGING-REQUIRED",)),
        "messages-offset-optional": (MessagesOffsetOptional, ("MSG-PAGING-REQUIRED",)),
        "usage-start-optional": (UsageStartOptional, ("USAGE-RANGE-REQUIRED",)),
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
        "malformed-json-500": (MalformedJson500, ("ROBUST-NO-5XX", "ROBUST-BAD-INPUT-4XX")),
        "errors-as-text": (ErrorsAsText, ("ROBUST-ERROR-JSON",)),
        "assistant-count-off-by-one": (AssistantCountOffByOne, ("ASST-COUNT-CONSISTENT",)),
        "context-delete-keeps-file": (ContextDeleteKeepsFile, ("CTX-DELETE-GONE",)),
        "store-search-finds-nothing": (StoreSearchFindsNothing, ("STORE-SEARCH-FINDS",)),
    }
)

# What each mutant needs to run: pytest arguments (paths, -k, options). A mutant not listed runs
# the scenario modules with -k on its requirement IDs (see `selection`).
PROPERTY_LAYER = ("tests/test_property.py", "tests/test_stateful.py")
KNOWLEDGE_MODULES = ("tests/test_knowledge.py", "tests/test_knowledge_prefixes.py")
SELECTIONS: dict[str, tuple[str, ...]] = {
    # the property layer's mutants: the operations they touch and the state machine of their area
    # (selftests/test_property_layer.py runs every state machine)
    "create-thread-200": (*PROPERTY_LAYER, "-k", "createThread or (state_machine and threads)"),
    "search-threads-no-auth": (
        *PROPERTY_LAYER,
        "-k",
        "searchThreads or (state_machine and threads)",
    ),
    "kb-permission-any-string": (
        *PROPERTY_LAYER,
        "-k",
        "CreateKnowledgebase or UpdateKnowledgebase or (state_machine and knowledge)",
    ),
    "status-ids-optional": (
        *PROPERTY_LAYER,
        "-k",
        "GetDocumentStatus or (state_machine and knowledge)",
    ),
    "empty-bulk-500": (
        *PROPERTY_LAYER,
        "-k",
        "BulkCreateDocuments or (state_machine and knowledge)",
    ),
    "deleted-thread-readable": (
        *PROPERTY_LAYER,
        "-k",
        "deleteThread or getThread or (state_machine and threads)",
    ),
    "conversation-search-hangs": (
        *PROPERTY_LAYER,
        "-k",
        "searchConversations or (state_machine and conversations)",
        "--request-timeout",
        "2",
    ),
    # the data scenario modules' mutants
    "status-answers-other-documents": KNOWLEDGE_MODULES,
    "process-never-starts": (*KNOWLEDGE_MODULES, "--process-timeout", "1"),
    "knowledges-prefix-diverges": KNOWLEDGE_MODULES,
    "kb-description-truncated": KNOWLEDGE_MODULES,
    "messages-ignore-limit": ("tests/test_conversations.py",),
    "messages-ignore-offset": ("tests/test_conversations.py",),
    "conversation-patch-not-persisted": ("tests/test_conversations.py",),
    "chatkit-secret-never-works": ("tests/test_files.py",),
}
SCENARIO_MODULES = ("tests", *(f"--ignore={path}" for path in PROPERTY_LAYER))


def selection(name: str) -> tuple[str, ...]:
    """The pytest arguments that run the part of the suite mutant `name` must be caught by."""
    if name in SELECTIONS:
        return SELECTIONS[name]
    return (*SCENARIO_MODULES, "-k", " or ".join(MUTANTS[name][1]))
