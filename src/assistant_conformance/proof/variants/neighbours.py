"""Variants whose collections hold more than one client's doing: a run list of every thread, a
neighbour writing as the run's own principal all run long, chat-kit sessions given to any body.
The document says none of a list, search or count holds only what one client made."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import uuid
from collections import deque
from typing import Any
from urllib.parse import parse_qs

import httpx
from starlette.types import ASGIApp, Receive, Scope, Send

from assistant_conformance.proof.mutants._base import (
    THREAD,
    answer_of,
    read_body,
    replay,
    send_answer,
    with_header,
)
from assistant_conformance.proof.variants._base import Variant
from assistant_conformance.reference._agents import ASSISTANTS
from assistant_conformance.reference.auth import principal_for

RUN_LIST = re.compile(rf"{THREAD}/runs")
CHATKIT = "/api/ai/v1/chatkit/sessions"
SPREAD = ("-n", "2")  # the suite's own workers: each other's traffic is part of the case
TICK = 0.025  # seconds between two writes of the neighbour
NEIGHBOUR_KEEPS = 20  # the neighbour keeps this many of each thing it made, deleting older ones


class EveryThreadRuns(Variant):
    """A thread's run list (GET .../threads/{id}/runs) lists every run of the principal, of all
    its threads, newest first, paged by limit and offset (each run names its `thread_id`): the
    document does not say the list holds only that thread's runs. An unknown thread is refused
    as the reference refuses it."""

    timed = True

    pytest_args = SPREAD

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "GET" or not RUN_LIST.fullmatch(scope["path"]):
            await self.app(scope, receive, send)
            return
        start, content = await answer_of(self.app, scope)
        if start["status"] != 200:  # the credential, the thread or the paging refused
            await send_answer(send, start, start["status"], content)
            return
        query = {k: v[-1] for k, v in parse_qs(scope["query_string"].decode()).items()}
        limit, offset, status = int(query["limit"]), int(query["offset"]), query.get("status")
        runs = [run for run in reversed(self.runs_of(scope)) if status in (None, run["status"])]
        page = [{k: v for k, v in run.items() if not k.startswith("_")} for run in runs]
        await send_answer(send, start, 200, json.dumps(page[offset : offset + limit]).encode())

    def runs_of(self, scope: Scope) -> list[dict[str, Any]]:
        context = self.app.state.context  # type: ignore[attr-defined]
        header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        owner = principal_for(header or None, context.settings.tokens, context.db)
        return context.db.list("run", owner) if owner else []


class BusyNeighbour(Variant):
    """Another client of the run's own principal (its first token: a CI token shared with others)
    writes all run long, from a task of the server process, one write every 25 ms: threads (its
    own metadata), runs on them, store items (its own namespace), conversations and messages,
    each deleted again once it has made 20 more; and every other write an assistant of its own
    added to the catalogue or one of them taken away (as an admin's client would: the document has
    no assistant create). It carries none of the run's marks: every collection the run reads that
    is not filtered to what the run made changes under it."""

    timed = True

    pytest_args = SPREAD

    def __init__(self, app: ASGIApp) -> None:
        super().__init__(app)
        self.task: asyncio.Task[None] | None = None

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.task is None:  # from the first request on (the run's pre-flight), to the end
            self.task = asyncio.get_running_loop().create_task(self.neighbour())
        await self.app(scope, receive, send)

    async def neighbour(self) -> None:
        context = self.app.state.context  # type: ignore[attr-defined]
        token = next(iter(context.settings.tokens))
        transport = httpx.ASGITransport(app=self.app)
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(
            transport=transport, base_url="http://neighbour", headers=headers, timeout=30
        ) as client:
            made: dict[str, deque[Any]] = {name: deque() for name in WRITES_BY_NAME}
            for tick in itertools.count():
                name = WRITES[tick % len(WRITES)]
                # a neighbour's failure is its own: the next tick writes again
                with contextlib.suppress(httpx.HTTPError, ValueError, KeyError, IndexError):
                    await WRITES_BY_NAME[name](client, made, tick)
                await asyncio.sleep(TICK)


async def _thread(client: httpx.AsyncClient, made: dict[str, deque[Any]], tick: int) -> None:
    answer = await client.post("/api/ai/threads", json={"metadata": {"neighbour": tick}})
    made["thread"].append(answer.json()["thread_id"])
    if len(made["thread"]) > NEIGHBOUR_KEEPS:
        await client.delete(f"/api/ai/threads/{made['thread'].popleft()}")


async def _run(client: httpx.AsyncClient, made: dict[str, deque[Any]], tick: int) -> None:
    thread = made["thread"][-1]
    body = {"assistant_id": "echo", "input": {"text": f"neighbour {tick}"}}
    await client.post(f"/api/ai/threads/{thread}/runs", json=body)


async def _store(client: httpx.AsyncClient, made: dict[str, deque[Any]], tick: int) -> None:
    item = {"namespace": ["neighbour", str(tick % 3)], "key": f"k{tick}"}
    await client.put("/api/ai/store/items", json={**item, "value": {"tick": tick}})
    made["store"].append(item)
    if len(made["store"]) > NEIGHBOUR_KEEPS:
        await client.request("DELETE", "/api/ai/store/items", json=made["store"].popleft())


async def _conversation(client: httpx.AsyncClient, made: dict[str, deque[Any]], tick: int) -> None:
    answer = await client.post("/api/ai/conversations", json={"title": f"neighbour {tick}"})
    made["conversation"].append(answer.json()["id"])
    if len(made["conversation"]) > NEIGHBOUR_KEEPS:
        await client.delete(f"/api/ai/conversations/{made['conversation'].popleft()}")


async def _message(client: httpx.AsyncClient, made: dict[str, deque[Any]], tick: int) -> None:
    conversation = made["conversation"][-1]
    body = {"role": "user", "content": f"neighbour {tick}"}
    await client.post(f"/api/ai/conversations/{conversation}/messages", json=body)


async def _assistant(client: httpx.AsyncClient, made: dict[str, deque[Any]], tick: int) -> None:
    """One assistant more, or (with NEIGHBOUR_KEEPS of them) one of them less: the catalogue's
    count and what search finds change at every such write."""
    if len(made["assistant"]) < NEIGHBOUR_KEEPS:
        added = {**ASSISTANTS[-1], "assistant_id": str(uuid.uuid4()), "graph_id": "counter"}
        added.update(name=f"neighbour {tick}", metadata={"neighbour": tick})
        ASSISTANTS.append(added)
        made["assistant"].append(added)
    else:  # any of its own, as another client's clean-up would
        made["assistant"].rotate(-(tick % NEIGHBOUR_KEEPS))
        ASSISTANTS.remove(made["assistant"].popleft())


WRITES_BY_NAME = {
    "thread": _thread,
    "run": _run,
    "store": _store,
    "conversation": _conversation,
    "message": _message,
    "assistant": _assistant,
}
# Every other write is an assistant's, the rest in turn.
WRITES = tuple(w for name in WRITES_BY_NAME if name != "assistant" for w in (name, "assistant"))


class ChatkitFree(Variant):
    """A chat-kit session is made for any body its create is sent (a body the reference would
    refuse is read as `{}`: a session of the default lifetime), as a server that reads no field
    of it: the suite's generated and robustness cases, on its other workers, make sessions too.

    Taking a body that breaks the suite's reading of it is a SHOULD warned (ROBUST-BAD-INPUT-4XX):
    that warning is true, and allowed; every MUST, CHATKIT-STATUS among them, is judged and met."""

    timed = True

    pytest_args = SPREAD
    warns = ("ROBUST-BAD-INPUT-4XX",)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST" or scope["path"] != CHATKIT:
            await self.app(scope, receive, send)
            return
        raw = await read_body(receive)
        start, content = await answer_of(self.app, scope, raw)
        if start["status"] in (400, 413, 415, 422):  # the body refused: made with none instead
            empty = with_header(scope, b"content-length", b"2")
            empty = with_header(empty, b"content-type", b"application/json")
            await self.app(empty, replay(b"{}", receive), send)
            return
        await send_answer(send, start, start["status"], content)
