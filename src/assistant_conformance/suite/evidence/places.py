"""Values at places: where a request's values came from (an earlier answer's body leaf, event id
or Location header: the HAR's `_provenance`), the value at such a place of an answer, and a
request with a new value put into one of its slots. suite/evidence/har.py writes these words and
suite/evidence/replay.py reads them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx

from assistant_conformance.suite.http import strictjson, trail
from assistant_conformance.suite.http.sse import parse_events
from assistant_conformance.suite.http.trail import Entry
from assistant_conformance.suite.judging import checks

SHORTEST = 6  # a request value this long found in an earlier answer is taken to come from it
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def needed(window: list[Entry], origins: list[Entry]) -> list[Entry]:
    """The earlier exchanges (fixtures', and what earlier tests created) whose answers gave values
    the window's requests use, and those these used, in the order they were made."""
    timeline = [*origins, *window]
    chosen: list[Entry] = []
    pending = list(window)
    while pending:
        entry = pending.pop()
        earlier = timeline[: next(i for i, e in enumerate(timeline) if e is entry)]
        for _, value in slots(entry):
            found = origin(earlier, value, False) if len(value) >= SHORTEST else None
            if found is not None and all(earlier[found[0]] is not e for e in [*chosen, *window]):
                chosen.append(earlier[found[0]])
                pending.append(earlier[found[0]])
    return [o for o in origins if any(o is c for c in chosen)]


def origin(earlier: list[Entry], value: str, events_only: bool) -> tuple[int, str] | None:
    """The first exchange of `earlier` whose answer gave `value`, and where; None when the client
    sent it first (a value of its own, such as a marker) or no answer gave it."""
    for i, entry in enumerate(earlier):
        if not events_only and any(v == value for _, v in slots(entry)):
            return None
        where = place(entry, value, events_only)
        if where is not None:
            return i, where
    return None


def provenance(entries: list[Entry], index: int) -> list[tuple[str, tuple[int, str]]]:
    """Where each value of request `index` that an earlier answer gave came from (its slot, and
    the entry and place of the first answer that gave it: later ones may only repeat it, and a
    replay's may not)."""
    found = []
    for slot, value in slots(entries[index]):
        short = slot == "header:last-event-id"
        if not value or (len(value) < SHORTEST and not short):
            continue
        if came := origin(entries[:index], value, events_only=short):
            found.append((slot, came))
    return found


def slots(entry: Entry) -> Iterator[tuple[str, str]]:
    """The places of a request a value can come from an answer: path segments, query values,
    `last-event-id`, a bearer credential, the string leaves of a JSON body."""
    url = httpx.URL(entry.url)
    for i, segment in enumerate(url.path.split("/")):
        yield f"path[{i}]", segment
    for name, value in url.params.multi_items():
        yield f"query:{name}", value
    headers = {k.lower(): v for k, v in entry.request_headers.items()}
    if "last-event-id" in headers:
        yield "header:last-event-id", headers["last-event-id"]
    scheme, _, token = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer":
        yield "header:authorization", token.strip()
    for path, value in leaves(strictjson.lenient(entry.request_body or b"")):
        yield f"body{path}", value


def place(entry: Entry, value: str, events_only: bool) -> str | None:
    body = bytes(entry.response_body)
    if entry.stream is not None or "event-stream" in _type(entry.response_headers):
        for k, event in enumerate(parse_events(body.decode("utf-8", "replace"))):
            if event.id == value:
                return f"event[{k}].id"
            if not events_only:
                for path, leaf in leaves(strictjson.lenient(event.data.encode())):
                    if leaf == value:
                        return f"event[{k}].data{path}"
        return None
    if events_only:
        return None
    for path, leaf in leaves(checks.body_of(entry)):
        if leaf == value:
            return f"body{path}"
    for name in ("location", "content-location"):
        header = {k.lower(): v for k, v in entry.response_headers.items()}.get(name, "")
        if header and header.rstrip("/").rsplit("/", 1)[-1] == value:
            return f"header:{name}"
    return None


def _type(headers: dict[str, str]) -> str:
    return {k.lower(): v for k, v in headers.items()}.get("content-type", "")


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(path, string) for every string of a JSON value: `.a.b`, `[2].id`."""
    pending = [(path, value)]
    while pending:
        where, item = pending.pop()
        if isinstance(item, str):
            yield where, item
        elif isinstance(item, dict):
            pending.extend((f"{where}.{k}", v) for k, v in reversed(list(item.items())))
        elif isinstance(item, list):
            pending.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(item))))


def place_value(entry: trail.Entry, at: str) -> str | None:
    """The value at a place of an answer (`place`'s words): body.x, event[k].id, header:x."""
    if at.startswith("header:"):
        header = {k.lower(): v for k, v in entry.response_headers.items()}.get(at[7:], "")
        return header.rstrip("/").rsplit("/", 1)[-1] or None
    if at.startswith("event["):
        number, _, rest = at[6:].partition("]")
        events = parse_events(bytes(entry.response_body).decode("utf-8", "replace"))
        if int(number) >= len(events):
            return None
        event = events[int(number)]
        if rest == ".id":
            return event.id
        return _dig(strictjson.lenient(event.data.encode()), rest.removeprefix(".data"))
    return _dig(checks.body_of(entry), at.removeprefix("body"))


def _dig(value: Any, path: str) -> str | None:
    for key, number in _STEP.findall(path):
        if key:
            value = value.get(key) if isinstance(value, dict) else None
        else:
            value = (
                value[int(number)] if isinstance(value, list) and int(number) < len(value) else None
            )
    return value if isinstance(value, str) else None


def put(
    slot: str, value: str, url: httpx.URL, headers: dict[str, str], body: bytes | None
) -> tuple[httpx.URL, dict[str, str], bytes | None]:
    """The request with `value` in `slot` (`slots`' words)."""
    if slot.startswith("path["):
        segments = url.path.split("/")
        segments[int(slot[5:-1])] = value
        url = url.copy_with(path="/".join(segments))
    elif slot.startswith("query:"):
        url = url.copy_set_param(slot[6:], value)
    elif slot == "header:last-event-id":
        headers = {
            **{k: v for k, v in headers.items() if k.lower() != "last-event-id"},
            "last-event-id": value,
        }
    elif slot == "header:authorization":
        headers = {**headers, "Authorization": f"Bearer {value}"}
    elif slot.startswith("body") and body is not None:
        document = strictjson.lenient(body or b"")
        if _set(document, slot[4:], value):
            body = json.dumps(document).encode("utf-8")
    return url, headers, body


def _set(document: Any, path: str, value: str) -> bool:
    steps = _STEP.findall(path)
    for key, number in steps[:-1]:
        document = (
            document.get(key)
            if key and isinstance(document, dict)
            else (document[int(number)] if isinstance(document, list) and number else None)
        )
    key, number = steps[-1] if steps else ("", "")
    if key and isinstance(document, dict):
        document[key] = value
        return True
    if number and isinstance(document, list) and int(number) < len(document):
        document[int(number)] = value
        return True
    return False
