"""What every variant is made of: the base class and helpers for rewriting answers."""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assistant_conformance.contract.openapi import KB_PREFIXES


class Variant:
    """Base: passes everything through; a subclass changes what it is about."""

    pytest_args: tuple[str, ...] = ()  # how the whole suite runs against it, if not as usual
    warns: tuple[str, ...] = ()  # the SHOULDs it breaks where the document leaves room
    timed = False  # its room is in timing (queues, lags, other traffic): repeated in the self-tests

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self.handle(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


# A knowledge-base create or update, its id (if any) named `id`.
KB_WRITE = re.compile(KB_PREFIXES + r"(?:/(?P<id>[^/]+))?")


def asgi_header(message: Message, name: bytes) -> bytes:
    return dict((k.lower(), v) for k, v in message.get("headers", [])).get(name, b"")


def is_json_start(start: Message) -> bool:
    content_type = asgi_header(start, b"content-type").split(b";")[0].strip()
    return content_type == b"application/json" or content_type.endswith(b"+json")


async def send_whole(send: Send, start: Message, content: bytes) -> None:
    headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
    headers.append((b"content-length", str(len(content)).encode()))
    await send({**start, "headers": headers})
    await send({"type": "http.response.body", "body": content})


class JsonRewrite(Variant):
    """Base: every JSON answer that is not a stream is read whole and passed through `rewrite`."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        start: Message = {}
        chunks: list[bytes] = []
        passing = False

        async def rewriting(message: Message) -> None:
            nonlocal passing
            if message["type"] == "http.response.start":
                start.update(message)
                passing = not is_json_start(message)
                if passing:
                    await send(message)
                return
            if passing:
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                await send_whole(send, start, self.rewrite_bytes(b"".join(chunks)))

        await self.app(scope, receive, rewriting)

    def rewrite_bytes(self, content: bytes) -> bytes:
        try:
            body = json.loads(content)
        except ValueError:
            return content
        return json.dumps(self.rewrite(body), ensure_ascii=False).encode()

    def rewrite(self, body: Any) -> Any:
        return body
