"""Mutants of a target that lacks operations (one, or a whole read): the rest answers as the
reference; what is missing is a finding on that operation's status, never a reason to stop."""

from __future__ import annotations

import json
import re

from starlette.types import Receive, Scope, Send

from assistant_conformance.proof.mutants._base import THREAD, Mutant, read_body, send_json


class ThreadSearchMissing(Mutant):
    """THR-STATUS: POST /api/ai/threads/search is not served: 405 with `Allow: GET` (the path
    matches GET /api/ai/threads/{thread_id}), whatever the credential, as a router answers before
    any handler; every other operation answers as the reference."""

    method, path = "POST", re.compile(r"/api/ai/threads/search")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        await read_body(receive)
        content = json.dumps({"detail": "Method Not Allowed"}).encode()
        headers = [
            (b"allow", b"GET"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(content)).encode()),
        ]
        await send({"type": "http.response.start", "status": 405, "headers": headers})
        await send({"type": "http.response.body", "body": content})


class ThreadCopyNotImplemented(Mutant):
    """THR-STATUS: POST /api/ai/threads/{thread_id}/copy answers 400 `{"message": "This feature is
    not yet implemented"}` for every thread (the deployed platform's answer), with a credential;
    without one, 401 as the reference."""

    method, path = "POST", re.compile(THREAD + r"/copy")

    async def mutate(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.authorized(scope):
            await self.app(scope, receive, send)
            return
        await read_body(receive)
        await send_json(send, 400, {"message": "This feature is not yet implemented"})


REGISTRY: dict[str, tuple[type[Mutant], tuple[str, ...]]] = {
    "thread-search-missing": (ThreadSearchMissing, ("THR-STATUS",)),
    "thread-copy-not-implemented": (ThreadCopyNotImplemented, ("THR-STATUS",)),
}
