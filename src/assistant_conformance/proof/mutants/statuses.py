"""Mutants of success statuses, authentication, allowed values, required bodies and queries."""

from __future__ import annotations

import json
import re

from starlette.types import Message, Receive, Scope, Send

from assistant_conformance.proof.mutants._base import (
    KB_PREFIXES,
    NIL_UUID,
    RUN,
    THREAD,
    UUID_TEXT,
    Mutant,
    SuccessStatusChanged,
    json_or_none,
    read_body,
    replay,
    send_json,
    with_header,
)

# --- a success status changed, per operation group (and per knowledge-base prefix) ---------------


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
        await send_json(send, 500, {"statusCode": 500, "message": "Internal server error"})


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
        await self.app(scope, replay(body, receive), send)


class KbCreateEmptyBody500(Mutant):
    """KB-BODY-REQUIRED: creating a knowledge base without a body answers 500, not a 4xx."""

    method, path = "POST", re.compile(KB_PREFIXES)

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        if self.authorized(scope) and not body.strip():
            await send_json(send, 500, {"statusCode": 500, "message": "Internal server error"})
            return
        await self.app(scope, replay(body, receive), send)


# --- a body required where the contract sends none; required query parameters not required -----


class BodyRequired(Mutant):
    """Base: the operation refuses a request without a body (422)."""

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        if self.authorized(scope) and not body.strip():
            await send_json(send, 422, {"statusCode": 422, "message": "a JSON body is required"})
            return
        await self.app(scope, replay(body, receive), send)


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


REGISTRY: dict[str, tuple[type[Mutant], tuple[str, ...]]] = {
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
    "store-search-needs-body": (StoreSearchNeedsBody, ("STORE-NO-BODY",)),
    "message-search-needs-body": (MessageSearchNeedsBody, ("MSG-SEARCH-NO-BODY",)),
    "runs-limit-optional": (RunsLimitOptional, ("RUN-PAGING-REQUIRED",)),
    "messages-offset-optional": (MessagesOffsetOptional, ("MSG-PAGING-REQUIRED",)),
    "usage-start-optional": (UsageStartOptional, ("USAGE-RANGE-REQUIRED",)),
}
