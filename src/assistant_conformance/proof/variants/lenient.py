"""A variant that validates nothing, as the deployed system this interface was written from.

It takes what it can use and defaults what is missing, where the reference answers 400:
- the "required" query parameters `limit`/`offset` (10/0), `start`/`end` (all time) and `ids`
  (no document: an empty list) may be missing or not numbers;
- a Knowledgebase body is stored as given: values outside `permission`/`type`, identifiers that
  are not UUIDs and fields of another JSON type are answered back as sent; a missing body is `{}`;
- bulk takes an object as one document and anything else as none; process takes the strings it
  is given (a lone id as a list of one) and ignores the rest.

The document states no rejection (errors are "not shown"), so the suite must give this variant no
MUST failure, only SHOULD warnings, and the certification level `full`.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.types import Message, Receive, Scope, Send

from assistant_conformance.contract.openapi import KB_PREFIXES
from assistant_conformance.proof.mutants import read_body
from assistant_conformance.proof.mutants._base import replay
from assistant_conformance.proof.variants._base import KB_WRITE, Variant, is_json_start, send_whole

BULK = re.compile(rf"{KB_PREFIXES}/[^/]+/bulk")
PROCESS = re.compile(rf"{KB_PREFIXES}/[^/]+/process")
KB_STATUS = re.compile(rf"{KB_PREFIXES}/[^/]+/status")
PAGED = re.compile(r"/api/ai/(?:threads/[^/]+/runs|conversations/[^/]+/messages)")
USAGE_PATH = re.compile(r"/api/ai/threads/[^/]+/usage")
DEFAULTS = {
    "limit": "10",
    "offset": "0",
    "start": "1970-01-01 00",
    "end": "9999-12-31 23",
    "ids": "none",  # names no document: the reference answers an empty list
}
ALLOWED = {"permission": ("private", "organization", "public"), "type": ("standard", "external")}
OBJECTS = ("recall", "parserConfig", "copilotModel")
UUIDS = ("workspaceId", "integrationId")


class NoValidation(Variant):
    """Validates nothing: missing query parameters defaulted, KB bodies stored as given."""

    warnings_allowed = True  # SHOULD warnings only, and certification `full`

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        method, path = scope["method"], scope["path"]
        if method == "GET":
            wanted: tuple[str, ...] = ("limit", "offset") if PAGED.fullmatch(path) else ()
            wanted = ("start", "end") if USAGE_PATH.fullmatch(path) else wanted
            wanted = ("ids",) if KB_STATUS.fullmatch(path) else wanted
            await self.app(self._defaulted(scope, wanted), receive, send)
            return
        if method not in ("POST", "PUT") or not KB_WRITE.match(path):
            await self.app(scope, receive, send)
            return
        raw = await read_body(receive)
        body = _json(raw)
        if BULK.fullmatch(path):
            used: Any = body if isinstance(body, list) else [body] if isinstance(body, dict) else []
            restore: dict[str, Any] = {}
        elif PROCESS.fullmatch(path):
            listed = body if isinstance(body, list) else [body]
            used, restore = [i for i in listed if isinstance(i, str)], {}
        elif KB_WRITE.fullmatch(path):
            used, restore = usable_kb(body if isinstance(body, dict) else {})
        else:
            await self.app(scope, replay(raw, receive), send)
            return
        content = json.dumps(used).encode()
        scope = _with_json(scope, len(content))
        await self.app(scope, replay(content, receive), _restoring(send, restore))

    def _query(self, scope: Scope) -> dict[str, str]:
        return dict(parse_qsl(scope.get("query_string", b"").decode(), keep_blank_values=True))

    def _defaulted(self, scope: Scope, names: tuple[str, ...]) -> Scope:
        query = self._query(scope)
        for name in names:
            value = query.get(name, "")
            numeric = name in ("limit", "offset")
            if name not in query or not value or (numeric and not value.isdigit()):
                query[name] = DEFAULTS[name]
        return {**scope, "query_string": urlencode(query).encode()}


def usable_kb(body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The body the reference accepts, and the values as sent that it replaced (answered back)."""
    used, restore = dict(body), {}
    for name, allowed in ALLOWED.items():
        if name in body and body[name] not in allowed:
            used[name], restore[name] = allowed[0], body[name]
    for name in UUIDS:
        if name in body and not _is_uuid(body[name]):
            used[name], restore[name] = (
                str(uuid.uuid5(uuid.NAMESPACE_URL, str(body[name]))),
                body[name],
            )
    for name in OBJECTS:
        if name in body and not isinstance(body[name], dict):
            restore[name] = used.pop(name)
    for name in ("name", "description", "extKnowledgebaseId"):
        if name in body and not isinstance(body[name], str):
            used[name], restore[name] = json.dumps(body[name]), body[name]
    return used, restore


def _restoring(send: Send, restore: dict[str, Any]) -> Send:
    """Answer the stored knowledge base with the values as they were sent."""
    if not restore:
        return send
    start: Message = {}
    chunks: list[bytes] = []

    async def restoring(message: Message) -> None:
        if message["type"] == "http.response.start":
            start.update(message)
            if not is_json_start(message):
                await send(message)
            return
        if not is_json_start(start):
            await send(message)
            return
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            answer = _json(b"".join(chunks))
            if isinstance(answer, dict) and "id" in answer:
                answer = {**answer, **restore}
            await send_whole(send, start, json.dumps(answer).encode())

    return restoring


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw.strip() else None
    except (ValueError, RecursionError):  # not JSON, or nested too deep: nothing it can use
        return None


def _is_uuid(value: Any) -> bool:
    try:
        return isinstance(value, str) and str(uuid.UUID(value)) == value.lower()
    except ValueError:
        return False


def _with_json(scope: Scope, length: int) -> Scope:
    names = (b"content-type", b"content-length")
    headers = [(k, v) for k, v in scope["headers"] if k.lower() not in names]
    headers += [(b"content-type", b"application/json"), (b"content-length", b"%d" % length)]
    return {**scope, "headers": headers}
