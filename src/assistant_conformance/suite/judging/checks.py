"""Checks as data: how a finding is judged, written so that the same words judge it again on the
answers of a replay (suite/evidence/replay.py). A check names exchanges by their place on the trail
(suite/http/trail.py) and says what must hold of them; `evaluate` is the one reading of it, used by
the tests that judge through it (findings.judge) and by the replay.

Kinds (`entry`: a trail index; a sequence of events: [{"entry", "from", "to"}, ...]):
- status {entry, statuses} · status-class {entry, classes, statuses}: the answer's status (class
  2: any 2xx);
- answer {entry}: a whole answer within the bounds (no fault of the door);
- header {entry, name, pattern, ignore_case}: a header of the answer matches a pattern;
- strict-json {entry}: a JSON body (or every event's data) that is RFC 8259 JSON;
- stream-ends {entry}: the server ended the stream; event-ids {entry}: every event had its id
  (an opening frame without one excepted, see `unnamed`);
- events-equal {got, expected}: the same events (id, name, data), of those that carry an id
  (`named`); events-new {got, seen}: no event of `got` has an id of `seen`;
- field {entry, key, in | not_in}: a value of the JSON body (`key` dotted) in (or not in) a set;
- same-reads {entries, idle, filters, request}: pairs of reads before and after a request read
  the same (judging/idle_reads.py);
- counts {entries, equals}: the lengths of list answers (a bare array, or its `items`);
  listed {entries, key, equals}: the `key` values of their items, together, in any order;
- documents-settled {entry, ids} · documents-terminal {entry, ids}: knowledge-base statuses;
- schemathesis {check, entry}: a schemathesis check, run again (suite/evidence/replay.py);
- test: its test's own code (a replay runs the test again).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from assistant_conformance.suite.http import strictjson
from assistant_conformance.suite.http.sse import SseEvent, parse_events
from assistant_conformance.suite.http.trail import Entry
from assistant_conformance.suite.judging.idle_reads import same_reads

Check = dict[str, Any]
TERMINAL_RUN = ("success", "error", "timeout", "interrupted")
TERMINAL_DOCUMENT = ("finish", "error", "cancel")


# --- reading an entry -----------------------------------------------------------------------------


def body_of(entry: Entry) -> Any:
    """The JSON body (read leniently), None when there is none."""
    return strictjson.lenient(bytes(entry.response_body)) if entry.response_body else None


def events_of(entry: Entry) -> list[SseEvent]:
    """The events its reader took (the bytes past them were not read as events)."""
    events = parse_events(bytes(entry.response_body).decode("utf-8", "replace"))
    taken = entry.stream["events"] if entry.stream is not None else entry.events
    return events[:taken] if taken else events


def event_key(event: SseEvent) -> tuple[str, str, str]:
    """What makes two deliveries the same event: id, name and data (JSON compared canonically)."""
    try:
        data = json.dumps(json.loads(event.data), sort_keys=True)
    except ValueError:
        data = event.data
    return event.id, event.event, data


def named(events: Sequence[SseEvent]) -> list[SseEvent]:
    """The events a client can name (each carries its own id): what resumption is about. Where no
    event carries one, all of them (then the ids are judged missing by RUN-STREAM-EVENT-IDS)."""
    found = [e for e in events if e.own_id and e.id]
    return found if found else list(events)


def unnamed(events: Sequence[SseEvent]) -> list[str]:
    """The events without an id of their own, but an opening frame: a server may greet each
    connection with a frame of its own (metadata, a counter) before the run's named events."""
    missing = [f"#{i} {e.event}" for i, e in enumerate(events) if not (e.own_id and e.id)]
    opening = bool(events) and not events[0].own_id and any(e.own_id and e.id for e in events)
    return missing[1:] if opening else missing


def shown(events: Sequence[SseEvent]) -> list[str]:
    """Events as `id:event` for failure text (short)."""
    out = [f"{e.id}:{e.event}" for e in events]
    return out if len(out) <= 12 else [*out[:6], f"... {len(out) - 12} more ...", *out[-6:]]


def list_of(body: Any) -> list[Any] | None:
    """A list answer: a bare array, or the array under `items`."""
    if isinstance(body, dict):
        body = body.get("items")
    return body if isinstance(body, list) else None


def value_at(body: Any, key: str) -> Any:
    for part in key.split(".") if key else []:
        body = body.get(part) if isinstance(body, dict) else None
    return body


def statuses_of(entry: Entry) -> dict[str, Any] | None:
    """{document id: status} of a knowledge-base status answer; None when not an array of {id}."""
    body = body_of(entry)
    if not isinstance(body, list) or not all(isinstance(e, dict) for e in body):
        return None
    return {str(e.get("id")): e.get("status") for e in body}


# --- judging ----------------------------------------------------------------------------------


Verdict = tuple[bool, Any]  # whether it holds, and what was seen


def evaluate(check: Check, entries: Sequence[Entry]) -> Verdict:
    """Judge a declared check on `entries` (the trail it indexes)."""
    judge = _JUDGES[check["kind"]]
    return judge(check, entries)


def holds(check: Check, entries: Sequence[Entry]) -> bool:
    return evaluate(check, entries)[0]


def _status(check: Check, entries: Sequence[Entry]) -> Verdict:
    status = entries[check["entry"]].status
    return status in check["statuses"], f"HTTP {status}" if status else "no answer"


def _status_class(check: Check, entries: Sequence[Entry]) -> Verdict:
    status = entries[check["entry"]].status or 0
    ok = status // 100 in check.get("classes", []) or status in check.get("statuses", [])
    return ok, f"HTTP {status}" if status else "no answer"


def _header(check: Check, entries: Sequence[Entry]) -> Verdict:
    headers = {k.lower(): v for k, v in entries[check["entry"]].response_headers.items()}
    value = headers.get(check["name"], "")
    flags = re.IGNORECASE if check.get("ignore_case") else 0
    found = bool(value) and re.search(check["pattern"], value, flags) is not None
    return found, value or f"no {check['name']} header"


def _answer(check: Check, entries: Sequence[Entry]) -> Verdict:
    entry = entries[check["entry"]]
    return not entry.fault and entry.status is not None, entry.fault or f"HTTP {entry.status}"


def _strict_json(check: Check, entries: Sequence[Entry]) -> Verdict:
    entry = entries[check["entry"]]
    if entry.stream is not None:
        for event in events_of(entry):
            if (wrong := strictjson.problem(event.data)) is not None:
                return False, f"event {event.id or '(no id)'} {event.event}: {wrong}"
        return True, "every event's data strict JSON"
    wrong = strictjson.read(bytes(entry.response_body))[1]
    return wrong is None, wrong or "strict JSON"


def _stream_ends(check: Check, entries: Sequence[Entry]) -> Verdict:
    stream = entries[check["entry"]].stream or {}
    ended = bool(stream.get("closed_by_server"))
    return ended, "ended" if ended else f"still open ({stream.get('cut', 'no answer')})"


def _event_ids(check: Check, entries: Sequence[Entry]) -> Verdict:
    missing = unnamed(events_of(entries[check["entry"]]))
    return not missing, f"events without an id: {missing[:10]}"


def sequence(parts: Sequence[dict[str, Any]], entries: Sequence[Entry]) -> list[SseEvent]:
    """The events a sequence names: slices of entries' events, one after the other."""
    found: list[SseEvent] = []
    for part in parts:
        found += events_of(entries[part["entry"]])[part.get("from", 0) : part.get("to")]
    return found


def _events_equal(check: Check, entries: Sequence[Entry]) -> Verdict:
    got, expected = (
        named(sequence(check["got"], entries)),
        named(sequence(check["expected"], entries)),
    )
    return [event_key(e) for e in got] == [event_key(e) for e in expected], shown(got)


def _events_new(check: Check, entries: Sequence[Entry]) -> Verdict:
    seen = {e.id for e in named(sequence(check["seen"], entries))}
    repeated = [e for e in named(sequence(check["got"], entries)) if e.id in seen]
    return not repeated, f"repeated: {shown(repeated)}"


def _field(check: Check, entries: Sequence[Entry]) -> Verdict:
    value = value_at(body_of(entries[check["entry"]]), check["key"])
    if "in" in check:
        return value in check["in"], value
    return value not in check["not_in"], value


def _counts(check: Check, entries: Sequence[Entry]) -> Verdict:
    lengths = [len(found) if (found := list_of(body_of(entries[i]))) is not None else None
               for i in check["entries"]]  # fmt: skip
    return lengths == check["equals"], lengths


def _listed(check: Check, entries: Sequence[Entry]) -> Verdict:
    """The values of `key` of the items of list answers, together, are `equals` (in any order)."""
    found = [item.get(check["key"]) for i in check["entries"]
             for item in list_of(body_of(entries[i])) or [] if isinstance(item, dict)]  # fmt: skip
    return sorted(found, key=str) == sorted(check["equals"], key=str), found


def _documents_settled(check: Check, entries: Sequence[Entry]) -> Verdict:
    """Nothing more to learn by waiting: every named document terminal, or no status answer."""
    entry = entries[check["entry"]]
    statuses = statuses_of(entry)
    if entry.status != 200 or statuses is None:
        return True, f"HTTP {entry.status}"
    return all(statuses.get(i) in TERMINAL_DOCUMENT for i in check["ids"]), statuses


def _documents_terminal(check: Check, entries: Sequence[Entry]) -> Verdict:
    entry = entries[check["entry"]]
    statuses = statuses_of(entry) if entry.status == 200 else None
    if statuses is None:
        return False, body_of(entry) if entry.response_body else f"HTTP {entry.status}"
    return all(statuses.get(i) in TERMINAL_DOCUMENT for i in check["ids"]), statuses


def mismatches(sent: Any, got: Any, path: str = "") -> list[str]:
    """Where `got` differs from what was `sent` (every sent field, recursively; extra fields ok)."""
    if isinstance(sent, dict):
        if not isinstance(got, dict):
            return [f"{path or 'body'}: sent an object, got {got!r}"]
        out: list[str] = []
        for key, value in sent.items():
            where = f"{path}.{key}" if path else key
            if key not in got:
                out.append(f"{where}: missing")
            else:
                out += mismatches(value, got[key], where)
        return out
    if sent != got or (type(sent) is bool and type(got) is not bool):
        return [f"{path or 'body'}: sent {sent!r}, got {got!r}"]
    return []


def _read_back(check: Check, entries: Sequence[Entry]) -> Verdict:
    """Every field `sent` (recursively) reads back in the answer; others may be there too."""
    wrong = mismatches(check["sent"], body_of(entries[check["entry"]]))
    return not wrong, wrong


_JUDGES: dict[str, Callable[[Check, Sequence[Entry]], Verdict]] = {
    "status": _status,
    "status-class": _status_class,
    "answer": _answer,
    "header": _header,
    "strict-json": _strict_json,
    "stream-ends": _stream_ends,
    "event-ids": _event_ids,
    "events-equal": _events_equal,
    "events-new": _events_new,
    "field": _field,
    "counts": _counts,
    "listed": _listed,
    "documents-settled": _documents_settled,
    "documents-terminal": _documents_terminal,
    "same-reads": same_reads,
    "read-back": _read_back,
}


def entries_of(check: Check) -> list[int]:
    """The trail indexes a check reads."""
    found = [check[name] for name in ("entry", "request") if name in check]
    found += list(check.get("entries", [])) + [i for i in check.get("idle") or [] if i is not None]
    for name in ("got", "expected", "seen"):
        found += [part["entry"] for part in check.get(name, [])]
    return found


def rebased(check: Check, index: Callable[[int], int]) -> Check:
    """The same check with every trail index passed through `index`."""
    out = dict(check)
    for name in ("entry", "request"):
        if name in out:
            out[name] = index(out[name])
    if "entries" in out:
        out["entries"] = [index(i) for i in out["entries"]]
    if out.get("idle"):
        out["idle"] = [None if i is None else index(i) for i in out["idle"]]
    for name in ("got", "expected", "seen"):
        if name in out:
            out[name] = [{**part, "entry": index(part["entry"])} for part in out[name]]
    if "until" in out:
        out["until"] = rebased(out["until"], index)
    return out
