"""Threads (interface 4.4): create, read, patch, state, history, copy, search, delete.

Bodies are LangGraph's (the contract leaves them unspecified): `metadata` on create, patch and
search; `values` on a state write; `limit` on history. Every thread carries this run's prefix in
its metadata, so searches only ever match what this run created.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

import pytest

from assistant_conformance.contract.openapi import operations
from assistant_conformance.suite.flows import json_of, runs, send
from assistant_conformance.suite.flows.auth import track_created
from assistant_conformance.suite.flows.threads import (
    StateWriter,
    carries_marker,
    differences,
    read_values,
    state_values,
    thread_path,
)
from assistant_conformance.suite.http.absent import unimplemented
from assistant_conformance.suite.judging import checks, findings
from assistant_conformance.suite.judging.checks import mismatches


def refused(step: Callable[[], object]) -> str | None:
    """Run a step whose failure is recorded as it happens (a status required); why it stopped the
    test, else None: the checks that do not need what it would have made still run."""
    try:
        step()
    except findings.Blocked as stopped:
        return str(stopped.msg)
    return None


def history(api, thread_id: str) -> list[Any]:
    response = api.post(thread_path(thread_id, "/history"), json={"limit": 100})
    findings.require_success("THR-STATUS", response, 201)
    entries = checks.list_of(json_of(response))
    findings.require(
        "THR-HISTORY-ORDERED", entries is not None, "a list of states", response, response
    )
    return entries or []


@pytest.mark.req("THR-STATUS", "THR-GET-CREATED")
def test_created_thread_is_readable_by_its_id(api, ledger):
    thread_id = runs.create_thread(api, ledger)
    response = api.get(thread_path(thread_id))
    findings.expect_status("THR-STATUS", response, 200)
    findings.expect(
        "THR-GET-CREATED",
        (json_of(response) or {}).get("thread_id") == thread_id,
        f"thread {thread_id} read back",
        response,
        response,
    )


@pytest.mark.req("THR-STATUS", "THR-PATCH-PERSISTS")
def test_patched_metadata_is_in_the_thread_read_afterwards(api, ledger):
    thread_id = runs.create_thread(api, ledger)
    patch = {"patched": secrets.token_hex(4), "nested": {"n": 1}}
    response = api.patch(thread_path(thread_id), json={"metadata": patch})
    findings.require_success("THR-STATUS", response, 200)
    got = api.get(thread_path(thread_id))
    findings.require_success("THR-STATUS", got, 200)
    metadata = (json_of(got) or {}).get("metadata")
    findings.expect(
        "THR-PATCH-PERSISTS",
        not mismatches(patch, metadata),
        f"metadata holding {patch}",
        metadata,
        got,
    )


@pytest.mark.req("THR-STATUS", "THR-STATE-PERSISTS")
def test_state_written_is_the_state_read(api, agent, ledger):
    thread_id = runs.create_thread(api, ledger)
    values = state_values(agent, f"state-{secrets.token_hex(4)}")
    if (why := refused(lambda: StateWriter(api, agent, thread_id).write(values))) is not None:
        read_values(api, thread_id)  # a thread has a state to read, written or not
        findings.not_judged("THR-STATE-PERSISTS", why)
        return
    got = read_values(api, thread_id)
    wrong = differences(values, got)
    findings.expect("THR-STATE-PERSISTS", not wrong, f"values holding {values}", wrong or got)


@pytest.mark.req("THR-STATUS", "THR-HISTORY-ORDERED")
def test_history_grows_with_each_write_newest_first(api, agent, ledger):
    thread_id = runs.create_thread(api, ledger)
    markers = [f"step-{step}-{secrets.token_hex(3)}" for step in (1, 2, 3)]
    first, writer = state_values(agent, markers[0]), StateWriter(api, agent, thread_id)
    if (why := refused(lambda: writer.write(first))) is not None:
        response = api.post(thread_path(thread_id, "/history"), json={"limit": 100})
        findings.expect_status("THR-STATUS", response, 201)  # a thread has a history, if empty
        findings.not_judged("THR-HISTORY-ORDERED", why)
        return
    before = len(history(api, thread_id))
    sizes = []
    for marker in markers[1:]:
        writer.write(state_values(agent, marker))
        sizes.append(len(history(api, thread_id)))
    findings.expect(
        "THR-HISTORY-ORDERED",
        sizes == [before + 1, before + 2],
        f"one more state per write after {before}",
        sizes,
    )
    entries = history(api, thread_id)[:3]
    newest = [_latest(e, markers) for e in entries]
    findings.expect(
        "THR-HISTORY-ORDERED", newest == [3, 2, 1], "newest first: writes 3, 2, 1", newest
    )


def _latest(entry: Any, markers: list[str]) -> int | None:
    """Which write (1-based) is the newest whose marker a history entry's values hold."""
    values = entry.get("values") if isinstance(entry, dict) else None
    held = [i + 1 for i, marker in enumerate(markers) if carries_marker(values, marker)]
    return max(held) if held else None


@pytest.mark.req("THR-STATUS", "THR-GET-CREATED", "THR-COPY-NEW-THREAD")
def test_copy_is_a_new_thread_with_the_same_state(api, agent, ledger):
    thread_id = runs.create_thread(api, ledger)
    values = state_values(agent, f"copied-{secrets.token_hex(4)}")
    refused(lambda: StateWriter(api, agent, thread_id).write(values))  # a copy copies any state
    response = api.post(thread_path(thread_id, "/copy"))
    findings.require_success("THR-STATUS", response, 201)
    copy_id = (json_of(response) or {}).get("thread_id")
    if isinstance(copy_id, str) and copy_id != thread_id:
        ledger.track("DELETE", thread_path(copy_id))
    findings.require(
        "THR-COPY-NEW-THREAD",
        isinstance(copy_id, str) and copy_id not in ("", thread_id),
        f"a thread_id other than {thread_id}",
        copy_id,
        response,
    )
    got = api.get(thread_path(copy_id))
    findings.expect_status("THR-GET-CREATED", got, 200)
    original, copied = read_values(api, thread_id), read_values(api, copy_id)
    findings.expect(
        "THR-COPY-NEW-THREAD", copied == original, f"the copy's state values {original}", copied
    )


@pytest.mark.req("THR-STATUS", "THR-SEARCH-METADATA")
def test_search_by_metadata_finds_exactly_the_matching_threads(api, ledger):
    probe = secrets.token_hex(4)
    wanted = [runs.create_thread(api, ledger, {"probe": probe, "side": "a"}) for _ in range(2)]
    other = runs.create_thread(api, ledger, {"probe": probe, "side": "b"})
    query = {"conformance_run": ledger.run_prefix, "probe": probe, "side": "a"}
    response = api.post(
        f"{runs.THREADS}/search", json={"metadata": query, "limit": 100, "offset": 0}
    )
    findings.require_success("THR-STATUS", response, 200)
    found = checks.list_of(json_of(response))
    findings.require(
        "THR-SEARCH-METADATA", found is not None, "a list of threads", response, response
    )
    ids = sorted(t.get("thread_id") for t in found or [] if isinstance(t, dict))
    findings.expect(
        "THR-SEARCH-METADATA",
        ids == sorted(wanted),
        f"exactly {sorted(wanted)} (not {other})",
        ids,
        response,
    )


# Every operation on a thread, but those that start a run (a server that kept the thread would
# run the agent for nothing): after the delete, its reads answer 404 and the others a 4xx.
ON_A_THREAD = [
    op
    for op in operations()
    if op.path_params == ("thread_id",)
    and op.operation_id not in ("createRun", "streamRun", "waitRun")
]


@pytest.mark.req("THR-STATUS", "THR-DELETE-GONE")
def test_deleted_thread_is_gone(api, ledger):
    thread_id = runs.create_thread(api, ledger)
    response = api.delete(thread_path(thread_id))
    findings.require_success("THR-STATUS", response, 202)
    for op in ON_A_THREAD:
        got = send(api, op, **op.request({"thread_id": thread_id}, ledger.run_prefix))
        track_created(ledger, op, got)
        if got.status_code != 404 and unimplemented(got, {thread_id}):
            continue  # not there for any thread: THR-STATUS's finding, nothing to say of a delete
        read = op.method == "GET" and op.path.endswith(("{thread_id}", "/state"))
        ok = got.status_code == 404 if read else 400 <= got.status_code < 500
        wanted = "404" if read else "4xx: nothing of it answers as there"
        findings.expect("THR-DELETE-GONE", ok, f"{op.label}: {wanted}", got, got)
