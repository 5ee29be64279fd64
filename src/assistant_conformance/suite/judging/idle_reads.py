"""Reads of what a request should not have changed, before and after it, compared so that only
that request can explain a difference:

- a server may answer a fresh timestamp or checkpoint on every read of an idle resource, which is
  no effect of any request: the places where two reads made before the request already differed
  are left out (masked);
- a collection may hold more than what the run made (a thread's run list holding every thread's
  runs, a search another client's threads also match): a read may carry a filter (`where`) that
  keeps only the items the run made (those naming its resource's id, or carrying its mark), the
  same filter in the check's data, so that a replay judges it the same way;
- where a read still differs after the request, it is read again until two reads agree (the
  test's loop: flows/owner_reads.py); a read that keeps changing with no request of the run is
  other traffic's doing, left out of the check with that said.

A filter: {"key": dotted key or a list of them, "equals": value, "unnamed": "keep" | "drop"}: an
item is kept when its value at a key equals `equals`; an item without any of the keys is kept or
dropped as `unnamed` says (a run list whose items name no thread cannot tell another's apart).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assistant_conformance.suite.http import strictjson
from assistant_conformance.suite.http.trail import Entry

VARIES = "(varies between idle reads)"


def varying(first: Any, second: Any, path: str = "") -> set[str]:
    """The places (dotted paths) where two reads of an idle resource differ."""
    if isinstance(first, dict) and isinstance(second, dict):
        return {
            p
            for k in set(first) | set(second)
            for p in varying(first.get(k), second.get(k), f"{path}.{k}")
        }
    if isinstance(first, list) and isinstance(second, list) and len(first) == len(second):
        return {
            p
            for i, (a, b) in enumerate(zip(first, second, strict=True))
            for p in varying(a, b, f"{path}.{i}")
        }
    return set() if first == second else {path}


def masked(value: Any, places: set[str], path: str = "") -> Any:
    """`value` with what lies at `places` replaced by VARIES."""
    if path in places:
        return VARIES
    if isinstance(value, dict):
        return {k: masked(v, places, f"{path}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v, places, f"{path}.{i}") for i, v in enumerate(value)]
    return value


# --- what the run made, of a collection ----------------------------------------------------------

_ABSENT = object()


def _at(item: Any, key: str) -> Any:
    for part in key.split("."):
        if not isinstance(item, dict) or part not in item:
            return _ABSENT
        item = item[part]
    return item


def filter_keeps(item: Any, where: dict[str, Any]) -> bool:
    """Whether a filter keeps an item of a list answer (see the module docstring)."""
    keys = where["key"] if isinstance(where["key"], list) else [where["key"]]
    named = [value for key in keys if (value := _at(item, key)) is not _ABSENT]
    if not named:
        return bool(where.get("unnamed", "keep") == "keep")
    return where["equals"] in named


def filtered(body: Any, where: dict[str, Any] | None) -> Any:
    """A list answer (a bare array, or one under `items`) with only the items `where` keeps."""
    if where is None:
        return body
    if isinstance(body, list):
        return [item for item in body if filter_keeps(item, where)]
    if isinstance(body, dict) and isinstance(body.get("items"), list):
        return {**body, "items": [item for item in body["items"] if filter_keeps(item, where)]}
    return body


def described(where: dict[str, Any] | None) -> str:
    """` (items whose thread_id is t1)`: a filter in words, for a finding ("" for none)."""
    if where is None:
        return ""
    keys = where["key"] if isinstance(where["key"], list) else [where["key"]]
    return f" (items whose {' or '.join(keys)} is {where['equals']!r})"


# --- a read, and a read compared with another ------------------------------------------------


def read_of(entry: Entry, where: dict[str, Any] | None = None) -> dict[str, Any]:
    """What an owner's read shows: its status and body, filtered (a search: which threads, in any
    order)."""
    raw = bytes(entry.response_body)
    body = filtered(strictjson.lenient(raw) if raw else None, where)
    if entry.method == "POST" and isinstance(body, list):
        body = sorted(str(e.get("thread_id")) for e in body if isinstance(e, dict))
    text = raw.decode("utf-8", "replace")
    return {"status": entry.status, "body": body if body is not None else text}


def compared(
    before: Entry, after: Entry, idle: Entry | None, where: dict[str, Any] | None = None
) -> tuple[Any, Any]:
    """The two reads as compared: filtered, and masked where the idle read already differed."""
    old, new = read_of(before, where), read_of(after, where)
    places = varying(old, read_of(idle, where)) if idle is not None else set()
    return masked(old, places), masked(new, places)


def same_reads(
    entries: Sequence[Entry],
    reads: Sequence[int],
    idle: Sequence[int | None] | None = None,
    wheres: Sequence[dict[str, Any] | None] | None = None,
    request: int | None = None,
) -> tuple[bool, Any]:
    """`reads` are pairs of indexes of `entries` (a read before, the same read after): each pair
    reads the same, but where the same read, made twice before (`idle`, one per pair), already
    differed; each pair filtered by its `wheres` entry; `request`: the request between them (said:
    when read). A same-reads check's reading (suite/judging/checks.py)."""
    pairs = list(zip(reads[::2], reads[1::2], strict=True))
    idle = idle or [None] * len(pairs)
    wheres = wheres or [None] * len(pairs)
    changed = []
    for (b, a), i, where in zip(pairs, idle, wheres, strict=True):
        before, after = compared(entries[b], entries[a], None if i is None else entries[i], where)
        if before != after:
            when = _when(entries[b], entries[a], None if request is None else entries[request])
            read = f"{entries[b].method} {entries[b].url}{described(where)}{when}"
            changed.append(f"{read}: {before!r} -> {after!r}"[:600])
    return not changed, changed


def _when(before: Entry, after: Entry, request: Entry | None) -> str:
    """`, read 0.12 s before and 0.30 s after the request`."""
    if request is None:
        return ""
    ahead = (request.started - before.started).total_seconds()
    later = (after.started - request.started).total_seconds()
    return f", read {ahead:.2f} s before and {later:.2f} s after the request"
