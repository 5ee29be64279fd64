"""The run engine: executes runs in the background and feeds their event logs to streams.

State lives in the database; the engine only keeps asyncio handles (tasks, per-thread locks that
queue runs of one thread, and "bells" that wake streams when an event was appended). Every event
is appended to the log before any stream can see it, so a stream is the log, replayed then tailed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from ._agents import AGENTS, ReferenceAgent
from ._records import (
    RUN_KIND,
    TERMINAL_STATUSES,
    THREAD_KIND,
    add_checkpoint,
    events_log,
    save_run,
    save_thread,
)
from ._streams import RunStream
from .context import Context
from .db import Doc

POLL_SECONDS = 1.0  # a safety net only: appends ring the bell
RESTART_ERROR = {"error": "ServerRestart", "message": "the server stopped while the run was active"}


class RunEngine:
    def __init__(self, ctx: Context) -> None:
        self.db = ctx.db
        self.delay = ctx.settings.token_delay_ms / 1000
        slots, self.start_cost = ctx.settings.run_slots, ctx.settings.run_start_s
        self.slots = asyncio.Semaphore(slots) if slots else contextlib.nullcontext()
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.tokens: dict[str, int] = {}
        self.bells: dict[str, asyncio.Event] = {}
        self.thread_locks: dict[str, asyncio.Lock] = {}
        self.stopping = False

    # --- events ----------------------------------------------------------------------------

    def emit(self, run_id: str, event: str, data: Any) -> int:
        seq = self.db.append(events_log(run_id), event, data)
        bell = self.bells.pop(run_id, None)
        if bell is not None:
            bell.set()
        return seq

    async def events(self, run_id: str, after: int) -> AsyncIterator[tuple[int, str, Any]]:
        """The run's events after sequence number `after`, replayed then tailed until `end`."""
        while True:
            # Take the bell before reading, so an append in between still wakes us.
            bell = self.bells.setdefault(run_id, asyncio.Event())
            batch = self.db.read_log(events_log(run_id), after)
            for seq, event, data in batch:
                yield seq, event, data
                after = seq
                if event == "end":
                    return
            if not batch:
                run = self.db.get(RUN_KIND, run_id, None)
                if run is None or run["status"] in TERMINAL_STATUSES:
                    self.bells.pop(run_id, None)
                    return
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(bell.wait(), POLL_SECONDS)

    # --- lifecycle -------------------------------------------------------------------------

    def start(self, run: Doc) -> None:
        """Execute a freshly stored (pending) run in the background."""
        run_id = run["run_id"]
        task = asyncio.create_task(self._drive(run))
        self.tasks[run_id] = task

        def settle(_: asyncio.Task[None]) -> None:
            self.tasks.pop(run_id, None)
            # A task cancelled before it ever ran could not record that itself.
            self.finish(run_id, "error" if self.stopping else "interrupted", RESTART_ERROR)

        task.add_done_callback(settle)

    async def _drive(self, run: Doc) -> None:
        run_id = run["run_id"]
        lock = self.thread_locks.setdefault(run["thread_id"], asyncio.Lock())
        try:
            async with lock, self.slots:  # runs of one thread one after another, on a worker
                await self._execute(run_id, AGENTS[run["_graph_id"]])
        except asyncio.CancelledError:
            if self.stopping:
                self.finish(run_id, "error", RESTART_ERROR)
            else:
                self.finish(run_id, "interrupted")
        except Exception as exc:
            self.finish(run_id, "error", {"error": type(exc).__name__, "message": str(exc)})

    async def _execute(self, run_id: str, agent: ReferenceAgent) -> None:
        run = self.db.get(RUN_KIND, run_id, None)
        thread = self.db.get(THREAD_KIND, run["thread_id"], None) if run else None
        if run is None or thread is None or run["status"] != "pending":
            return
        save_run(self.db, run, status="running")
        save_thread(self.db, thread, status="busy")
        if self.start_cost:
            await asyncio.sleep(self.start_cost)
        sent = RunStream(run["kwargs"]["stream_mode"])
        final = thread["values"]
        self.tokens[run_id] = 0
        stream = agent.run(run["kwargs"]["input"], thread["values"], run_id, self.delay)
        async for step in stream:
            self.tokens[run_id] += step.tokens
            if step.mode == "values":
                final = step.data
            for event, data in sent.events(step):
                self.emit(run_id, event, data)
        self.finish(run_id, "success", values=final)

    def finish(
        self, run_id: str, status: str, error: Doc | None = None, values: Doc | None = None
    ) -> None:
        """Record a run's terminal status, its last events and its thread's new state, once."""
        run = self.db.get(RUN_KIND, run_id, None)
        if run is None or run["status"] in TERMINAL_STATUSES:
            return
        was_running = run["status"] == "running"
        error = (error or RESTART_ERROR) if status == "error" else None
        save_run(self.db, run, status=status, _tokens=self.tokens.pop(run_id, 0), _error=error)
        thread = self.db.get(THREAD_KIND, run["thread_id"], None)
        # A run that never started leaves its thread to the run that holds it.
        if thread is not None and was_running:
            self._settle_thread(thread, run, status, values)
        if error is not None:
            self.emit(run_id, "error", error)
        self.emit(run_id, "end", None)

    def _settle_thread(self, thread: Doc, run: Doc, status: str, values: Doc | None) -> None:
        if status == "success" and values is not None:
            metadata = {"source": "loop", "run_id": run["run_id"], "graph_id": run["_graph_id"]}
            add_checkpoint(self.db, thread["thread_id"], values, metadata)
            save_thread(self.db, thread, status="idle", values=values)
        else:
            save_thread(self.db, thread, status="error" if status == "error" else "idle")

    async def cancel(self, run_id: str) -> None:
        """Interrupt a pending or running run and wait until it has recorded that."""
        task = self.tasks.get(run_id)
        if task is not None:
            task.cancel()
            await asyncio.wait({task}, timeout=5)
        self.finish(run_id, "error" if self.stopping else "interrupted", RESTART_ERROR)

    def request_cancel(self, run_id: str) -> None:
        """Cancel without waiting (from a stream whose client went away)."""
        task = self.tasks.get(run_id)
        if task is not None:
            task.cancel()

    async def wait(self, run_id: str) -> None:
        task = self.tasks.get(run_id)
        if task is not None:
            await asyncio.wait({task})

    # --- start-up and shut-down ------------------------------------------------------------

    def recover(self) -> None:
        """Runs left pending or running by a process that died end as errors (streams end)."""
        for run in self.db.list(RUN_KIND, None):
            if run["status"] not in TERMINAL_STATUSES:
                self.finish(run["run_id"], "error", RESTART_ERROR)

    async def stop(self) -> None:
        self.stopping = True
        for run_id in list(self.tasks):
            await self.cancel(run_id)
