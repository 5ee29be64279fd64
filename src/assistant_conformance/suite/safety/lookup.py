"""Finding again what a create whose answer never came made: by the run's mark its body carried
(`marker_of`: written with the create's intent in the ledger), wherever the interface offers a
search. Where a create carries the mark and what searches for it are contract/resources.py's
(`mark`, `search`): threads are searched by their metadata, conversations by their title, store
items by their namespace; knowledge bases, files and context files have no list in the
interface, and a create whose body carried no mark (none was possible, or the check broke it)
cannot be looked for: each of those is said by name, as what may remain.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from assistant_conformance.contract.openapi import MARKER_KEY
from assistant_conformance.contract.resources import UPLOAD, Resource, resource_at
from assistant_conformance.suite.http import exchange
from assistant_conformance.suite.http.observe import AnswerFault, Overdue
from assistant_conformance.suite.safety.removal import (
    ANONYMOUS,
    MAIN,
    NO_DELETE,
    UNANSWERED,
    Leftover,
    Removal,
)

# A mark in metadata (a thread's) is the first of these keys holding a value that starts with the
# run's prefix; a mark in a list (a store item's namespace) is its first part.
METADATA_MARKS = ("conformance_run", MARKER_KEY)
FILE_NAME = re.compile(rb'filename="([^"\r\n]*)"')
SEARCH_PAGE = 500  # results asked per search request
SEARCH_PAGES = 20  # searched at most, per mark
NO_LIST = "the interface offers no list of {kind}s to look for it by its mark"
NO_MARK = "its body carried no mark of the run to look for it by"
NO_TOKEN = "no token of the principal that sent it"


@dataclass(frozen=True)
class Unanswered:
    """An intent the ledger holds no answer to: what it may have made."""

    seq: int
    principal: str
    what: str  # METHOD /path
    kind: str
    marker: dict[str, Any] | None

    def named(self) -> str:
        mark = " ".join(f"{k} {v!r}" for k, v in (self.marker or {}).items())
        return f"{self.what} ({mark})" if mark else self.what


def sent_bytes(request: httpx.Request) -> bytes:
    """The bytes a request sends (a multipart upload read now, as the door reads it)."""
    return exchange.request_content(request) or b""


def sent_json(content: bytes) -> Any:
    try:
        return json.loads(content or b"null")
    except (ValueError, RecursionError):
        return None


def marker_of(resource: Resource, body: Any, content: bytes, prefix: str) -> dict[str, Any] | None:
    """Where the create's body carries the run's mark (the resource's `mark`), as a search for it
    would ask: None when it carries none (the body has no place for one, or the check broke it
    on purpose)."""
    place = resource.mark
    if place == UPLOAD:
        named = FILE_NAME.search(content[:4096])
        name = named.group(1).decode("utf-8", "replace") if named else ""
        return {UPLOAD: name} if name.startswith(prefix) else None
    if not isinstance(body, dict) or place is None:
        return None
    value = body.get(place)
    if place == "metadata":
        found = value if isinstance(value, dict) else {}
        marked = [k for k in METADATA_MARKS if _ours(found.get(k), prefix)]
        return {place: {marked[0]: found[marked[0]]}} if marked else None
    first = value[0] if isinstance(value, list) and value else value
    return {place: value} if _ours(first, prefix) else None


def _ours(value: Any, prefix: str) -> bool:
    return isinstance(value, str) and value.startswith(prefix)


def look_for(
    unanswered: list[Unanswered],
    clients: Mapping[str, httpx.Client],
    next_seq: Callable[[], int],
    removes: Callable[[Unanswered], bool],
) -> tuple[list[Removal], list[Leftover]]:
    """What the marks of `unanswered` find (to remove); and what stays said: each one that could
    not be looked for (`unfound`), and each of a kind nothing removes (`removes` False)."""
    found: dict[tuple[str, str], Removal] = {}
    unlooked: list[Leftover] = []
    searched: set[str] = set()
    why = UNANSWERED
    for item in unanswered:
        if not removes(item):
            unlooked.append(Leftover(item.kind, f"{why}; {NO_DELETE}", item.named()))
            continue
        resource = resource_at(item.what.partition(" ")[2])
        search = resource.search if resource is not None else None
        client = clients.get(MAIN if item.principal == ANONYMOUS else item.principal)
        reason = (
            NO_LIST.format(kind=item.kind)
            if search is None
            else NO_MARK
            if not item.marker
            else NO_TOKEN
            if client is None
            else ""
        )
        if reason:
            unlooked.append(Leftover(item.kind, f"{why}; {reason}", item.named(), unfound=True))
            continue
        assert resource is not None and client is not None and item.marker is not None
        key = f"{item.principal} {item.kind} {sorted(item.marker.items())}"
        if key in searched:
            continue
        searched.add(key)
        try:
            hits = _marked(client, resource, item.marker)
        except (httpx.HTTPError, AnswerFault, Overdue) as failed:
            said = f"{why}; its search failed ({failed})"
            unlooked.append(Leftover(item.kind, said, item.named(), unfound=True))
            continue
        for path, body in hits:
            principal = MAIN if item.principal == ANONYMOUS else item.principal
            found.setdefault(
                (principal, path), Removal(next_seq(), principal, "DELETE", path, body)
            )
    return list(found.values()), unlooked


def _marked(
    client: httpx.Client, resource: Resource, marker: dict[str, Any]
) -> list[tuple[str, Any]]:
    """What the resource's search finds carrying the run's mark: each one's delete (path, JSON
    body)."""
    assert resource.search is not None and resource.mark is not None
    search, place, delete = resource.search, resource.mark, resource.removed_by
    assert delete is not None
    wanted = marker[place]
    found = _results(client, search.route.path, lambda at: search.body(wanted, SEARCH_PAGE, at))
    marked = [item for item in found if _carries(item.get(place), wanted)]
    if resource.named_by:
        return [
            (delete.path, {k: item[k] for k in resource.named_by})
            for item in marked
            if all(k in item for k in resource.named_by)
        ]
    assert resource.id_field is not None
    return [
        (delete.filled(str(item[resource.id_field])), None)
        for item in marked
        if item.get(resource.id_field)
    ]


def _carries(value: Any, wanted: Any) -> bool:
    """Whether a found item's field carries the mark: each key of a mark in metadata, else the
    same value."""
    if isinstance(wanted, dict):
        found = value or {}
        return isinstance(found, dict) and all(found.get(k) == v for k, v in wanted.items())
    return value == wanted


def _results(client: httpx.Client, path: str, ask: Callable[[int], dict[str, Any]]) -> list[Any]:
    """Every result of a search, page by page (`ask(offset)`: the body of one page's request)."""
    results: list[Any] = []
    for page in range(SEARCH_PAGES):
        answer = client.post(path, json=ask(page * SEARCH_PAGE))
        answer.raise_for_status()
        body = answer.json()
        items = body.get("items") if isinstance(body, dict) else body
        items = [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []
        results += items
        if len(items) < SEARCH_PAGE:
            break
    return results
