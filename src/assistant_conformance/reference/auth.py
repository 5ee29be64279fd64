"""Bearer authentication: every route needs `Authorization: Bearer <token>`.

Each configured token is a principal. A chat-kit client secret, while unexpired, acts as the
principal that created it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .db import Database
from .errors import error_response

UNAUTHORIZED_HEADERS = {"WWW-Authenticate": "Bearer"}


def principal_for(header: str | None, tokens: dict[str, str], db: Database) -> str | None:
    if not header:
        return None
    scheme, _, credential = header.partition(" ")
    credential = credential.strip()
    if scheme.lower() != "bearer" or not credential:
        return None
    if credential in tokens:
        return tokens[credential]
    session = db.get("chatkit_secret", credential, owner=None)
    if session and session["expires_at"] > time.time():
        return str(session["owner"])
    return None


def replay(body: bytes, receive: Receive | None = None) -> Receive:
    """The body read already, then the client's own receive: a stream learns of a disconnect,
    and only then (without one, as for an answer read whole, nothing more ever comes)."""
    sent = False

    async def again() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        if receive is None:
            await asyncio.Event().wait()  # until the app stops listening (cancelled)
        assert receive is not None
        return await receive()

    return again


class BearerAuth:
    """ASGI middleware: 401 JSON with `WWW-Authenticate: Bearer` unless the credential is known."""

    def __init__(
        self, app: ASGIApp, tokens: Callable[[], dict[str, str]], db: Callable[[], Database]
    ):
        self.app = app
        self.tokens = tokens
        self.db = db

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = None
        for name, value in scope["headers"]:
            if name == b"authorization":
                header = value.decode("latin-1")
                break
        principal = principal_for(header, self.tokens(), self.db())
        if principal is None:
            response = error_response(401, "Unauthorized", UNAUTHORIZED_HEADERS)
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})["principal"] = principal
        await self.app(scope, receive, send)


class BodyLimit:
    """ASGI middleware: 413 JSON for a request body larger than `limit` bytes; 408 (and the
    connection closed) for one not complete within `seconds`, so a client that stalls its body
    holds neither a request nor a connection for longer; a client gone before its whole body
    was sent is not served (its cut body would be taken as the whole: an empty one as none)."""

    def __init__(self, app: ASGIApp, limit: int, seconds: float = 30.0):
        self.app = app
        self.limit = limit
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await error_response(413, f"body exceeds {self.limit} bytes")(scope, receive, send)
            return
        # Chunked bodies carry no length: buffer them up to the limit.
        chunks: list[bytes] = []
        size, more = 0, True
        try:
            async with asyncio.timeout(self.seconds):
                while more:
                    message = await receive()
                    if message["type"] != "http.request":  # gone before its whole body:
                        return  # nobody to answer, and a body cut short is never served
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > self.limit:
                        too_big = error_response(413, f"body exceeds {self.limit} bytes")
                        await too_big(scope, receive, send)
                        return
                    chunks.append(chunk)
                    more = message.get("more_body", False)
        except TimeoutError:
            stalled = f"request body not complete within {self.seconds:g} s"
            await error_response(408, stalled, {"Connection": "close"})(scope, receive, send)
            return
        await self.app(scope, replay(b"".join(chunks), receive), send)
