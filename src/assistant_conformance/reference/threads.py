"""Routes of the reference server: threads, their state and history, runs, assistants, the store.

Threads, runs and checkpoints follow LangGraph's shapes (see _records.py); runs execute in the
background engine (_engine.py) with agents from a fixed catalogue (_agents.py): graph "echo"
(assistant e809e711-7ffe-5960-821d-7d83c173c321) and graph "counter" (assistant
3c2ddcc0-8014-58a3-be2e-582ab4be4c07); either id or graph name works as a run's assistant_id.

A run's stream: `metadata` {run_id, attempt}, then the agent's events in the modes its stream_mode
asks for, each as LangGraph's servers send it (_streams.py: `values`, `updates`, `custom`;
`messages` pairs for `messages-tuple`; `messages/metadata`, `messages/partial` and
`messages/complete` for `messages`; `values` alone when it names none), then `end` (preceded by
`error` {error, message} when the run fails or the server stopped under it).
Frames are `id: N` (the event's sequence number in the run, 1, 2, ...), `event:`, `data:` JSON.
"""

from __future__ import annotations

from contextlib import closing
from itertools import islice
from typing import Any, Literal

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool
from pydantic import Field

from . import _assistants, _runs, _store
from ._engine import RunEngine
from ._http import Options, is_subset, parse_body, sort_docs
from ._input import MAX_COUNT
from ._records import (
    RUN_KIND,
    TERMINAL_STATUSES,
    THREAD_KIND,
    add_checkpoint,
    checkpoint_ref,
    checkpoints,
    checkpoints_log,
    events_log,
    get_thread,
    new_thread,
    public,
    save_thread,
    state_view,
    thread_runs,
)
from .context import Context, context, new_id, principal
from .db import Database, Doc, narrows
from .errors import ApiError, bad_request, not_found

router = APIRouter(prefix="/api/ai")


class ThreadCreate(Options):
    thread_id: str | None = None
    metadata: dict[str, Any] | None = None
    if_exists: Literal["raise", "do_nothing"] | None = None


class ThreadSearch(Options):
    metadata: dict[str, Any] | None = None
    values: dict[str, Any] | None = None
    status: Literal["idle", "busy", "interrupted", "error"] | None = None
    ids: list[str] | None = None
    limit: int = Field(10, ge=1, le=MAX_COUNT)
    offset: int = Field(0, ge=0, le=MAX_COUNT)
    sort_by: Literal["thread_id", "status", "created_at", "updated_at"] | None = None
    sort_order: Literal["asc", "desc"] | None = None


class ThreadPatch(Options):
    metadata: dict[str, Any] | None = None


class StateUpdate(Options):
    values: dict[str, Any] | None = None
    as_node: str | None = None
    checkpoint_id: str | None = None
    checkpoint: dict[str, Any] | None = None


class HistoryQuery(Options):
    limit: int = Field(10, ge=0, le=MAX_COUNT)
    before: str | dict[str, Any] | None = None
    checkpoint: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None


# --- threads -----------------------------------------------------------------------------


@router.post("/threads", status_code=201)
async def post_thread(request: Request) -> Doc:
    db, owner = context(request).db, principal(request)
    options = await parse_body(request, ThreadCreate)
    thread_id = options.thread_id or new_id()
    if not _runs.UUID_PATTERN.match(thread_id):
        bad_request("thread_id must be a UUID")
    existing = db.get(THREAD_KIND, thread_id, None)
    if existing is not None:
        if existing["_owner"] == owner and options.if_exists == "do_nothing":
            return public(existing)
        raise ApiError(409, f"thread {thread_id!r} already exists")
    thread = new_thread(owner, thread_id, options.metadata or {})
    return public(db.put(THREAD_KIND, thread_id, owner, thread))


@router.post("/threads/search")
async def search_threads(request: Request) -> list[Doc]:
    db, owner = context(request).db, principal(request)
    options = await parse_body(request, ThreadSearch)
    return await run_in_threadpool(_search_threads, db, owner, options)


def _search_threads(db: Database, owner: str, options: ThreadSearch) -> list[Doc]:
    """Newest first, narrowed by the index, read on a worker thread (off the event loop)."""
    equals = {"status": options.status} if options.status else {}
    for field in ("metadata", "values"):
        wanted = getattr(options, field) or {}
        equals |= {f"{field}.{k}": v for k, v in wanted.items() if narrows(v)}
    with closing(db.scan(THREAD_KIND, owner, equals)) as threads:
        found = (
            t
            for t in threads
            if is_subset(options.metadata or {}, t["metadata"])
            and is_subset(options.values or {}, t["values"])
            and options.status in (None, t["status"])
            and (options.ids is None or t["thread_id"] in options.ids)
        )
        if options.sort_by:
            chosen = sort_docs(list(found), options.sort_by, options.sort_order)
            chosen = chosen[options.offset : options.offset + options.limit]
        else:
            chosen = list(islice(found, options.offset, options.offset + options.limit))
    return [public(t) for t in chosen]


@router.get("/threads/{thread_id}")
async def read_thread(request: Request, thread_id: str) -> Doc:
    return public(get_thread(context(request).db, principal(request), thread_id))


@router.patch("/threads/{thread_id}")
async def patch_thread(request: Request, thread_id: str) -> Doc:
    db = context(request).db
    options = await parse_body(request, ThreadPatch)
    # Read after the last await, so a run finishing meanwhile is not overwritten.
    thread = get_thread(db, principal(request), thread_id)
    metadata = {**thread["metadata"], **(options.metadata or {})}
    return public(save_thread(db, thread, metadata=metadata))


@router.delete("/threads/{thread_id}", status_code=202)
async def delete_thread(request: Request, thread_id: str) -> Response:
    ctx, owner = context(request), principal(request)
    get_thread(ctx.db, owner, thread_id)
    engine = engine_of(ctx)
    for run in thread_runs(ctx.db, owner, thread_id):
        if run["status"] not in TERMINAL_STATUSES:
            await engine.cancel(run["run_id"])
        ctx.db.drop_log(events_log(run["run_id"]))
    ctx.db.delete_children(RUN_KIND, thread_id)
    ctx.db.drop_log(checkpoints_log(thread_id))
    ctx.db.delete(THREAD_KIND, thread_id, owner)
    engine.thread_locks.pop(thread_id, None)
    return Response(status_code=202)


@router.post("/threads/{thread_id}/copy", status_code=201)
async def copy_thread(request: Request, thread_id: str) -> Doc:
    db, owner = context(request).db, principal(request)
    source = get_thread(db, owner, thread_id)
    copy = new_thread(owner, new_id(), dict(source["metadata"]), dict(source["values"]))
    db.copy_log(checkpoints_log(thread_id), checkpoints_log(copy["thread_id"]))
    return public(db.put(THREAD_KIND, copy["thread_id"], owner, copy))


# --- state and history -------------------------------------------------------------------


@router.get("/threads/{thread_id}/state")
async def read_state(request: Request, thread_id: str) -> Doc:
    db = context(request).db
    get_thread(db, principal(request), thread_id)
    history = checkpoints(db, thread_id)
    return state_view(thread_id, history[-1] if history else None)


@router.get("/threads/{thread_id}/state/{checkpoint_id}")
async def read_state_at(request: Request, thread_id: str, checkpoint_id: str) -> Doc:
    """Extension (LangGraph's get_state(checkpoint_id=...)): the state at one checkpoint."""
    db = context(request).db
    get_thread(db, principal(request), thread_id)
    return state_view(thread_id, _find_checkpoint(checkpoints(db, thread_id), checkpoint_id))


@router.post("/threads/{thread_id}/state", status_code=201)
async def update_state(request: Request, thread_id: str) -> Doc:
    db = context(request).db
    options = await parse_body(request, StateUpdate)
    thread = get_thread(db, principal(request), thread_id)
    if thread["status"] == "busy":
        raise ApiError(409, f"thread {thread_id!r} is busy with a run")
    history = checkpoints(db, thread_id)
    base_id = options.checkpoint_id or (options.checkpoint or {}).get("checkpoint_id")
    base = _find_checkpoint(history, base_id) if base_id else (history[-1] if history else None)
    values = {**(base["values"] if base else thread["values"]), **(options.values or {})}
    writes = {options.as_node or "__update__": options.values}
    entry = add_checkpoint(db, thread_id, values, {"source": "update", "writes": writes})
    save_thread(db, thread, values=values)
    return {"checkpoint": checkpoint_ref(thread_id, entry["checkpoint_id"])}


@router.post("/threads/{thread_id}/history", status_code=201)
async def read_history(request: Request, thread_id: str) -> list[Doc]:
    db = context(request).db
    get_thread(db, principal(request), thread_id)
    options = await parse_body(request, HistoryQuery)
    history = checkpoints(db, thread_id)
    if options.before is not None:
        before = options.before
        before_id = before if isinstance(before, str) else before.get("checkpoint_id")
        if not isinstance(before_id, str):
            bad_request("before must be a checkpoint id or {checkpoint_id}")
        history = history[: history.index(_find_checkpoint(history, before_id))]
    matching = [e for e in reversed(history) if is_subset(options.metadata or {}, e["metadata"])]
    return [state_view(thread_id, e) for e in matching[: options.limit]]


def _find_checkpoint(history: list[Doc], checkpoint_id: Any) -> Doc:
    for entry in history:
        if entry["checkpoint_id"] == checkpoint_id:
            return entry
    not_found("checkpoint", str(checkpoint_id))


# --- wiring ------------------------------------------------------------------------------


def engine_of(ctx: Context) -> RunEngine:
    engine = ctx.extras["run_engine"]
    assert isinstance(engine, RunEngine)
    return engine


router.include_router(_runs.router)
router.include_router(_assistants.router)
router.include_router(_store.router)


async def on_startup(ctx: Context) -> None:
    engine = RunEngine(ctx)
    engine.recover()
    ctx.extras["run_engine"] = engine


async def on_shutdown(ctx: Context) -> None:
    engine = ctx.extras.get("run_engine")
    if isinstance(engine, RunEngine):
        await engine.stop()
