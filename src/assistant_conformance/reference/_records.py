"""Threads, runs and checkpoints as stored in the Database.

A thread is resource kind "thread"; a run is kind "run" with the thread as parent; both keep their
owner in `_owner` (keys starting with `_` are never answered). A thread's checkpoints are the log
`checkpoints:{thread_id}`, a run's events the log `run:{run_id}`.
"""

from __future__ import annotations

from typing import Any

from .context import new_id, now_iso
from .db import Database, Doc
from .errors import not_found

THREAD_KIND, RUN_KIND = "thread", "run"
THREAD_STATUSES = ("idle", "busy", "interrupted", "error")
RUN_STATUSES = ("pending", "running", "success", "error", "timeout", "interrupted")
TERMINAL_STATUSES = frozenset({"success", "error", "timeout", "interrupted"})


def events_log(run_id: str) -> str:
    return f"run:{run_id}"


def checkpoints_log(thread_id: str) -> str:
    return f"checkpoints:{thread_id}"


def public(doc: Doc) -> Doc:
    return {k: v for k, v in doc.items() if not k.startswith("_")}


# --- threads -----------------------------------------------------------------------------


def new_thread(owner: str, thread_id: str, metadata: Doc, values: Doc | None = None) -> Doc:
    now = now_iso()
    return {
        "thread_id": thread_id,
        "created_at": now,
        "updated_at": now,
        "metadata": metadata,
        "status": "idle",
        "values": values or {},
        "_owner": owner,
    }


def get_thread(db: Database, owner: str, thread_id: str) -> Doc:
    thread = db.get(THREAD_KIND, thread_id, owner)
    if thread is None:
        not_found("thread", thread_id)
    return thread


def save_thread(db: Database, thread: Doc, **changes: Any) -> Doc:
    thread.update(changes, updated_at=now_iso())
    return db.put(THREAD_KIND, thread["thread_id"], thread["_owner"], thread)


# --- runs --------------------------------------------------------------------------------


def get_run(db: Database, owner: str, thread_id: str, run_id: str) -> Doc:
    run = db.get(RUN_KIND, run_id, owner)
    if run is None or run["thread_id"] != thread_id:
        not_found("run", run_id)
    return run


def save_run(db: Database, run: Doc, **changes: Any) -> Doc:
    run.update(changes, updated_at=now_iso())
    return db.put(RUN_KIND, run["run_id"], run["_owner"], run, parent=run["thread_id"])


def thread_runs(db: Database, owner: str, thread_id: str) -> list[Doc]:
    """The thread's runs, oldest first."""
    return db.list(RUN_KIND, owner, parent=thread_id)


# --- checkpoints -------------------------------------------------------------------------


def checkpoints(db: Database, thread_id: str) -> list[Doc]:
    """The thread's checkpoints, oldest first."""
    return [data for _, _, data in db.read_log(checkpoints_log(thread_id))]


def add_checkpoint(db: Database, thread_id: str, values: Doc, metadata: Doc) -> Doc:
    history = checkpoints(db, thread_id)
    entry: Doc = {
        "checkpoint_id": new_id(),
        "parent_checkpoint_id": history[-1]["checkpoint_id"] if history else None,
        "values": values,
        "next": [],
        "metadata": {**metadata, "step": len(history)},
        "created_at": now_iso(),
    }
    db.append(checkpoints_log(thread_id), "checkpoint", entry)
    return entry


def checkpoint_ref(thread_id: str, checkpoint_id: str | None) -> Doc:
    return {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": checkpoint_id}


def state_view(thread_id: str, entry: Doc | None) -> Doc:
    """A ThreadState for a checkpoint; an empty state for a thread without any."""
    if entry is None:
        return {
            "values": {},
            "next": [],
            "tasks": [],
            "checkpoint": checkpoint_ref(thread_id, None),
            "parent_checkpoint": None,
            "metadata": {},
            "created_at": None,
            "interrupts": [],
        }
    parent = entry["parent_checkpoint_id"]
    return {
        "values": entry["values"],
        "next": entry["next"],
        "tasks": [],
        "checkpoint": checkpoint_ref(thread_id, entry["checkpoint_id"]),
        "parent_checkpoint": checkpoint_ref(thread_id, parent) if parent else None,
        "metadata": entry["metadata"],
        "created_at": entry["created_at"],
        "interrupts": [],
    }
