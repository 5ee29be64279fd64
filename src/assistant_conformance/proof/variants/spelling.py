"""Variants that spell the same answers differently: extra fields, SSE dialect, opaque event ids,
latency, gzip."""

from __future__ import annotations

import asyncio
import hashlib
import re
import secrets
import zlib
from typing import Any, ClassVar

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assistant_conformance.proof.mutants import EventFrames
from assistant_conformance.proof.variants._base import JsonRewrite, Variant, asgi_header


class ExtraFields(JsonRewrite):
    """Every JSON object answered (and every object in an answered array) carries fields the
    contract does not name."""

    EXTRA: ClassVar[dict[str, Any]] = {
        "x_vendor_extension": {"tier": "gold", "tags": ["a", "b"]},
        "_trace": "conformance",
    }

    def rewrite(self, body: Any) -> Any:
        if isinstance(body, dict):
            return {**body, **self.EXTRA}
        if isinstance(body, list):
            return [{**e, **self.EXTRA} if isinstance(e, dict) else e for e in body]
        return body


class SseDialect(EventFrames):
    """Run streams in other legal SSE spellings: CRLF line ends, `:` comment keep-alives before
    every event, a `retry:` line in each event and `id:` after `event:` and `data:`."""

    def frame(self, frame: bytes) -> bytes:
        fields = dict(line.split(b": ", 1) for line in frame.split(b"\n") if b": " in line)
        lines = [b": keep-alive", b"", b": still here"]  # a comment-only block, then a comment
        lines += [b"event: " + fields.get(b"event", b"message")]
        lines += [b"data: " + fields.get(b"data", b"")]
        lines += [b"id: " + fields[b"id"]] if b"id" in fields else []
        lines += [b"retry: 3000", b"", b""]
        return b"\r\n".join(lines)


class OpaqueEventIds(EventFrames):
    """Event ids are opaque, unordered strings (`ev-<hex>`), not numbers; the last-event-id a
    client sends back is mapped to the reference's own id."""

    def __init__(self, app: ASGIApp) -> None:
        super().__init__(app)
        self.salt = secrets.token_bytes(8)
        self.own: dict[bytes, bytes] = {}  # opaque id -> the reference's id

    def opaque(self, own: bytes) -> bytes:
        made = b"ev-" + hashlib.sha256(self.salt + own).hexdigest()[:16].encode()
        self.own[made] = own
        return made

    def request(self, scope: Scope) -> Scope:
        sent = dict(scope["headers"]).get(b"last-event-id")
        if sent is None or sent.strip() not in self.own:
            return scope  # an id the server never sent: the reference reads it as "none"
        headers = [(k, v) for k, v in scope["headers"] if k != b"last-event-id"]
        return {**scope, "headers": [*headers, (b"last-event-id", self.own[sent.strip()])]}

    def frame(self, frame: bytes) -> bytes:
        return re.sub(rb"(?m)^id: ?(.*)$", lambda m: b"id: " + self.opaque(m[1]), frame)


class Latency150ms(Variant):
    """Every answer starts 150 ms late."""

    # The suite's time against it is waiting (about 4000 requests): spread over xdist workers.
    pytest_args = ("-n", "4")

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def late(message: Message) -> None:
            if message["type"] == "http.response.start":
                await asyncio.sleep(0.15)
            await send(message)

        await self.app(scope, receive, late)


class Throttling(Variant):
    """Every tenth request is answered 429 Too Many Requests with Retry-After: 1 (RFC 6585 §4),
    as a gateway with a rate limit would: the suite waits and sends it again, and judges the
    answer it then gets."""

    def __init__(self, app: ASGIApp) -> None:
        super().__init__(app)
        self.count = 0

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.count += 1
        if self.count % 10:
            await self.app(scope, receive, send)
            return
        body = b'{"statusCode": 429, "message": "Too Many Requests"}'
        headers = [
            (b"content-type", b"application/json"),
            (b"retry-after", b"1"),
            (b"content-length", str(len(body)).encode()),
        ]
        await send({"type": "http.response.start", "status": 429, "headers": headers})
        await send({"type": "http.response.body", "body": body})


class Gzip(Variant):
    """Answers are gzip-encoded when the request accepts gzip: whole answers at once, streams
    chunk by chunk (each flushed, so events still arrive as they happen)."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        accepted = dict(scope["headers"]).get(b"accept-encoding", b"")
        if b"gzip" not in accepted.lower():
            await self.app(scope, receive, send)
            return
        start: Message = {}
        encoder: Any = None

        async def gzipped(message: Message) -> None:
            nonlocal encoder
            if message["type"] == "http.response.start":
                start.update(message)
                return
            body, more = message.get("body", b""), message.get("more_body", False)
            if encoder is None:
                if (not body and not more) or asgi_header(start, b"content-encoding"):
                    await send(start)  # nothing to encode (or already encoded)
                    await send(message)
                    encoder = False
                    return
                encoder = zlib.compressobj(wbits=31)
                headers = [
                    (k, v)
                    for k, v in start["headers"]
                    if k.lower() not in (b"content-length", b"content-encoding")
                ]
                headers += [(b"content-encoding", b"gzip"), (b"vary", b"Accept-Encoding")]
                if not more:
                    content = encoder.compress(body) + encoder.flush()
                    headers.append((b"content-length", str(len(content)).encode()))
                    await send({**start, "headers": headers})
                    await send({"type": "http.response.body", "body": content})
                    return
                await send({**start, "headers": headers})
            if encoder is False:
                await send(message)
                return
            flush = zlib.Z_SYNC_FLUSH if more else zlib.Z_FINISH
            content = encoder.compress(body) + encoder.flush(flush)
            await send({"type": "http.response.body", "body": content, "more_body": more})

        await self.app(scope, receive, gzipped)
