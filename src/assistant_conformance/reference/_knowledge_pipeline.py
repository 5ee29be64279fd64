"""Background processing of knowledge documents: running -> splitted -> embedding -> finish.

Each started document has a durable job record (kind `knowledge_job`, owner = the document's
owner); it is removed when the document reaches `finish` or `error`. On start-up the remaining jobs
are processed again from the beginning, so a restart never leaves a document stuck mid-way.

All database writes for one step happen without an `await` in between, and every route of the
knowledge module runs on the event loop too, so a step can never write back a document that a
request deleted meanwhile.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from ._chunking import chunk_settings, count_tokens, split_text
from .context import Context, now_iso
from .db import Doc

KNOWLEDGEBASE = "knowledgebase"
DOC = "knowledge_document"
JOB = "knowledge_job"

# Delay between status steps: processing takes a while, as a real one does, and a client polling
# its status may see it run; short, since every run of the suite waits on it. Tests raise it to
# stop a server in mid-processing.
STEP_SECONDS = int(os.environ.get("ASSISTANT_REFERENCE_KB_STEP_MS", "10")) / 1000

NO_CONTENT = "document has no text content to process"
RESTART = {
    "status": "running",
    "progress": 0,
    "processMsg": None,
    "chunkNum": None,
    "tokenNum": None,
}


class _Gone(Exception):
    """The document (or its knowledge base) was deleted while it was being processed."""


def start_processing(ctx: Context, owner: str, doc: Doc) -> Doc:
    """Mark a document `running`, record its job and process it in the background."""
    # The job first: a crash between the two writes leaves a job to resume, not a stuck document.
    job = {"documentId": doc["id"], "owner": owner}
    ctx.db.put(JOB, doc["id"], owner, job, parent=doc["knowledgebaseId"])
    doc = _update(ctx, owner, doc["id"], **RESTART)
    _launch(ctx, owner, doc["id"])
    return doc


def cancel(ctx: Context, doc_ids: list[str]) -> None:
    for doc_id in doc_ids:
        task = _tasks(ctx).pop(doc_id, None)
        if task is not None:
            task.cancel()


async def resume_all(ctx: Context) -> None:
    """Process again every document whose job did not finish before the last shutdown."""
    for job_id, owner in _pending_jobs(ctx):
        try:
            _update(ctx, owner, job_id, **RESTART)
        except _Gone:
            ctx.db.delete(JOB, job_id, owner=None)
            continue
        _launch(ctx, owner, job_id)


async def stop_all(ctx: Context) -> None:
    tasks = list(_tasks(ctx).values())
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def _pending_jobs(ctx: Context) -> list[tuple[str, str]]:
    return [(job["documentId"], job["owner"]) for job in ctx.db.list(JOB, owner=None)]


def _tasks(ctx: Context) -> dict[str, asyncio.Task[None]]:
    tasks = ctx.extras.setdefault("knowledge_tasks", {})
    assert isinstance(tasks, dict)
    return tasks


def _launch(ctx: Context, owner: str, doc_id: str) -> None:
    cancel(ctx, [doc_id])  # processing again restarts from the beginning
    task = asyncio.create_task(_process(ctx, owner, doc_id))
    _tasks(ctx)[doc_id] = task

    def forget(done: asyncio.Task[None]) -> None:
        if _tasks(ctx).get(doc_id) is done:
            del _tasks(ctx)[doc_id]

    task.add_done_callback(forget)


async def _process(ctx: Context, owner: str, doc_id: str) -> None:
    try:
        await asyncio.sleep(STEP_SECONDS)
        doc = _load(ctx, owner, doc_id)
        content = doc.get("content")
        if not isinstance(content, str) or not content.strip():
            _end(ctx, owner, doc_id, status="error", processMsg=NO_CONTENT)
            return
        kb = ctx.db.get(KNOWLEDGEBASE, doc["knowledgebaseId"], owner)
        if kb is None:
            raise _Gone
        # The document's own parserConfig fields override the knowledge base's.
        config = {**(kb.get("parserConfig") or {}), **(doc.get("parserConfig") or {})}
        chunks = await asyncio.to_thread(split_text, content, *chunk_settings(config))
        if not chunks:
            _end(ctx, owner, doc_id, status="error", processMsg=NO_CONTENT)
            return
        _update(ctx, owner, doc_id, status="splitted", progress=40, chunkNum=len(chunks))
        await asyncio.sleep(STEP_SECONDS)
        _update(ctx, owner, doc_id, status="embedding", progress=70)
        await asyncio.sleep(STEP_SECONDS)
        _end(ctx, owner, doc_id, status="finish", progress=100, tokenNum=count_tokens(chunks))
    except _Gone:
        ctx.db.delete(JOB, doc_id, owner=None)
    except asyncio.CancelledError:
        raise  # shutdown or a restart of processing: the job stays for whoever comes next
    except Exception as exc:  # a fault must not leave the document looking busy forever
        try:
            _end(ctx, owner, doc_id, status="error", processMsg=f"processing failed: {exc}")
        except _Gone:
            ctx.db.delete(JOB, doc_id, owner=None)


def _load(ctx: Context, owner: str, doc_id: str) -> Doc:
    doc = ctx.db.get(DOC, doc_id, owner)
    if doc is None:
        raise _Gone
    return doc


def _update(ctx: Context, owner: str, doc_id: str, **changes: Any) -> Doc:
    doc = {**_load(ctx, owner, doc_id), **changes, "updatedAt": now_iso()}
    return ctx.db.put(DOC, doc_id, owner, doc, parent=doc["knowledgebaseId"])


def _end(ctx: Context, owner: str, doc_id: str, **changes: Any) -> None:
    _update(ctx, owner, doc_id, **changes)
    ctx.db.delete(JOB, doc_id, owner=None)
