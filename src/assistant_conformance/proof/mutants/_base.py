"""What every mutant is made of: the base class, ASGI helpers, and the bases of mutant families."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assistant_conformance.contract.openapi import KB_PREFIXES
from assistant_conformance.reference.auth import replay

PERMISSIONS = ("private", "organization", "public")


@dataclass(frozen=True)
class Bound:
    """What the suite must still do against a hostile mutant (the kill table measures it): end
    within `seconds` (server start included), peak at most `peak_mib` of memory, exit `exit`."""

    seconds: float = 120.0  # a hostile target may cost two minutes more than a normal one
    peak_mib: float = 512.0
    exit: int = 1  # 1: the finding is a MUST failure


class Mutant:
    """Base: passes everything through; a subclass changes the requests `applies` selects."""

    method = ""
    path = re.compile(r"$^")
    bound: Bound | None = None  # a hostile mutant's bound on the run (hostile.py)
    kept: tuple[str, ...] = ()  # requirements its run must pass, beside catching its own
    timed = False  # caught in timing the workers share (deadlines): the self-tests spread its run

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.applies(scope):
            await self.mutate(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    @property
    def state(self) -> Any:
        """The reference app's state, also through other mutants (so mutants stack)."""
        return self.app.state  # type: ignore[attr-defined]

    def applies(self, scope: Scope) -> bool:
        return scope["method"] == self.method and bool(self.path.fullmatch(scope["path"]))

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)

    def authorized(self, scope: Scope) -> bool:
        """Whether the request carries one of the reference's tokens (so auth stays as it was)."""
        header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        scheme, _, credential = header.partition(" ")
        tokens = self.state.context.settings.tokens
        return scheme.lower() == "bearer" and credential.strip() in tokens

    def a_token(self) -> str:
        return next(iter(self.state.context.settings.tokens))


async def read_body(receive: Receive) -> bytes:
    chunks, more = [], True
    while more:
        message = await receive()
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    return b"".join(chunks)


def with_header(scope: Scope, name: bytes, value: bytes) -> Scope:
    headers = [(k, v) for k, v in scope["headers"] if k != name] + [(name, value)]
    return {**scope, "headers": headers}


async def send_json(send: Send, status: int, body: Any) -> None:
    content = json.dumps(body).encode() if body is not None else b""
    headers = [(b"content-type", b"application/json")] if body is not None else []
    headers.append((b"content-length", str(len(content)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": content})


class KbWrite(Mutant):
    """Base: applies to knowledge-base creates and updates (POST and PUT), under either prefix."""

    path = re.compile(KB_PREFIXES + r"(?:/[^/]+)?")

    def applies(self, scope: Scope) -> bool:
        return scope["method"] in ("POST", "PUT") and bool(self.path.fullmatch(scope["path"]))


class JsonAnswer(Mutant):
    """Base: the app answers as usual, then `rewrite` changes its JSON answer on the way back."""

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        start, content = await answer_of(self.app, scope, await read_body(receive))
        body = json_or_none(content)
        if body is not None and 200 <= start["status"] < 300:
            content = json.dumps(self.rewrite(body)).encode()
        await send_answer(send, start, start["status"], content)

    def rewrite(self, body: Any) -> Any:
        return body


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
    except (ValueError, RecursionError):  # nested too deep to read (the suite sends such bodies)
        return None


class SuccessStatusChanged(Mutant):
    """Base: the operation answers `now` where the contract says `was`; the body is unchanged."""

    was, now = 0, 0

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        start, content = await answer_of(self.app, scope, await read_body(receive))
        status = self.now if start["status"] == self.was else start["status"]
        await send_answer(send, start, status, content)


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


RUN_TERMINAL = ("success", "error", "timeout", "interrupted")
ERROR_500 = {"statusCode": 500, "message": "Internal server error"}
DELETED = {"raw": [], "affected": 1}  # the reference's answer to a delete


def not_found_body(what: str) -> dict[str, Any]:
    return {"statusCode": 404, "message": f"{what} not found", "error": "Not Found"}


class JsonRequest(Mutant):
    """Base: `change` rewrites the JSON request body before the app reads it (same object: kept)."""

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        data = json_or_none(body)
        changed = self.change(data)
        if changed is not data:
            body = json.dumps(changed).encode()
            scope = with_header(scope, b"content-length", str(len(body)).encode())
        await self.app(scope, replay(body, receive), send)

    def change(self, data: Any) -> Any:
        return data


class DeleteKeeps(Mutant):
    """Base: DELETE answers `status` and `body` for what `probe` finds, and removes nothing."""

    method, status = "DELETE", 200
    body: Any = DELETED

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        start, content = await answer_of(self.app, as_request(scope, "GET", self.probe(path)))
        if start["status"] == 200 and self.found(path, json_or_none(content)):
            await send_json(send, self.status, self.body)
            return
        await self.app(scope, receive, send)

    def probe(self, path: str) -> str:
        return path  # the resource's own GET

    def found(self, path: str, body: Any) -> bool:
        return True
