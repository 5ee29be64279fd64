"""Limits on the request line, answered with the reference's JSON error body like everything else.

- A query string longer than MAX_QUERY_BYTES: 414 (`QueryLimit`, inside authentication).
- A request the HTTP parser cannot read at all (a request line or headers too long for it, a raw
  NUL or non-ASCII byte in the path): uvicorn answers 400 itself, before the app sees anything;
  `json_error_protocol` makes that answer JSON too.
"""

from __future__ import annotations

import asyncio
import json

from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.auto import AutoHTTPProtocol

from .errors import error_response

MAX_QUERY_BYTES = 8 * 1024


class QueryLimit:
    """ASGI middleware: 414 JSON for a query string longer than `limit` bytes."""

    def __init__(self, app: ASGIApp, limit: int = MAX_QUERY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and len(scope.get("query_string", b"")) > self.limit:
            message = f"query string exceeds {self.limit} bytes"
            await error_response(414, message)(scope, receive, send)
            return
        await self.app(scope, receive, send)


class _JsonBadRequest:
    transport: asyncio.Transport

    def send_400_response(self, msg: str) -> None:
        body = json.dumps({"statusCode": 400, "message": msg, "error": "Bad Request"}).encode()
        head = (
            b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\n"
            b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body)
        )
        self.transport.write(head + body)
        self.transport.close()


def json_error_protocol() -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol (httptools or h11, as it would pick), with a JSON parser 400."""
    return type("JsonErrorHTTPProtocol", (_JsonBadRequest, AutoHTTPProtocol), {})
