"""Mutants the property layer catches (tests/property/test_property.py,
tests/property/test_stateful.py); its hostile ones are in hostile.py."""

from __future__ import annotations

import json
import re

from starlette.types import Message, Receive, Scope, Send

from assistant_conformance.proof.mutants._base import (
    KB_PREFIXES,
    PERMISSIONS,
    KbWrite,
    Mutant,
    json_or_none,
    read_body,
    replay,
    send_json,
    with_header,
)


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


class KbPermissionAnyString(KbWrite):
    """KB-ALLOWED-VALUES: a knowledge base with a permission outside the enum is accepted."""

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        data = json_or_none(body)
        permission = data.get("permission") if isinstance(data, dict) else None
        if isinstance(permission, str) and permission not in PERMISSIONS:
            body = json.dumps({**data, "permission": "private"}).encode()
            scope = with_header(scope, b"content-length", str(len(body)).encode())
        await self.app(scope, replay(body, receive), send)


class StatusIdsOptional(Mutant):
    """KB-STATUS-IDS-REQUIRED: the document status query answers without its required `ids`."""

    method, path = "GET", re.compile(KB_PREFIXES + r"/[^/]+/status")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        query = scope.get("query_string", b"")
        if not re.search(rb"(?:^|&)ids=", query):  # a missing ids: one that names no document
            scope = {**scope, "query_string": (query + b"&" if query else b"") + b"ids=none"}
        await self.app(scope, receive, send)


class EmptyBulk500(Mutant):
    """KB-V1-STATUS / KB-KNOWLEDGES-STATUS: bulk with an empty array answers 500 (and
    ROBUST-NO-5XX warns)."""

    method, path = "POST", re.compile(KB_PREFIXES + r"/[^/]+/bulk")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        if self.authorized(scope) and body.strip() == b"[]":
            await send_json(send, 500, {"statusCode": 500, "message": "Internal server error"})
            return
        await self.app(scope, replay(body, receive), send)


class DeletedThreadReadable(Mutant):
    """THR-DELETE-GONE: DELETE /api/ai/threads/{thread_id} answers 202 but the thread stays."""

    method, path = "DELETE", re.compile(r"/api/ai/threads/[^/]+")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.authorized(scope):
            await self.app(scope, receive, send)
            return
        await send_json(send, 202, None)


REGISTRY: dict[str, tuple[type[Mutant], tuple[str, ...]]] = {
    "create-thread-200": (CreateThread200, ("THR-STATUS",)),
    "search-threads-no-auth": (SearchThreadsNoAuth, ("AUTH-MISSING-REJECTED",)),
    "kb-permission-any-string": (KbPermissionAnyString, ("KB-ALLOWED-VALUES",)),
    "status-ids-optional": (StatusIdsOptional, ("KB-STATUS-IDS-REQUIRED",)),
    "empty-bulk-500": (EmptyBulk500, ("KB-V1-STATUS", "KB-KNOWLEDGES-STATUS", "ROBUST-NO-5XX")),
    "deleted-thread-readable": (DeletedThreadReadable, ("THR-DELETE-GONE",)),
}
