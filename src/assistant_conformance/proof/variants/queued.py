"""Variants that behave as queue-backed servers do: a run's status stored a moment after
its stream's end, a connection-scoped opening frame without an id on every stream, a cancel that
shows a moment late, and one run worker that takes its time."""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assistant_conformance.proof.mutants._base import RUN, RUN_TERMINAL, STREAMS, THREAD
from assistant_conformance.proof.variants._base import JsonRewrite, Variant, asgi_header

RUN_READS = re.compile(rf"{RUN}|{THREAD}/runs")
LAG = 0.2  # seconds the stored status trails the stream's end
LAGGING_EVERY = 3  # the first run whose stream ends lags, then every third
RUN_WORKERS, START_COST = 1, 1.0  # slow-wait-under-load: runs executing at once; seconds each


def streaming(scope: Scope) -> bool:
    return scope["method"] in ("GET", "POST") and bool(STREAMS.fullmatch(scope["path"]))


def stream_run_id(start: Message, scope: Scope) -> str:
    """The run a stream answer is of: its Content-Location, else the join's path."""
    where = asgi_header(start, b"content-location").decode("latin-1") or scope["path"]
    match = re.search(r"/runs/([^/]+)(?:/stream)?$", where)
    return match[1] if match and match[1] != "stream" else ""


class StatusLagsStreamEnd(JsonRewrite):
    """After a run's stream has sent its end, GET of the run (and the run list) still says
    `running` for 200 ms, in the first run whose stream ends and every third after it, as a
    queue-backed server whose worker publishes the end before it stores the status: the document
    states no order between the two."""

    timed = True

    def __init__(self, app: ASGIApp) -> None:
        super().__init__(app)
        self.ended: set[str] = set()  # runs whose end a stream has sent
        self.lagging: dict[str, float] = {}  # run id -> when its status is stored

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if streaming(scope):
            await self.app(scope, receive, self.watching(scope, send))
        elif scope["method"] == "GET" and RUN_READS.fullmatch(scope["path"]):
            await super().handle(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    def watching(self, scope: Scope, send: Send) -> Send:
        run = ""

        async def watched(message: Message) -> None:
            nonlocal run
            if message["type"] == "http.response.start":
                event_stream = asgi_header(message, b"content-type").startswith(
                    b"text/event-stream"
                )
                run = stream_run_id(message, scope) if event_stream else ""
            elif run and (
                b"event: end" in message.get("body", b"") or not message.get("more_body")
            ):
                self.end(run)  # before the client can read the end
            await send(message)

        return watched

    def end(self, run: str) -> None:
        if run in self.ended:
            return
        self.ended.add(run)
        if (len(self.ended) - 1) % LAGGING_EVERY == 0:
            self.lagging[run] = time.monotonic() + LAG

    def rewrite(self, body: Any) -> Any:
        if isinstance(body, list):
            return [self.rewrite(run) for run in body]
        if not isinstance(body, dict) or body.get("status") not in RUN_TERMINAL:
            return body
        stored_at = self.lagging.get(str(body.get("run_id")), 0.0)
        return {**body, "status": "running"} if time.monotonic() < stored_at else body


class IdlessOpeningFrame(Variant):
    """Every stream connection (POST runs/stream, join, replay) opens with an extra `event:
    metadata` frame without an `id:`, its data `{"run_id": ..., "attempt": N}`, N counting the
    connections to that run; every event with an id is sent as the reference sends it. An event
    without an id names nothing a client can resume from (WHATWG HTML §9.2)."""

    def __init__(self, app: ASGIApp) -> None:
        super().__init__(app)
        self.attempts: Counter[str] = Counter()

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not streaming(scope):
            await self.app(scope, receive, send)
            return
        opening = b""

        async def opened(message: Message) -> None:
            nonlocal opening
            if message["type"] == "http.response.start":
                run = stream_run_id(message, scope)
                if run and asgi_header(message, b"content-type").startswith(b"text/event-stream"):
                    self.attempts[run] += 1
                    data = json.dumps({"run_id": run, "attempt": self.attempts[run]}).encode()
                    opening = b"event: metadata\ndata: " + data + b"\n\n"
            elif opening:
                message, opening = {**message, "body": opening + message.get("body", b"")}, b""
            await send(message)

        await self.app(scope, receive, opened)


CANCEL = re.compile(rf"({RUN})/cancel")
SETTLES = 1.0  # seconds a cancelled run still reads `success` after its cancel was answered


class CancelSettlesLate(JsonRewrite):
    """For a second after a run's cancel, the run reads `success` where it is `interrupted` (GET of
    the run, the run list, the cancel's own answer), then `interrupted` for good: a queue-backed
    server whose worker stores the graph's end before the cancel's. The document names no
    status, nor when a cancel shows."""

    timed = True

    def __init__(self, app: ASGIApp) -> None:
        super().__init__(app)
        self.settles: dict[str, float] = {}  # run id -> when its cancel shows

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        cancel = CANCEL.fullmatch(scope["path"]) if scope["method"] == "POST" else None
        if cancel is not None:
            run = cancel[1].rsplit("/", 1)[-1]
            self.settles.setdefault(run, time.monotonic() + SETTLES)
            await super().handle(scope, receive, send)
        elif scope["method"] == "GET" and RUN_READS.fullmatch(scope["path"]):
            await super().handle(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    def rewrite(self, body: Any) -> Any:
        if isinstance(body, list):
            return [self.rewrite(run) for run in body]
        if not isinstance(body, dict) or body.get("status") != "interrupted":
            return body
        shows = self.settles.get(str(body.get("run_id")), 0.0)
        return {**body, "status": "success"} if time.monotonic() < shows else body


class SlowWaitUnderLoad(Variant):
    """A queue-backed server with one run worker, each run costing it START_COST seconds before
    its first event (a model loaded): runs wait `pending` in one queue, so a `runs/wait` sent
    while other runs are queued answers when they and it have run, however long that takes. The
    document states no time a run takes, and a server's run workers are few."""

    timed = True

    def __init__(self, app: ASGIApp) -> None:
        super().__init__(app)
        settings = app.state.context.settings  # type: ignore[attr-defined]
        settings.run_slots, settings.run_start_s = RUN_WORKERS, START_COST
