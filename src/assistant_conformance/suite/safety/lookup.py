"""Finding again what a create whose answer never came made: by the run's mark its body carried
(MARKS, `marker_of`: written with the create's intent in the ledger), wherever the interface
offers a search. Threads are
searched by their metadata, conversations by their title, store items by their namespace;
knowledge bases, files and context files have no list in the interface, and a create whose body
carried no mark (none was possible, or the check broke it) cannot be looked for: each of those is
said by name, as what may remain.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from assistant_conformance.contract.openapi import MARKER_KEY
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

# Where a create's body carries the run's mark, by kind: the thread metadata keys (the first
# holding a value that starts with the run's prefix), a conversation's title, a knowledge base's
# name, a store item's namespace (its first part), a file's name in its upload.
MARKS = {"thread": "metadata", "conversation": "title", "knowledge base": "name",
         "store item": "namespace", "context file": "file", "file": "file"}  # fmt: skip
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


def marker_of(kind: str, body: Any, content: bytes, prefix: str) -> dict[str, Any] | None:
    """Where the create's body carries the run's mark (MARKS), as a search for it would ask: None
    when it carries none (the body has no place for one, or the check broke it on purpose)."""
    place = MARKS.get(kind)
    if place == "file":
        named = FILE_NAME.search(content[:4096])
        name = named.group(1).decode("utf-8", "replace") if named else ""
        return {"file": name} if name.startswith(prefix) else None
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


Search = Callable[[httpx.Client, dict[str, Any]], list[tuple[str, Any]]]


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
        search = SEARCHES.get(item.kind)
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
        assert search is not None and client is not None and item.marker is not None
        key = f"{item.principal} {item.kind} {sorted(item.marker.items())}"
        if key in searched:
            continue
        searched.add(key)
        try:
            hits = search(client, item.marker)
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


def _threads(client: httpx.Client, marker: dict[str, Any]) -> list[tuple[str, Any]]:
    wanted = marker["metadata"]

    def carries(thread: dict[str, Any]) -> bool:
        metadata = thread.get("metadata") or {}
        return all(metadata.get(k) == v for k, v in wanted.items())

    found = _results(
        client,
        "/api/ai/threads/search",
        lambda at: {"metadata": wanted, "limit": SEARCH_PAGE, "offset": at},
    )
    return [
        (f"/api/ai/threads/{quote(str(t['thread_id']), safe='')}", None)
        for t in found
        if t.get("thread_id") and carries(t)
    ]


def _conversations(client: httpx.Client, marker: dict[str, Any]) -> list[tuple[str, Any]]:
    title = marker["title"]
    found = _results(
        client,
        "/api/ai/conversations/search",
        lambda at: {"where": {"title": title}, "take": SEARCH_PAGE, "skip": at},
    )
    return [
        (f"/api/ai/conversations/{quote(str(c['id']), safe='')}", None)
        for c in found
        if c.get("id") and c.get("title") == title
    ]


def _store_items(client: httpx.Client, marker: dict[str, Any]) -> list[tuple[str, Any]]:
    namespace = marker["namespace"]
    found = _results(
        client,
        "/api/ai/store/items/search",
        lambda at: {"namespace_prefix": namespace, "limit": SEARCH_PAGE, "offset": at},
    )
    return [
        ("/api/ai/store/items", {"namespace": i["namespace"], "key": i["key"]})
        for i in found
        if i.get("namespace") == namespace and "key" in i
    ]


SEARCHES: dict[str, Search] = {
    "thread": _threads,
    "conversation": _conversations,
    "store item": _store_items,
}
