"""Thread and run flows (interface 4.4 and 6): threads, runs, streams, and where ids come from.

The contract names no event, payload or run status. The suite reads LangGraph's shapes where a
server offers them and falls back on what any server must offer:
- the run_id of a streamed run: a `metadata` event (LangGraph: the first event, data {run_id}),
  else any event whose data is an object with a string `run_id`, else the `Content-Location` /
  `Location` header (LangGraph: `.../runs/{run_id}`), else the one run of the thread's run list
  that was not there before;
- run statuses: LangGraph's (the deployed server uses the same enum); terminal ones end a run.
Event ids are opaque strings: compared for equality and order within one stream, never parsed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from urllib.parse import unquote

import httpx

from assistant_conformance.suite.flows import is_success, json_of, of_thread, poll, settled
from assistant_conformance.suite.flows.agent import IDS, MANY_EVENTS, QUEUED, RESUMABLE, Agent
from assistant_conformance.suite.http.observe import AnswerFault
from assistant_conformance.suite.http.sse import (
    LiveStream,
    RunEnded,
    SseEvent,
    StreamRead,
    read_stream,
)
from assistant_conformance.suite.http.trail import Entry
from assistant_conformance.suite.judging import checks, findings
from assistant_conformance.suite.safety.ledger import Ledger

THREADS = "/api/ai/threads"
ACTIVE = frozenset({"pending", "running"})
# A run read until its status is terminal (a polling loop's `until`).
UNTIL_RUN_ENDED = checks.FieldCheck(
    entry=checks.LOOP_ANSWER, key="status", in_=tuple(sorted(checks.TERMINAL_RUN))
)


# the run options a check names (agent.OPTIONS)
__all__ = ["IDS", "MANY_EVENTS", "QUEUED", "RESUMABLE"]


def words(count: int) -> str:
    return " ".join(f"token{i}" for i in range(count))


# --- assistants and threads --------------------------------------------------------------------


def run_body(agent: Agent, word_count: int, needs: tuple[str, ...] = ()) -> dict[str, Any]:
    """A run of the session's agent (flows/agent.py) on `word_count` words, with the run options
    `needs` names where the target takes them; a check that needs it stops, not judged, where runs
    are not judged."""
    return agent.body(words(word_count), needs)


def create_thread(api: httpx.Client, ledger: Ledger, metadata: dict[str, Any] | None = None) -> str:
    """A new thread of this run (THR-STATUS: 201), tracked for removal; answers its thread_id."""
    meta = {"conformance_run": ledger.run_prefix, **(metadata or {})}
    response = api.post(THREADS, json={"metadata": meta})
    findings.require_success("THR-STATUS", response, 201)
    body = json_of(response)
    thread_id = body.get("thread_id") if isinstance(body, dict) else None
    if not isinstance(thread_id, str) or not thread_id:
        raise findings.Blocked(f"thread create answered no thread_id: {response.text[:200]}")
    ledger.track("DELETE", f"{THREADS}/{thread_id}")
    return thread_id


# --- runs ----------------------------------------------------------------------------------------


def runs_url(thread_id: str, run_id: str = "", tail: str = "") -> str:
    url = f"{THREADS}/{thread_id}/runs"
    return f"{url}/{run_id}{tail}" if run_id else f"{url}{tail}"


def list_run_ids(api: httpx.Client, thread_id: str) -> list[str]:
    response = api.get(runs_url(thread_id), params={"limit": 1000, "offset": 0})
    runs = checks.list_of(json_of(response)) if is_success(response) else None
    return [
        r["run_id"] for r in of_thread(runs or [], thread_id) if isinstance(r.get("run_id"), str)
    ]


def run_id_in(events: Iterable[SseEvent], headers: dict[str, str]) -> str | None:
    """The run_id a stream announces (see the module docstring), or None."""
    candidates: list[tuple[int, str]] = []
    for event in events:
        data = parsed(event.data)
        if isinstance(data, dict) and isinstance(data.get("run_id"), str) and data["run_id"]:
            candidates.append((0 if event.event == "metadata" else 1, data["run_id"]))
    if candidates:
        return min(candidates, key=lambda c: c[0])[1]
    for name in ("content-location", "location"):
        match = re.search(r"/runs/([^/?#]+)", headers.get(name, ""))
        if match and match.group(1) not in ("stream", "wait"):
            return unquote(match.group(1))
    return None


def find_run_id(
    api: httpx.Client,
    thread_id: str,
    events: Iterable[SseEvent],
    headers: dict[str, str],
    known: Iterable[str] = (),
) -> str:
    """The run a stream or wait started: announced by it, else the one new run of the thread."""
    announced = run_id_in(events, headers)
    if announced:
        return announced
    new = [r for r in list_run_ids(api, thread_id) if r not in set(known)]
    if len(new) != 1:
        raise findings.Blocked(f"cannot tell which run was started: new runs in the list: {new}")
    return new[0]


def run_status(response: httpx.Response) -> str | None:
    body = json_of(response)
    status = body.get("status") if isinstance(body, dict) else None
    return status if isinstance(status, str) else None


def wait_terminal(api: httpx.Client, thread_id: str, run_id: str, timeout: float) -> httpx.Response:
    """GET the run until its status is terminal or `timeout` passes; answers the last read."""
    response, _ = poll(lambda: api.get(runs_url(thread_id, run_id)), UNTIL_RUN_ENDED, timeout)
    return response


def settled_status(
    api: httpx.Client, thread_id: str, run_id: str, timeout: float, was: str | None = None
) -> tuple[httpx.Response, list[Any], bool]:
    """GET the run until terminal (within `timeout`), then until two reads agree on its status
    (flows.settled; `was`: the status it settled on before): where the status ends, the statuses
    read in order, and whether it stayed."""
    return settled(
        lambda: api.get(runs_url(thread_id, run_id)), UNTIL_RUN_ENDED, "status", timeout, was
    )


def ended_probe(api: httpx.Client, thread_id: str, run_id: str = "") -> RunEnded:
    """For a stream reader: whether the run (`run_id`, else the one its stream announces) has a
    terminal status by GET of the run. No answer or no run id yet: not known to have ended."""

    def ended(events: list[SseEvent], headers: dict[str, str]) -> bool:
        found = run_id or run_id_in(events, headers)
        if not found:
            return False
        try:
            response = api.get(runs_url(thread_id, found))
        except (httpx.HTTPError, AnswerFault):
            return False
        return is_success(response) and run_status(response) in checks.TERMINAL_RUN

    return ended


# --- streams -------------------------------------------------------------------------------------


def parsed(data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return data


def keys(events: Iterable[SseEvent]) -> list[tuple[str, str, str]]:
    """The keys of the events a client can name (checks.named): a frame without an id, which
    a server may send each connection its own way, is not compared."""
    return [checks.event_key(e) for e in checks.named(list(events))]


def last_named(events: list[SseEvent]) -> str:
    """The id of the last event that carried one ("" if none did)."""
    return next((e.id for e in reversed(events) if e.own_id and e.id), "")


def check_stream(read: StreamRead | LiveStream, status: int) -> None:
    """Record RUN-STATUS and RUN-STREAM-CONTENT-TYPE of a stream; go on after any 2xx."""
    code = read.status or 0
    findings.expect("RUN-STATUS", code == status, f"HTTP {status}", f"HTTP {code}", read.exchange)
    if not 200 <= code < 300:
        raise findings.Blocked(f"the stream answered HTTP {code}")
    findings.expect(
        "RUN-STREAM-CONTENT-TYPE",
        read.content_type.split(";")[0].strip().lower() == "text/event-stream",
        "Content-Type text/event-stream",
        read.content_type or "(none)",
        read.exchange,
    )


def need_events(read: StreamRead, at_least: int, what: str) -> None:
    """Stop, not judged, when a run streamed to its end with fewer events than a check needs:
    how many a run sends is the agent's business, not the server's."""
    if read.closed_by_server and len(read.events) < at_least:
        raise findings.Blocked(
            f"not judged: the run streamed {len(read.events)} events and {what} needs at least "
            f"{at_least}: name an agent that streams one event per word of its input "
            "(--assistant, --run-input with {text})"
        )


def check_event_ids(events: list[SseEvent], what: str, exchange: Entry | None) -> bool:
    """RUN-STREAM-EVENT-IDS: every event carried its own non-empty `id:` (but an opening frame,
    checks.unnamed)."""
    if not events:
        return True  # nothing to judge here (a stream that sent nothing is judged elsewhere)
    missing = checks.unnamed(events)
    return findings.expect(
        "RUN-STREAM-EVENT-IDS",
        not missing,
        f"every event of {what} has its own id",
        f"events without an id: {missing[:10]}",
        exchange,
    )


@dataclass
class StreamedRun:
    """A run started by POST runs/stream: its thread, what its stream sent, and (found when first
    asked, so that checks of the stream itself come first) its run_id."""

    api: httpx.Client
    thread_id: str
    read: StreamRead
    known: tuple[str, ...] = ()

    @cached_property
    def run_id(self) -> str:
        headers = self.read.exchange.response_headers
        return find_run_id(self.api, self.thread_id, self.read.events, headers, self.known)


def stream_run(
    api: httpx.Client,
    thread_id: str,
    body: dict[str, Any],
    deadline: float,
    *,
    max_events: int | None = None,
    headers: dict[str, str] | None = None,
    known: Iterable[str] = (),
) -> StreamedRun:
    """POST runs/stream on `thread_id` and read it (up to `max_events`); record RUN-STATUS 201
    and the content type; find the run it started (one not in `known`)."""
    read = read_stream(
        api,
        "POST",
        runs_url(thread_id, tail="/stream"),
        deadline=deadline,
        max_events=max_events,
        headers=headers,
        json_body=body,
        run_ended=ended_probe(api, thread_id),
    )
    check_stream(read, 201)
    return StreamedRun(api, thread_id, read, tuple(known))
