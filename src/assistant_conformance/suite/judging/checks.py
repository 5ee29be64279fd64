"""Checks as data: how a finding is judged, written so that the same words judge it again on the
answers of a replay (suite/evidence/replay.py). A check names exchanges by their place on the trail
(suite/http/trail.py) and says what must hold of them.

Each kind is a CheckKind (its value the word a HAR holds) and a frozen value class here, its fields
typed: the class is the kind's constructor, and its `judge` the kind's one reading, used by the
tests that judge through it (findings.judge), by the replay and by the audit. CHECK_KINDS is the
table of the kinds a run writes, kind -> class: `from_words` reads a check's words (`as_json`:
`{"kind": ..., its fields}`, a finding's `_finding.check`, a polling loop's `_poll.until`) back
into its class through it. The audit judges two kinds of its own (audit/judge.py). The list of
kinds and their fields in docs/reproducing.md is generated from these classes (`kinds_markdown`),
and a self-test compares them. A new kind: its value in CheckKind, its class, its row in
CHECK_KINDS, the docs generated again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields, is_dataclass, replace
from enum import StrEnum
from typing import Any, ClassVar, Self

from assistant_conformance.suite.http import strictjson
from assistant_conformance.suite.http.sse import SseEvent, parse_events
from assistant_conformance.suite.http.trail import Entry
from assistant_conformance.suite.judging.idle_reads import same_reads

TERMINAL_RUN = ("success", "error", "timeout", "interrupted")
TERMINAL_DOCUMENT = ("finish", "error", "cancel")
LOOP_ANSWER = 0  # the entry a polling loop's `until` reads: each answer of the loop, alone


# --- reading an entry -----------------------------------------------------------------------------


def body_of(entry: Entry) -> Any:
    """The JSON body (read leniently), None when there is none."""
    return strictjson.lenient(bytes(entry.response_body)) if entry.response_body else None


def events_of(entry: Entry) -> list[SseEvent]:
    """The events its reader took (the bytes past them were not read as events)."""
    events = parse_events(bytes(entry.response_body).decode("utf-8", "replace"))
    taken = entry.stream.events if entry.stream is not None else entry.events
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


# --- the kinds ------------------------------------------------------------------------------------


class CheckKind(StrEnum):
    """The kinds of check, by the word a HAR writes."""

    STATUS = "status"
    STATUS_CLASS = "status-class"
    ANSWER = "answer"
    HEADER = "header"
    STRICT_JSON = "strict-json"
    STREAM_ENDS = "stream-ends"
    EVENT_IDS = "event-ids"
    EVENTS_EQUAL = "events-equal"
    EVENTS_NEW = "events-new"
    FIELD = "field"
    COUNTS = "counts"
    LISTED = "listed"
    DOCUMENTS_SETTLED = "documents-settled"
    DOCUMENTS_TERMINAL = "documents-terminal"
    SAME_READS = "same-reads"
    READ_BACK = "read-back"
    SCHEMATHESIS = "schemathesis"
    TEST = "test"
    RESPONSE_SCHEMA = "response-schema"  # the audit's own (audit/judge.py)
    JSON_BODY = "json-body"  # the audit's own (audit/judge.py)


Verdict = tuple[bool, Any]  # whether it holds, and what was seen

# What a field holds of the trail (a check rebased onto other entries moves them): one index, a
# list of them (None: no exchange), a list of event slices.
TRAIL_INDEX: Mapping[str, str] = {"trail": "one"}
TRAIL_INDEXES: Mapping[str, str] = {"trail": "each"}
TRAIL_SLICES: Mapping[str, str] = {"trail": "slices"}


class NotData(LookupError):
    """A check whose words do not judge it (its test's own code, a schemathesis check)."""


@dataclass(frozen=True, kw_only=True)
class Check:
    """A check of one kind (a class per kind, each in CHECK_KINDS or the audit's own)."""

    kind: ClassVar[CheckKind]

    def judge(self, entries: Sequence[Entry]) -> Verdict:
        """Whether it holds on `entries` (the trail it indexes), and what was seen."""
        raise NotData(f"a {self.kind} check is not judged by its words")

    def as_json(self, *, with_entry: bool = True) -> dict[str, Any]:
        """Its words as a HAR holds them: its kind, then each field given (None: left out);
        `with_entry=False`: a polling loop's `until`, which reads each answer of the loop."""
        words: dict[str, Any] = {"kind": self.kind.value, **_words(self)}
        if not with_entry:
            words.pop("entry", None)
        return words

    def reads(self) -> list[int]:
        """The trail indexes it reads."""
        found: list[int] = []
        for f in fields(self):
            value, role = getattr(self, f.name), f.metadata.get("trail")
            if role == "one" and value is not None:
                found.append(value)
            elif role == "each":
                found += [i for i in value or () if i is not None]
            elif role == "slices":
                found += [part.entry for part in value]
        return found

    def looks_at(self) -> int | None:
        """The exchange it looks at: its `entry`, else the last it reads (None: it reads none)."""
        entry = getattr(self, "entry", None)
        return entry if isinstance(entry, int) else max(self.reads(), default=None)

    def rebased(self, index: Callable[[int], int]) -> Self:
        """The same check with every trail index passed through `index`."""
        moved: dict[str, Any] = {}
        for f in fields(self):
            value, role = getattr(self, f.name), f.metadata.get("trail")
            if role == "one" and value is not None:
                moved[f.name] = index(value)
            elif role == "each" and value is not None:
                moved[f.name] = tuple(None if i is None else index(i) for i in value)
            elif role == "slices":
                moved[f.name] = tuple(replace(part, entry=index(part.entry)) for part in value)
        return replace(self, **moved)

    def label(self) -> str:
        """What names it in a finding's ID (suite/evidence/har.py): its kind."""
        return self.kind.value


def _words(value: Any) -> Any:
    """A value class as JSON: its fields by their written names, None left out; tuples as lists."""
    if is_dataclass(value) and not isinstance(value, type):
        return {
            f.metadata.get("json", f.name): _words(v)
            for f in fields(value)
            if (v := getattr(value, f.name)) is not None
        }
    if isinstance(value, tuple):
        return [_words(v) for v in value]
    return value


def _built(cls: Any, words: Mapping[str, Any]) -> Any:
    """A value class from its words: lists as tuples, event slices as EventSlice. A field
    missing is TypeError."""
    given: dict[str, Any] = {}
    for f in fields(cls):
        name = f.metadata.get("json", f.name)
        if name not in words:
            continue
        value = words[name]
        if f.metadata.get("trail") == "slices":
            value = tuple(_built(EventSlice, part) for part in value)
        elif isinstance(value, list):
            value = tuple(value)
        given[f.name] = value
    return cls(**given)


@dataclass(frozen=True, kw_only=True)
class EventSlice:
    """The events of one exchange from `start` to `end` (a list of slices: one after the other)."""

    entry: int
    start: int | None = field(default=None, metadata={"json": "from"})
    end: int | None = field(default=None, metadata={"json": "to"})


def sequence(parts: Sequence[EventSlice], entries: Sequence[Entry]) -> list[SseEvent]:
    """The events a list of slices names, one after the other."""
    found: list[SseEvent] = []
    for part in parts:
        found += events_of(entries[part.entry])[part.start or 0 : part.end]
    return found


# --- one class per kind ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class StatusCheck(Check):
    """The answer's status is one of `statuses`."""

    kind = CheckKind.STATUS
    entry: int = field(metadata=TRAIL_INDEX)
    statuses: tuple[int, ...]

    def judge(self, entries: Sequence[Entry]) -> Verdict:
        status = entries[self.entry].status
        return status in self.statuses, f"HTTP {status}" if status else "no answer"


@dataclass(frozen=True, kw_only=True)
class StatusClassCheck(Check):
    """The answer's status is of one of `classes` (2: any 2xx), or one of `statuses`."""

    kind = CheckKind.STATUS_CLASS
    entry: int = field(metadata=TRAIL_INDEX)
    classes: tuple[int, ...] = ()
    statuses: tuple[int, ...] | None = None

    def judge(self, entries: Sequence[Entry]) -> Verdict:
        status = entries[self.entry].status or 0
        ok = status // 100 in self.classes or status in (self.statuses or ())
        return ok, f"HTTP {status}" if status else "no answer"


@dataclass(frozen=True, kw_only=True)
class AnswerCheck(Check):
    """A whole answer within the bounds (no fault of the door)."""

    kind = CheckKind.ANSWER
    entry: int = field(metadata=TRAIL_INDEX)

    def judge(self, entries: Sequence[Entry]) -> Verdict:
        entry = entries[self.entry]
        return not entry.fault and entry.status is not None, entry.fault or f"HTTP {entry.status}"


@dataclass(frozen=True, kw_only=True)
class HeaderCheck(Check):
    """The answer's header `name` (lower case) matches the regular expression `pattern`."""

    kind = CheckKind.HEADER
    entry: int = field(metadata=TRAIL_INDEX)
    name: str
    pattern: str
    ignore_case: bool = False

    def judge(self, entries: Sequence[Entry]) -> Verdict:
        headers = {k.lower(): v for k, v in entries[self.entry].response_headers.items()}
        value = headers.get(self.name, "")
        flags = re.IGNORECASE if self.ignore_case else 0
        found = bool(value) and re.search(self.pattern, value, flags) is not None
        return found, value or f"no {self.name} header"


@dataclass(frozen=True, kw_only=True)
class StrictJsonCheck(Check):
    """The JSON body (or every event's data) is RFC 8259 JSON."""

    kind = CheckKind.STRICT_JSON
    entry: int = field(metadata=TRAIL_INDEX)

    def judge(self, entries: Sequence[Entry]) -> Verdict:
        entry = entries[self.entry]
        if entry.stream is not None:
            for event in events_of(entry):
                if (wrong := strictjson.problem(event.data)) is not None:
                    return False, f"event {event.id or '(no id)'} {event.event}: {wrong}"
            return True, "every event's data strict JSON"
        wrong = strictjson.read(bytes(entry.response_body))[1]
        return wrong is None, wrong or "strict JSON"


@dataclass(frozen=True, kw_only=True)
class StreamEndsCheck(Check):
    """The server ended the stream."""

    kind = CheckKind.STREAM_ENDS
    entry: int = field(metadata=TRAIL_INDEX)

    def judge(self, entries: Sequence[Entry]) -> Verdict:
        stream = entries[self.entry].stream
        ended = stream is not None and bool(stream.closed_by_server)
        return ended, "ended" if ended else f"still open ({stream.cut if stream else 'no answer'})"


@dataclass(frozen=True, kw_only=True)
class EventIdsCheck(Check):
    """Every event of the stream has its own id (an opening frame without one excepted)."""

    kind = CheckKind.EVENT_IDS
    entry: int = field(metadata=TRAIL_INDEX)

    def judge(self, entries: Sequence[Entry]) -> Verdict:
        missing = unnamed(events_of(entries[self.entry]))
        return not missing, f"events without an id: {missing[:10]}"


@dataclass(frozen=True, kw_only=True)
class EventsEqualCheck(Check):
    """The events `got` are the events `expected` (id, name, data), of those that carry an id."""

    kind = CheckKind.EVENTS_EQUAL
    got: tuple[EventSlice, ...] = field(metadata=TRAIL_SLICES)
    expected: tuple[EventSlice, ...] = field(metadata=TRAIL_SLICES)

    def judge(self, entries: Sequence[Entry]) -> Verdict:
        got, expected = named(sequence(self.got, entries)), named(sequence(self.expected, entries))
        return [event_key(e) for e in got] == [event_key(e) for e in expected], shown(got)


@dataclass(frozen=True, kw_only=True)
class EventsNewCheck(Check):
    """No event of `got` has the id of an event of `seen`."""

    kind = CheckKind.EVENTS_NEW
    got: tuple[EventSlice, ...] = field(metadata=TRAIL_SLICES)
    seen: tuple[EventSlice, ...] = field(metadata=TRAIL_SLICES)

    def judge(self, entries: Sequence[Entry]) -> Verdict:
        seen = {e.id for e in named(sequence(self.seen, entries))}
        repeated = [e for e in named(sequence(self.got, entries)) if e.id in seen]
        return not repeated, f"repeated: {shown(repeated)}"


@dataclass(frozen=True, kw_only=True)
class FieldCheck(Check):
    """The value at `key` (dotted) of the JSON body is in `in`, or not in `not_in` (one of them)."""

    kind = CheckKind.FIELD
    entry: int = field(metadata=TRAIL_INDEX)
    key: str
    in_: tuple[Any, ...] | None = field(default=None, metadata={"json": "in"})
    not_in: tuple[Any, ...] | None = None

    def __post_init__(self) -> None:
        if (self.in_ is None) == (self.not_in is None):
            raise ValueError("a field check says `in` or `not_in`, one of them")

    def judge(self, entries: Sequence[Entry]) -> Verdict:
        value = value_at(body_of(entries[self.entry]), self.key)
        if self.in_ is not None:
            return value in self.in_, value
        return value not in (self.not_in or ()), value


@dataclass(frozen=True, kw_only=True)
class CountsCheck(Check):
    """The lengths of list answers (a bare array, or its `items`) are `equals`, in order."""

    kind = CheckKind.COUNTS
    entries: tuple[int, ...] = field(metadata=TRAIL_INDEXES)
    equals: tuple[int | None, ...]

    def judge(self, entries: Sequence[Entry]) -> Verdict:
        lengths = [
            len(found) if (found := list_of(body_of(entries[i]))) is not None else None
            for i in self.entries
        ]
        return lengths == list(self.equals), lengths


@dataclass(frozen=True, kw_only=True)
class ListedCheck(Check):
    """The values at `key` of the items of list answers, together, are `equals` (in any order)."""

    kind = CheckKind.LISTED
    entries: tuple[int, ...] = field(metadata=TRAIL_INDEXES)
    key: str
    equals: tuple[Any, ...]

    def judge(self, entries: Sequence[Entry]) -> Verdict:
        found = [
            item.get(self.key)
            for i in self.entries
            for item in list_of(body_of(entries[i])) or []
            if isinstance(item, dict)
        ]
        return sorted(found, key=str) == sorted(self.equals, key=str), found


@dataclass(frozen=True, kw_only=True)
class DocumentsSettledCheck(Check):
    """Nothing more to learn by waiting: every document `ids` names is terminal, or the answer is
    no status answer."""

    kind = CheckKind.DOCUMENTS_SETTLED
    entry: int = field(metadata=TRAIL_INDEX)
    ids: tuple[str, ...]

    def judge(self, entries: Sequence[Entry]) -> Verdict:
        entry = entries[self.entry]
        statuses = statuses_of(entry)
        if entry.status != 200 or statuses is None:
            return True, f"HTTP {entry.status}"
        return all(statuses.get(i) in TERMINAL_DOCUMENT for i in self.ids), statuses


@dataclass(frozen=True, kw_only=True)
class DocumentsTerminalCheck(Check):
    """A knowledge-base status answer in which every document `ids` names is terminal."""

    kind = CheckKind.DOCUMENTS_TERMINAL
    entry: int = field(metadata=TRAIL_INDEX)
    ids: tuple[str, ...]

    def judge(self, entries: Sequence[Entry]) -> Verdict:
        entry = entries[self.entry]
        statuses = statuses_of(entry) if entry.status == 200 else None
        if statuses is None:
            return False, body_of(entry) if entry.response_body else f"HTTP {entry.status}"
        return all(statuses.get(i) in TERMINAL_DOCUMENT for i in self.ids), statuses


@dataclass(frozen=True, kw_only=True)
class SameReadsCheck(Check):
    """Pairs of reads (`entries`: before, after) read the same, but where two idle reads before
    (`idle`, one per pair) already differed; each filtered by its `filters` entry
    (judging/idle_reads.py); `request`: the request between them."""

    kind = CheckKind.SAME_READS
    entries: tuple[int, ...] = field(metadata=TRAIL_INDEXES)
    idle: tuple[int | None, ...] | None = field(default=None, metadata=TRAIL_INDEXES)
    filters: tuple[dict[str, Any] | None, ...] | None = None
    request: int | None = field(default=None, metadata=TRAIL_INDEX)

    def judge(self, entries: Sequence[Entry]) -> Verdict:
        return same_reads(entries, self.entries, self.idle, self.filters, self.request)


@dataclass(frozen=True, kw_only=True)
class ReadBackCheck(Check):
    """Every field of `sent` (recursively) reads back in the JSON body; others may be there too."""

    kind = CheckKind.READ_BACK
    entry: int = field(metadata=TRAIL_INDEX)
    sent: dict[str, Any]

    def judge(self, entries: Sequence[Entry]) -> Verdict:
        wrong = mismatches(self.sent, body_of(entries[self.entry]))
        return not wrong, wrong


@dataclass(frozen=True, kw_only=True)
class SchemathesisCheck(Check):
    """Schemathesis' check `check` holds on the answer: run again by the replay
    (suite/property/replayed.py), not judged by these words."""

    kind = CheckKind.SCHEMATHESIS
    name: str = field(metadata={"json": "check"})
    entry: int = field(metadata=TRAIL_INDEX)

    def label(self) -> str:
        return self.name


@dataclass(frozen=True, kw_only=True)
class OwnTestCheck(Check):
    """Its test's own code: a replay runs the test again at the run's seed."""

    kind = CheckKind.TEST


CHECK_KINDS: dict[CheckKind, type[Check]] = {
    c.kind: c
    for c in (
        StatusCheck,
        StatusClassCheck,
        AnswerCheck,
        HeaderCheck,
        StrictJsonCheck,
        StreamEndsCheck,
        EventIdsCheck,
        EventsEqualCheck,
        EventsNewCheck,
        FieldCheck,
        CountsCheck,
        ListedCheck,
        DocumentsSettledCheck,
        DocumentsTerminalCheck,
        SameReadsCheck,
        ReadBackCheck,
        SchemathesisCheck,
        OwnTestCheck,
    )
}


def from_words(words: Mapping[str, Any]) -> Check:
    """A check from its words (`as_json`'s). KeyError, ValueError, TypeError: no kind a run
    writes, or a field missing."""
    found: Check = _built(CHECK_KINDS[CheckKind(words["kind"])], words)
    return found


def evaluate(check: Check, entries: Sequence[Entry]) -> Verdict:
    """Judge a check on `entries` (the trail it indexes)."""
    return check.judge(entries)


def holds(check: Check, entries: Sequence[Entry]) -> bool:
    return evaluate(check, entries)[0]


# --- the kinds in the docs --------------------------------------------------------------------


def kinds_markdown(kinds: Mapping[CheckKind, type[Check]]) -> str:
    """The kinds and their fields as a Markdown table (docs/reproducing.md holds it)."""
    rows = ["| kind | fields | holds when |", "|---|---|---|"]
    for kind, cls in kinds.items():
        shown_fields = ", ".join(_field_md(f) for f in fields(cls)) or "none"
        what = " ".join((cls.__doc__ or "").split())
        rows.append(f"| `{kind.value}` | {shown_fields} | {what} |")
    return "\n".join(rows) + "\n"


def _field_md(f: Any) -> str:
    """`` `statuses`: [int] ``; `?` after a name that may be left out; `index`: a trail index."""
    text = str(f.type)
    optional = text.endswith(" | None")
    text = text.removesuffix(" | None")
    if f.metadata.get("trail") in ("one", "each"):
        text = text.replace("int", "index")
    text = text.replace("EventSlice", "{entry, from?, to?}").replace("dict[str, Any]", "object")
    text = re.sub(r"tuple\[(.*), \.\.\.\]", r"[\1]", text).replace("Any", "JSON")
    text = text.replace(" | ", " or ")
    optional = optional or f.default is not MISSING
    return f"`{f.metadata.get('json', f.name)}{'?' if optional else ''}`: {text}"
