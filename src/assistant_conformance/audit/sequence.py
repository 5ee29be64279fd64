"""What a sequence of exchanges in one file shows, judged at the exchange that completes it (so the
proxy judges it as it passes, with only what came before):

- a read after a delete: an operation on a resource deleted earlier (its `deleted` requirement
  in spec/openapi.yaml) answered 2xx fails it, 404 (or 410) keeps it; another answer may be the
  operation's own absence, not judged;
- a patch read back: the first successful GET of a patched thread or conversation after the
  patch holds every field the patch sent that the document's patch body names
  (THR-PATCH-PERSISTS, CONV-PATCH-PERSISTS; checks' `read-back`);
- a stream resumed with `last-event-id`: its events, compared by the events a client can name
  (checks' `named`: id, name and data), are exactly those after that id in a whole replay of the
  same run in the file (a stream of it read to its end without `last-event-id`): a join
  (RUN-JOIN-RESUME), or a new run's POST stream (RUN-STREAM-RESUME: for an id that is none of
  the run's, an unbroken tail of them). Ids are opaque: only their order in the run counts;
- the suite's own exchanges (reports/exchanges/ID.har): the finding's declared check, judged on
  them as a replay judges it; a check that is its test's own code cannot be, and says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from assistant_conformance.audit.capture import Capture
from assistant_conformance.audit.judge import Judgement, judge_check
from assistant_conformance.audit.operations import last_event_id, path_values, run_of
from assistant_conformance.contract.catalogue import load
from assistant_conformance.contract.openapi import Operation, by_label, operation_label
from assistant_conformance.suite.http import sse, strictjson
from assistant_conformance.suite.judging import checks
from assistant_conformance.suite.safety.removal import GONE

Ops = Sequence[Operation | None]
PERSISTS = {
    "PATCH /api/ai/threads/{thread_id}": "THR-PATCH-PERSISTS",
    "PATCH /api/ai/conversations/{conversation_id}": "CONV-PATCH-PERSISTS",
}
JOIN_RESUME, STREAM_RESUME = "RUN-JOIN-RESUME", "RUN-STREAM-RESUME"


def _success(capture: Capture, index: int) -> bool:
    return 200 <= (capture.entries[index].status or 0) < 300


def deleted(capture: Capture, ops: Ops, index: int, base_path: str | None) -> list[Judgement]:
    op, entry = ops[index], capture.entries[index]
    requirement = op.requirements.get("deleted") if op else None
    if op is None or not requirement or not capture.valid_credential(index):
        return []
    if op.method == "DELETE" and any(f"{m} {op.path}" in by_label() for m in ("GET", "PUT")):
        return []  # deleting again where the resource can be read: the read says it
    if not (_success(capture, index) or entry.status in GONE):
        return []
    values = path_values(entry, op, base_path)
    for earlier in range(index - 1, -1, -1):
        gone = ops[earlier]
        if (
            gone is not None
            and gone.method == "DELETE"
            and gone.requirements.get("deleted") == requirement
            and _success(capture, earlier)
            and capture.after(earlier, index)
            and _target(capture, gone, earlier, base_path) in values
        ):
            check = {"kind": "status", "entry": index, "statuses": list(GONE)}
            expected = f"HTTP 404: its resource was deleted at entry {earlier}"
            return [Judgement(requirement, check, expected, index, op.label)]
    return []


def _target(capture: Capture, op: Operation, index: int, base_path: str | None) -> str | None:
    """The id of what a request acts on: its last path parameter."""
    values = path_values(capture.entries[index], op, base_path)
    return values[-1] if values else None


def patched(capture: Capture, ops: Ops, index: int) -> list[Judgement]:
    op = ops[index]
    patch = f"PATCH {op.path}" if op is not None else ""
    if op is None or op.method != "GET" or patch not in PERSISTS or not _success(capture, index):
        return []
    path = httpx.URL(capture.entries[index].url).path
    for earlier in range(index - 1, -1, -1):
        before = capture.entries[earlier]
        if httpx.URL(before.url).path != path:
            continue
        if before.method == "GET" and not _success(capture, earlier):
            continue  # a read that failed did not judge the patch
        if before.method != "PATCH" or not _success(capture, earlier):
            return []  # a read after it judged it already, or another write came between
        if not capture.after(earlier, index):
            return []
        sent = _patched_fields(by_label()[patch], before.request_body)
        if not sent:
            return []
        check = {"kind": "read-back", "entry": index, "sent": sent}
        expected = f"the fields patched at entry {earlier}, read back"
        return [Judgement(PERSISTS[patch], check, expected, index, op.label)]
    return []


def _patched_fields(op: Operation, body: bytes | None) -> dict[str, Any]:
    sent = strictjson.lenient(body) if body else None
    names = (op.body_schema or {}).get("properties", {})
    return {k: v for k, v in sent.items() if k in names} if isinstance(sent, dict) else {}


# --- streams resumed by last-event-id -----------------------------------------------------------


def _read_whole(capture: Capture, ops: Ops, index: int) -> bool:
    """A stream of a run read to its end: the server ended it, or (where the file does not say)
    its last event is the run's last."""
    op, entry = ops[index], capture.entries[index]
    if op is None or not op.streaming or not _success(capture, index) or not capture.whole[index]:
        return False
    ended = (entry.stream or {}).get("closed_by_server")
    if ended is None:
        events = checks.events_of(entry)
        return bool(events) and events[-1].event in sse.LAST_EVENTS
    return bool(ended)


@dataclass
class Streams:
    """The streams of the file so far, by run: whole replays, and those resumed by an id."""

    replays: dict[str, list[int]] = field(default_factory=dict)
    resumers: dict[str, list[int]] = field(default_factory=dict)


def resumed(
    capture: Capture, ops: Ops, index: int, base_path: str | None, streams: Streams
) -> list[Judgement]:
    """Judged where the later of a resumed stream and the first whole replay of its run is."""
    op, entry = ops[index], capture.entries[index]
    run = run_of(entry, op, base_path) if op and _read_whole(capture, ops, index) else None
    if run is None:
        return []
    if last_event_id(entry):
        streams.resumers.setdefault(run, []).append(index)
        first = streams.replays.get(run, [])
        pairs = [(index, first[0])] if first else []
    else:
        waiting = [] if run in streams.replays else streams.resumers.get(run, [])
        pairs = [(r, index) for r in waiting]
        streams.replays.setdefault(run, []).append(index)
    return [found for at, truth in pairs if (found := _resume(capture, ops, at, truth))]


def _resume(capture: Capture, ops: Ops, at: int, truth: int) -> Judgement | None:
    op = ops[at]
    assert op is not None
    sent = last_event_id(capture.entries[at])
    requirement = JOIN_RESUME if op.method == "GET" else STREAM_RESUME
    events = checks.events_of(capture.entries[truth])
    ids = [i for i, e in enumerate(events) if e.own_id and e.id == sent]
    if ids:
        start = ids[0] + 1
        expected = f"exactly the events after {sent!r} of the run's replay at entry {truth}"
    else:
        got = len(checks.named(checks.events_of(capture.entries[at])))
        named = [i for i, e in enumerate(events) if e.own_id and e.id]
        if requirement == JOIN_RESUME or not got or got > len(named):
            return None  # an id that is none of the run's: a join's answer is not stated
        start = named[len(named) - got]
        expected = f"an unbroken tail of the run's events at entry {truth} ({sent!r} is none)"
    check = {"kind": "events-equal", "got": [{"entry": at}],
             "expected": [{"entry": truth, "from": start}]}  # fmt: skip
    return Judgement(requirement, check, expected, at, op.label)


# --- the suite's own exchanges: the finding's declared check ------------------------------------


NOT_DATA = {
    "test": "its check is its test's own code, not words a file can be judged by",
    "schemathesis": "its check is schemathesis' (run again by `assistant-conformance replay`)",
}


def declared_checks(capture: Capture, index: int, not_judged: dict[str, str]) -> list[Judgement]:
    """The finding's check of a suite HAR, judged at the last exchange it reads."""
    finding = capture.finding
    if not finding or index != len(capture.entries) - 1:
        return []
    requirement, check = finding.get("requirement", ""), finding.get("check") or {}
    if requirement not in load():
        return []
    if check.get("kind") in NOT_DATA or not check:
        not_judged.setdefault(requirement, NOT_DATA.get(check.get("kind", ""), "no check"))
        return []
    try:
        judge_check(check, capture.entries)
    except (KeyError, IndexError, TypeError, ValueError):
        not_judged.setdefault(requirement, f"its check ({check.get('kind')}) cannot be read")
        return []
    read = checks.entries_of(check)
    at = read[0] if "entry" in check else max(read, default=index)
    entry = capture.entries[at]
    label = operation_label(entry.method, httpx.URL(entry.url).path)
    expected = str(finding.get("expected") or "its declared check holds")
    return [Judgement(requirement, check, expected, at, label)]
