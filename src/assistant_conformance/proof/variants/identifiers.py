"""A variant whose identifiers are not UUIDs: `id_<32 hex>` in bodies, streams and headers."""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.types import Message, Receive, Scope, Send

from assistant_conformance.proof.mutants import read_body
from assistant_conformance.proof.mutants._base import replay
from assistant_conformance.proof.variants._base import JsonRewrite, asgi_header

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
                stream = asgi_header(message, b"content-type").startswith(b"text/event-stream")
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
