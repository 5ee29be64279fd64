"""Routes of runs: create, stream, wait, list, get, join, cancel, and a thread's usage."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, StreamingResponse

from ._agents import AGENTS, DEFAULT_STREAM_MODES, STREAM_MODES, find_assistant
from ._engine import RunEngine
from ._http import Options, parse_body, query_bool, query_choice, query_int
from ._records import (
    RUN_KIND,
    RUN_STATUSES,
    TERMINAL_STATUSES,
    THREAD_KIND,
    events_log,
    get_run,
    get_thread,
    new_thread,
    public,
    thread_runs,
)
from .context import context, new_id, now_iso, principal
from .db import Doc
from .errors import ApiError, bad_request, not_found

router = APIRouter()

UUID_PATTERN = re.compile(r"^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")
PRICE_PER_TOKEN_USD = 0.000002  # a fixed, made-up price: usage must be deterministic


class RunOptions(Options):
    assistant_id: str
    input: Any = None
    metadata: dict[str, Any] | None = None
    config: dict[str, Any] | None = None
    stream_mode: str | list[str] | None = None
    multitask_strategy: Literal["reject", "interrupt", "rollback", "enqueue"] | None = None
    if_not_exists: Literal["create", "reject"] | None = None
    stream_resumable: bool | None = None
    on_disconnect: Literal["cancel", "continue"] | None = None


def request_engine(request: Request) -> RunEngine:
    engine = context(request).extras["run_engine"]
    assert isinstance(engine, RunEngine)
    return engine


def _stream_modes(value: str | list[str] | None) -> list[str]:
    modes = (
        list(DEFAULT_STREAM_MODES)
        if value is None
        else [value]
        if isinstance(value, str)
        else value
    )
    unknown = [m for m in modes if m not in STREAM_MODES]
    if unknown:
        bad_request(f"stream_mode: unknown mode {unknown[0]!r}; known: {', '.join(STREAM_MODES)}")
    return modes


def run_location(run: Doc) -> dict[str, str]:
    # LangGraph's client reads the run and thread ids from this header (on_run_created).
    return {"Content-Location": f"/api/ai/threads/{run['thread_id']}/runs/{run['run_id']}"}


async def create_run(request: Request, thread_id: str) -> tuple[Doc, RunOptions]:
    """Validate everything, then store the run, its `metadata` event, and start it."""
    ctx, owner, engine = context(request), principal(request), request_engine(request)
    options = await parse_body(request, RunOptions)
    modes = _stream_modes(options.stream_mode)
    assistant = find_assistant(options.assistant_id)
    if assistant is None:
        not_found("assistant", options.assistant_id)
    AGENTS[assistant["graph_id"]].check_input(options.input)
    thread = _thread_for_run(request, thread_id, options.if_not_exists == "create")
    strategy = options.multitask_strategy or "enqueue"
    active = [
        r for r in thread_runs(ctx.db, owner, thread_id) if r["status"] not in TERMINAL_STATUSES
    ]
    if active and strategy == "reject":
        raise ApiError(409, f"thread {thread_id!r} already has an active run")
    if thread is None:
        ctx.db.put(THREAD_KIND, thread_id, owner, new_thread(owner, thread_id, {}))
    for old in active if strategy in ("interrupt", "rollback") else []:
        await engine.cancel(old["run_id"])
        if strategy == "rollback":
            ctx.db.delete(RUN_KIND, old["run_id"], owner)
            ctx.db.drop_log(events_log(old["run_id"]))
    now = now_iso()
    run = {
        "run_id": new_id(),
        "thread_id": thread_id,
        "assistant_id": assistant["assistant_id"],
        "created_at": now,
        "updated_at": now,
        "status": "pending",
        "metadata": options.metadata or {},
        "multitask_strategy": strategy,
        "kwargs": {"input": options.input, "config": options.config or {}, "stream_mode": modes},
        "_owner": owner,
        "_graph_id": assistant["graph_id"],
        "_tokens": 0,
    }
    ctx.db.put(RUN_KIND, run["run_id"], owner, run, parent=thread_id)
    engine.emit(run["run_id"], "metadata", {"run_id": run["run_id"], "attempt": 1})
    engine.start(run)
    return run, options


def _thread_for_run(request: Request, thread_id: str, create: bool) -> Doc | None:
    """The caller's thread; None when it is missing and may be created (if_not_exists=create)."""
    db, owner = context(request).db, principal(request)
    existing = db.get(THREAD_KIND, thread_id, None)
    if existing is not None and existing["_owner"] == owner:
        return existing
    if existing is None and create:
        if not UUID_PATTERN.match(thread_id):
            bad_request("thread_id must be a UUID to create the thread")
        return None
    not_found("thread", thread_id)


def resume_from(request: Request) -> int:
    """The `last-event-id` header as a number; absent, empty, -1 or junk mean "from the start"."""
    raw = (request.headers.get("last-event-id") or "").strip()
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 18 else 0


def sse_response(
    request: Request, run: Doc, status_code: int, cancel_on_disconnect: bool
) -> StreamingResponse:
    engine, run_id, after = request_engine(request), run["run_id"], resume_from(request)

    async def frames() -> Any:
        ended = False
        try:
            async for seq, event, data in engine.events(run_id, after):
                yield f"id: {seq}\nevent: {event}\ndata: {json.dumps(data)}\n\n"
            ended = True
        finally:
            if not ended and cancel_on_disconnect:
                engine.request_cancel(run_id)

    headers = {"Cache-Control": "no-store", **run_location(run)}
    return StreamingResponse(
        frames(), status_code=status_code, media_type="text/event-stream", headers=headers
    )


@router.post("/threads/{thread_id}/runs", status_code=201)
async def create_background_run(request: Request, thread_id: str) -> JSONResponse:
    run, _ = await create_run(request, thread_id)
    return JSONResponse(public(run), status_code=201, headers=run_location(run))


@router.post("/threads/{thread_id}/runs/stream", status_code=201)
async def post_run_stream(request: Request, thread_id: str) -> StreamingResponse:
    run, options = await create_run(request, thread_id)
    return sse_response(request, run, 201, options.on_disconnect == "cancel")


@router.post("/threads/{thread_id}/runs/wait", status_code=201)
async def wait_run(request: Request, thread_id: str) -> JSONResponse:
    run, _ = await create_run(request, thread_id)
    await request_engine(request).wait(run["run_id"])
    db, owner = context(request).db, principal(request)
    final = db.get(RUN_KIND, run["run_id"], owner)
    thread = get_thread(db, owner, thread_id)
    if final is not None and final["status"] == "error":
        body: Any = {"__error__": final.get("_error", {})}  # LangGraph's shape for a failed run
    else:
        body = thread["values"]
    return JSONResponse(body, status_code=201, headers=run_location(run))


@router.get("/threads/{thread_id}/runs")
async def list_runs(request: Request, thread_id: str) -> list[Doc]:
    limit, offset = query_int(request, "limit"), query_int(request, "offset")
    status = request.query_params.get("status")
    if status is not None and status not in RUN_STATUSES:
        bad_request(f"query parameter status must be one of {', '.join(RUN_STATUSES)}")
    db, owner = context(request).db, principal(request)
    get_thread(db, owner, thread_id)
    runs = [r for r in reversed(thread_runs(db, owner, thread_id)) if status in (None, r["status"])]
    return [public(r) for r in runs[offset : offset + limit]]


@router.get("/threads/{thread_id}/runs/{run_id}")
async def read_run(request: Request, thread_id: str, run_id: str) -> Doc:
    return public(get_run(context(request).db, principal(request), thread_id, run_id))


@router.get("/threads/{thread_id}/runs/{run_id}/stream")
async def join_run(request: Request, thread_id: str, run_id: str) -> StreamingResponse:
    cancel = query_bool(request, "cancel_on_disconnect", False)
    run = get_run(context(request).db, principal(request), thread_id, run_id)
    return sse_response(request, run, 200, cancel)


@router.post("/threads/{thread_id}/runs/{run_id}/cancel", status_code=201)
async def cancel_run(request: Request, thread_id: str, run_id: str) -> Doc:
    query_bool(request, "wait", False)  # cancelling always waits: it is quick
    action = query_choice(request, "action", ("interrupt", "rollback"), "interrupt")
    db, owner = context(request).db, principal(request)
    get_run(db, owner, thread_id, run_id)
    await request_engine(request).cancel(run_id)
    run = get_run(db, owner, thread_id, run_id)
    if action == "rollback":
        db.delete(RUN_KIND, run_id, owner)
        db.drop_log(events_log(run_id))
    return public(run)


# --- usage -------------------------------------------------------------------------------

HOUR_PATTERN = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}$")


def _usage_bound(request: Request, name: str) -> tuple[datetime, bool]:
    """The bound as a UTC datetime and whether it is a whole hour (`yyyy-MM-dd HH`)."""
    raw = (request.query_params.get(name) or "").strip()
    if not raw:
        bad_request(f"query parameter {name} is required")
    try:
        if HOUR_PATTERN.match(raw):
            return datetime.strptime(raw, "%Y-%m-%d %H").replace(tzinfo=UTC), True
        moment = datetime.fromisoformat(raw)
        return (moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)), False
    except (ValueError, OverflowError):
        bad_request(f"query parameter {name} must be an ISO 8601 date-time or yyyy-MM-dd HH")


@router.get("/threads/{thread_id}/usage")
async def usage(request: Request, thread_id: str) -> list[Doc]:
    start, _ = _usage_bound(request, "start")
    end, end_is_hour = _usage_bound(request, "end")
    if start > end:
        bad_request("start must not be after end")
    db, owner, engine = context(request).db, principal(request), request_engine(request)
    get_thread(db, owner, thread_id)
    tokens = 0
    for run in thread_runs(db, owner, thread_id):
        created = datetime.fromisoformat(run["created_at"])
        # An end written as an hour covers all of that hour.
        last = created.replace(minute=0, second=0, microsecond=0) if end_is_hour else created
        if start <= created and last <= end:
            tokens += engine.tokens.get(run["run_id"], run.get("_tokens") or 0)
    price = round(tokens * PRICE_PER_TOKEN_USD, 10)
    return [{"currency": "USD", "tokenUsed": tokens, "priceUsed": price}]
