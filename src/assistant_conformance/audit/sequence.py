"""What a sequence of exchanges in one file shows, judged at the exchange that completes it (so the
proxy judges it as it passes, with only what came before). What came before is kept as indexes by
resource (Lives, Reads, Streams), so that judging an exchange costs the same at the 100,000th
as at the first:

- a read after a delete: an operation on a resource deleted earlier (its `deleted` requirement
  in spec/openapi.yaml) answered 2xx fails it, 404 (or 410) keeps it; another answer may be the
  operation's own absence, not judged. A resource made again with the same id since (a thread
  created with a `thread_id` the client chose) is a new life: not judged as the deleted one;
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
from functools import cache
from typing import Any

from assistant_conformance.audit.capture import Capture
from assistant_conformance.audit.judge import Judgement
from assistant_conformance.audit.operations import last_event_id, path_values, run_of, url_path
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


def sequence_requirements() -> set[str]:
    """Every requirement a sequence of exchanges can show."""
    ops = by_label().values()
    gone = {op.requirements["deleted"] for op in ops if "deleted" in op.requirements}
    return gone | set(PERSISTS.values()) | {JOIN_RESUME, STREAM_RESUME}


def _success(capture: Capture, index: int) -> bool:
    return 200 <= (capture.entries[index].status or 0) < 300


@cache
def _makers() -> dict[str, list[tuple[str, str]]]:
    """What each creating operation makes again: `POST /collection` -> (the `deleted`
    requirement of `DELETE /collection/{key}`, the key its answer names the resource by)."""
    found: dict[str, list[tuple[str, str]]] = {}
    for op in by_label().values():
        gone = op.requirements.get("deleted")
        if op.method == "DELETE" and gone and op.path_params:
            collection = op.path.rsplit("/", 1)[0]
            found.setdefault(f"POST {collection}", []).append((gone, op.path_params[-1]))
    return found


@dataclass
class Lives:
    """Each resource deleted (or made again) so far, by its `deleted` requirement and id: the
    exchanges that deleted it (True) or made it again (False), in order."""

    events: dict[tuple[str, str], list[tuple[int, bool]]] = field(default_factory=dict)

    def note(self, capture: Capture, op: Operation | None, index: int, base: str | None) -> None:
        """What this exchange did to a resource: deleted it, or made it (again)."""
        if op is None or not _success(capture, index):
            return
        gone = op.requirements.get("deleted")
        if op.method == "DELETE" and gone:
            values = path_values(capture.entries[index], op, base)
            if values:
                self.events.setdefault((gone, values[-1]), []).append((index, True))
            return
        for requirement, key in _makers().get(op.label, []):
            made = _named(capture, index, key)
            if made is not None and (requirement, made) in self.events:
                self.events[(requirement, made)].append((index, False))

    def deleted_at(self, capture: Capture, requirement: str, value: str, index: int) -> int | None:
        """The delete of this resource that is its latest news before `index` was sent."""
        for at, deleted in reversed(self.events.get((requirement, value), [])):
            if capture.after(at, index):
                return at if deleted else None
        return None


def _named(capture: Capture, index: int, key: str) -> str | None:
    """The id an answer gives the resource it made (else the one the request asked for)."""
    entry = capture.entries[index]
    for body in (checks.body_of(entry), strictjson.lenient(entry.request_body or b"")):
        value = body.get(key) if isinstance(body, dict) else None
        if isinstance(value, str) and value:
            return value
    return None


def deleted(
    capture: Capture, ops: Ops, index: int, base_path: str | None, lives: Lives
) -> list[Judgement]:
    op, entry = ops[index], capture.entries[index]
    requirement = op.requirements.get("deleted") if op else None
    if op is None or not requirement or not capture.valid_credential(index):
        return []
    if op.method == "DELETE" and any(f"{m} {op.path}" in by_label() for m in ("GET", "PUT")):
        return []  # deleting again where the resource can be read: the read says it
    if not (_success(capture, index) or entry.status in GONE):
        return []
    found = [
        lives.deleted_at(capture, requirement, v, index) for v in path_values(entry, op, base_path)
    ]
    earlier = max((at for at in found if at is not None), default=None)
    if earlier is None:
        return []
    check = checks.StatusCheck(entry=index, statuses=tuple(GONE))
    expected = f"HTTP 404: its resource was deleted at entry {earlier}"
    return [Judgement(requirement, check, expected, index, op.label)]


@dataclass
class Reads:
    """The latest exchange on each path that may have changed or judged what a GET of it reads
    (every exchange but a read that failed)."""

    latest: dict[str, int] = field(default_factory=dict)

    def note(self, capture: Capture, index: int) -> None:
        entry = capture.entries[index]
        path = url_path(entry.url)
        if path is not None and not (entry.method == "GET" and not _success(capture, index)):
            self.latest[path] = index


def patched(capture: Capture, ops: Ops, index: int, reads: Reads) -> list[Judgement]:
    op = ops[index]
    patch = f"PATCH {op.path}" if op is not None else ""
    if op is None or op.method != "GET" or patch not in PERSISTS or not _success(capture, index):
        return []
    earlier = reads.latest.get(url_path(capture.entries[index].url) or "")
    if earlier is None or earlier >= index:
        return []
    before = capture.entries[earlier]
    if before.method != "PATCH" or not _success(capture, earlier):
        return []  # a read after it judged it already, or another write came between
    if not capture.after(earlier, index):
        return []
    sent = _patched_fields(by_label()[patch], before.request_body)
    if not sent:
        return []
    check = checks.ReadBackCheck(entry=index, sent=sent)
    expected = f"the fields patched at entry {earlier}, read back"
    return [Judgement(PERSISTS[patch], check, expected, index, op.label)]


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
    ended = entry.stream.closed_by_server if entry.stream is not None else None
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
    check = checks.EventsEqualCheck(
        got=(checks.EventSlice(entry=at),),
        expected=(checks.EventSlice(entry=truth, start=start),),
    )
    return Judgement(requirement, check, expected, at, op.label)


# --- the suite's own exchanges: the finding's declared check ------------------------------------


NOT_DATA: dict[str, str] = {
    checks.CheckKind.TEST: "its check is its test's own code, not words a file can be judged by",
    checks.CheckKind.SCHEMATHESIS: (
        "its check is schemathesis' (run again by `assistant-conformance replay`)"
    ),
}


def declared_checks(capture: Capture, index: int, not_judged: dict[str, str]) -> list[Judgement]:
    """The finding's check of a suite HAR, judged at the last exchange it reads."""
    finding = capture.finding
    if finding is None or index != len(capture.entries) - 1:
        return []
    requirement, kind, check = finding.requirement, finding.kind, finding.check
    if requirement not in load():
        return []
    if kind in NOT_DATA or not kind:
        not_judged.setdefault(requirement, NOT_DATA.get(kind, "no check"))
        return []
    try:
        if check is None:
            raise ValueError(kind)
        check.judge(capture.entries)
    except (LookupError, TypeError, ValueError):
        not_judged.setdefault(requirement, f"its check ({kind}) cannot be read")
        return []
    looked_at = check.looks_at()
    at = index if looked_at is None else looked_at
    entry = capture.entries[at]
    label = operation_label(entry.method, url_path(entry.url) or "")
    expected = finding.expected or "its declared check holds"
    return [Judgement(requirement, check, expected, at, label)]
