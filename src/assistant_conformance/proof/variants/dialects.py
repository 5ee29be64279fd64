"""Variants that speak the API as other real servers of the family do: namespaces in
objects, runs that take a plain text input, run bodies validated strictly, idle state reads that
vary. Each uses a freedom the interface document leaves (bodies "not shown", errors "not shown")."""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime
from typing import Any

from starlette.types import Receive, Scope, Send

from assistant_conformance.proof.mutants._base import (
    THREAD,
    answer_of,
    as_request,
    json_or_none,
    read_body,
    replay,
    send_answer,
    send_json,
    with_header,
)
from assistant_conformance.proof.variants._base import JsonRewrite, Variant

RUN_CREATES = re.compile(rf"({THREAD})/runs(?:/stream|/wait)?")


class JsonRewriteOf(JsonRewrite):
    """Base: JsonRewrite, on the answers of one operation only (`method`, `path`)."""

    method, path = "", re.compile(r"$^")

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] == self.method and self.path.fullmatch(scope["path"]):
            await super().handle(scope, receive, send)
            return
        await self.app(scope, receive, send)


class NamespacesInObjects(JsonRewriteOf):
    """Store namespaces are answered as `{"namespaces": [{"path": ["a", "b"]}, ...]}`, not as a
    list of lists: the document shows no body (§4.7)."""

    method, path = "POST", re.compile(r"/api/ai/store/namespaces")

    def rewrite(self, body: Any) -> Any:
        listed = body.get("namespaces") if isinstance(body, dict) else None
        if not isinstance(listed, list):
            return body
        return {**body, "namespaces": [{"path": namespace} for namespace in listed]}


class IdleReadsVary(JsonRewriteOf):
    """A thread without a checkpoint (it never ran, no state was written) answers a fresh
    `checkpoint.checkpoint_id` and `created_at` on each GET of its state, as a server that makes
    up the empty state on each read: the document shows no body (§4.7)."""

    method, path = "GET", re.compile(THREAD + r"/state")

    def rewrite(self, body: Any) -> Any:
        checkpoint = body.get("checkpoint") if isinstance(body, dict) else None
        if not isinstance(checkpoint, dict) or checkpoint.get("checkpoint_id") is not None:
            return body
        made_up = {**checkpoint, "checkpoint_id": str(uuid.uuid4())}
        return {**body, "checkpoint": made_up, "created_at": datetime.now(UTC).isoformat()}


class RunBodyChecked(Variant):
    """Base: a run create (background, stream, wait) whose JSON object body `refusal` refuses is
    answered with that refusal once the credential and the thread pass (else as the reference
    answers a read of the thread); a body it takes goes on as `taken` makes it."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = RUN_CREATES.fullmatch(scope["path"])
        if scope["method"] != "POST" or match is None:
            await self.app(scope, receive, send)
            return
        raw = await read_body(receive)
        data = json_or_none(raw)
        refused = self.refusal(data) if isinstance(data, dict) else None
        if refused is None:
            taken = self.taken(data)
            if taken is not data:
                raw = json.dumps(taken).encode()
                scope = with_header(scope, b"content-length", str(len(raw)).encode())
            await self.app(scope, replay(raw, receive), send)
            return
        start, content = await answer_of(self.app, as_request(scope, "GET", match[1]))
        if start["status"] != 200:  # the credential or the thread refused first
            await send_answer(send, start, start["status"], content)
            return
        await send_json(send, *refused)

    def refusal(self, body: dict[str, Any]) -> tuple[int, Any] | None:
        return None

    def taken(self, body: Any) -> Any:
        return body


class InputTextOnly(RunBodyChecked):
    """Runs take `{"input": "<text>"}` (the text the echo agent echoes); any other input (LangGraph
    chat messages included) is answered `201 {"message": "[ZodError ...]"}` and starts no run, as
    the platform's published agents do: the document shows no run body (§4.4)."""

    def refusal(self, body: dict[str, Any]) -> tuple[int, Any] | None:
        given = body.get("input")
        text = given.get("input") if isinstance(given, dict) else None
        if isinstance(text, str):
            return None
        received = "undefined" if text is None else type(text).__name__
        issue = {
            "code": "invalid_type",
            "expected": "string",
            "received": received,
            "path": ["input"],
            "message": f"Expected string, received {received}",
        }
        return 201, {"message": f"[ZodError: {json.dumps([issue])}]"}

    def taken(self, body: Any) -> Any:
        if not isinstance(body, dict) or not isinstance(body.get("input"), dict):
            return body
        return {**body, "input": {"text": body["input"]["input"]}}  # the echo agent's own shape


class StrictRunOptions(RunBodyChecked):
    """Run bodies (create, stream, wait) are validated: `assistant_id`, `input`, `metadata`,
    `config` and `stream_mode` are taken, any other key (`stream_resumable`, `on_disconnect`,
    `multitask_strategy`, ...) is refused with 422 naming it: the document shows no run body."""

    TAKEN = frozenset({"assistant_id", "input", "metadata", "config", "stream_mode"})

    def refusal(self, body: dict[str, Any]) -> tuple[int, Any] | None:
        unknown = [key for key in body if key not in self.TAKEN]
        if not unknown:
            return None
        said = [f"property {key} should not exist" for key in unknown]  # NestJS' whitelist words
        return 422, {"statusCode": 422, "message": said, "error": "Unprocessable Entity"}
