"""Conformant variants of the reference server: each changes it only in a way the contract allows.

The suite must pass every one of them as it passes the reference itself (no failure, warning or
error the reference does not get): a suite that fails a variant relies on something the contract
does not promise (a field list, a line ending, numeric event ids, speed, an identity encoding, the
format of identifiers). Each variant is a small ASGI middleware around the reference app;
`assistant-reference --variant NAME` serves one. VARIANTS maps a name to its class.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import secrets
import zlib
from typing import Any, ClassVar

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .mutants import EventFrames, read_body


class Variant:
    """Base: passes everything through; a subclass changes what it is about."""

    pytest_args: tuple[str, ...] = ()  # how the whole suite runs against it, if not as usual

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self.handle(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


def replay(body: bytes, receive: Receive) -> Receive:
    """The body read already, then the client's own receive (a stream still learns of a
    disconnect, and only then)."""
    sent = False

    async def again() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return again


def header(message: Message, name: bytes) -> bytes:
    return dict((k.lower(), v) for k, v in message.get("headers", [])).get(name, b"")


def is_json(start: Message) -> bool:
    content_type = header(start, b"content-type").split(b";")[0].strip()
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
                passing = not is_json(message)
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
                if (not body and not more) or header(start, b"content-encoding"):
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


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
OPAQUE = re.compile(rb"id_([0-9a-f]{8})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{12})")
CLIENT_FIELDS = {"workspaceId", "integrationId", "extKnowledgebaseId", "copilotId"}


def id_key(key: str) -> bool:
    """A field holding an identifier the server assigns (not one the client chose, §2.1)."""
    return key == "id" or key.endswith("_id") or (key.endswith("Id") and key not in CLIENT_FIELDS)


def opaque_ids(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: opaque_ids(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [opaque_ids(v, key) for v in value]
    if isinstance(value, str) and id_key(key) and UUID.fullmatch(value):
        return "id_" + value.replace("-", "")
    return value


def own_ids(text: bytes) -> bytes:
    return OPAQUE.sub(rb"\1-\2-\3-\4-\5", text)


class OpaqueIdentifiers(JsonRewrite):
    """Identifiers the server assigns are `id_<32 hex>` instead of UUIDs, in bodies, streams and
    Location headers; requests naming them (path, query, body) are mapped back."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = own_ids(scope["path"].encode()).decode()
        scope = {
            **scope,
            "path": path,
            "raw_path": own_ids(scope.get("raw_path") or path.encode()),
            "query_string": own_ids(scope.get("query_string", b"")),
        }
        body = await read_body(receive)
        if not dict(scope["headers"]).get(b"content-type", b"").startswith(b"multipart/"):
            mapped = own_ids(body)
            if mapped != body:
                headers = [(k, v) for k, v in scope["headers"] if k != b"content-length"]
                scope = {**scope, "headers": [*headers, (b"content-length", b"%d" % len(mapped))]}
                body = mapped
        await super().handle(scope, replay(body, receive), self.locations(send))

    def locations(self, send: Send) -> Send:
        """Location headers and stream data (JSON answers are rewritten by JsonRewrite)."""
        stream = False

        async def rewritten(message: Message) -> None:
            nonlocal stream
            if message["type"] == "http.response.start":
                stream = header(message, b"content-type").startswith(b"text/event-stream")
                message = {
                    **message,
                    "headers": [self.location(k, v) for k, v in message["headers"]],
                }
            elif stream and message.get("body"):
                message = {**message, "body": self.stream_ids(message["body"])}
            await send(message)

        return rewritten

    def location(self, name: bytes, value: bytes) -> tuple[bytes, bytes]:
        if name.lower() not in (b"location", b"content-location"):
            return name, value
        text = UUID.sub(lambda m: "id_" + m[0].replace("-", ""), value.decode("latin-1"))
        return name, text.encode("latin-1")

    def rewrite(self, body: Any) -> Any:
        return opaque_ids(body)

    @staticmethod
    def stream_ids(chunk: bytes) -> bytes:
        def data_line(match: re.Match[bytes]) -> bytes:
            try:
                data = json.loads(match[1])
            except ValueError:
                return match[0]
            return b"data: " + json.dumps(opaque_ids(data), ensure_ascii=False).encode()

        return re.sub(rb"(?m)^data: ?(.*)$", data_line, chunk)


VARIANTS: dict[str, type[Variant] | type[EventFrames]] = {
    "extra-fields": ExtraFields,
    "sse-dialect": SseDialect,
    "opaque-event-ids": OpaqueEventIds,
    "latency-150ms": Latency150ms,
    "gzip": Gzip,
    "opaque-identifiers": OpaqueIdentifiers,
}


def wrap(app: ASGIApp, name: str) -> ASGIApp:
    """The reference app with variant `name` around it."""
    try:
        return VARIANTS[name](app)
    except KeyError:
        raise ValueError(
            f"unknown variant {name!r}; known: {', '.join(sorted(VARIANTS))}"
        ) from None
