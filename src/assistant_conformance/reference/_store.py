"""Routes of the store: item search and namespaces (the contract), and put/get/delete of items
(an extension in LangGraph's shape, so there is something to find).

Each item is resource kind "store_item", owned by the caller; its id joins owner, namespace and
key so that two principals' items never collide.

Reading an item that is not there (never written, deleted, or another principal's) answers 200
with a `null` body, as LangGraph's servers do: both official clients read that as "no item" (the
JavaScript client's getItem returns null and throws on a 404). The interface document does not
list this operation, so this is the reference's choice, not the contract's.
"""

from __future__ import annotations

import json
from contextlib import closing
from itertools import islice
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool
from pydantic import Field

from ._http import Options, parse_body
from ._input import MAX_COUNT
from .context import context, now_iso, principal
from .db import Database, Doc, narrows
from .errors import bad_request

ITEM = "store_item"
router = APIRouter()


class ItemRef(Options):
    namespace: list[str]
    key: str


class ItemPut(ItemRef):
    value: dict[str, Any]
    index: Any = None
    ttl: Any = None


class ItemSearch(Options):
    namespace_prefix: list[str] | None = None
    filter: dict[str, Any] | None = None
    limit: int = Field(10, ge=0, le=MAX_COUNT)
    offset: int = Field(0, ge=0, le=MAX_COUNT)
    query: str | None = None
    refresh_ttl: bool | None = None


class NamespaceList(Options):
    prefix: list[str] | None = None
    suffix: list[str] | None = None
    max_depth: int | None = Field(None, ge=1)
    limit: int = Field(100, ge=0, le=MAX_COUNT)
    offset: int = Field(0, ge=0, le=MAX_COUNT)


def _item_id(owner: str, namespace: list[str], key: str) -> str:
    return f"{owner}\x00{json.dumps([namespace, key])}"


def _check_ref(namespace: list[str], key: str) -> None:
    if not namespace or any(not label or "." in label for label in namespace):
        bad_request("namespace must be a non-empty array of non-empty labels without '.'")
    if not key:
        bad_request("key must be a non-empty string")


def _public(item: Doc, score: float | None = None) -> Doc:
    fields = ("namespace", "key", "value", "created_at", "updated_at")
    return {**{f: item[f] for f in fields}, "score": score}


@router.put("/store/items", status_code=204)
async def put_item(request: Request) -> Response:
    db, owner = context(request).db, principal(request)
    item = await parse_body(request, ItemPut)
    _check_ref(item.namespace, item.key)
    item_id = _item_id(owner, item.namespace, item.key)
    old = db.get(ITEM, item_id, owner)
    now = now_iso()
    doc = {
        "namespace": item.namespace,
        "key": item.key,
        "value": item.value,
        "created_at": old["created_at"] if old else now,
        "updated_at": now,
    }
    db.put(ITEM, item_id, owner, doc)
    return Response(status_code=204)


@router.get("/store/items")
async def get_item(request: Request) -> Doc | None:
    db, owner = context(request).db, principal(request)
    key = request.query_params.get("key")
    if not key:
        bad_request("query parameter key is required")
    namespace = (request.query_params.get("namespace") or "").split(".")
    _check_ref(namespace, key)
    item = db.get(ITEM, _item_id(owner, namespace, key), owner)
    return None if item is None else _public(item)  # null, not 404: LangGraph's answer


@router.delete("/store/items", status_code=204)
async def delete_item(request: Request) -> Response:
    ref = await parse_body(request, ItemRef)
    _check_ref(ref.namespace, ref.key)
    owner = principal(request)
    context(request).db.delete(ITEM, _item_id(owner, ref.namespace, ref.key), owner)
    return Response(status_code=204)


@router.post("/store/items/search", status_code=201)
async def search_items(request: Request) -> Doc:
    db, owner = context(request).db, principal(request)
    options = await parse_body(request, ItemSearch)
    return {"items": await run_in_threadpool(_search_items, db, owner, options)}


def _search_items(db: Database, owner: str, options: ItemSearch) -> list[Doc]:
    """Newest first, narrowed by the index, read on a worker thread (off the event loop)."""
    prefix = options.namespace_prefix or []
    equals = {f"namespace.{i}": label for i, label in enumerate(prefix) if narrows(label)}
    equals |= {f"value.{k}": v for k, v in (options.filter or {}).items() if narrows(v)}
    with closing(db.scan(ITEM, owner, equals)) as items:
        found = (
            (item, _score(options.query, item["value"]))
            for item in items
            if _has_prefix(item["namespace"], prefix)
            and _matches(options.filter or {}, item["value"])
        )
        if options.query:
            ranked = sorted((f for f in found if f[1]), key=lambda f: -(f[1] or 0))
            chosen = ranked[options.offset : options.offset + options.limit]
        else:
            chosen = list(islice(found, options.offset, options.offset + options.limit))
    return [_public(i, s) for i, s in chosen]


@router.post("/store/namespaces", status_code=201)
async def list_namespaces(request: Request) -> Doc:
    db, owner = context(request).db, principal(request)
    options = await parse_body(request, NamespaceList)
    prefix, suffix = options.prefix or [], options.suffix or []
    found: set[tuple[str, ...]] = set()
    for item in db.list(ITEM, owner):
        namespace = item["namespace"]
        if _has_prefix(namespace, prefix) and _has_prefix(namespace[::-1], suffix[::-1]):
            found.add(tuple(namespace[: options.max_depth]))
    namespaces = [list(ns) for ns in sorted(found)]
    return {"namespaces": namespaces[options.offset : options.offset + options.limit]}


def _has_prefix(namespace: list[str], prefix: list[str]) -> bool:
    """LangGraph's prefix match, where the label "*" matches any label."""
    if len(prefix) > len(namespace):
        return False
    return all(p in ("*", label) for p, label in zip(prefix, namespace, strict=False))


_OPERATORS = {
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a != b,
    "$gt": lambda a, b: a > b,
    "$gte": lambda a, b: a >= b,
    "$lt": lambda a, b: a < b,
    "$lte": lambda a, b: a <= b,
}


def _matches(filter: Doc, value: Doc) -> bool:
    """Equality per key, or `{"$gt": 3, ...}` comparisons; incomparable values do not match."""
    for field, wanted in filter.items():
        actual = value.get(field)
        ops = (
            wanted
            if isinstance(wanted, dict) and wanted and set(wanted) <= set(_OPERATORS)
            else None
        )
        try:
            ok = (
                all(_OPERATORS[op](actual, arg) for op, arg in ops.items())
                if ops
                else actual == wanted
            )
        except TypeError:
            ok = False
        if not ok:
            return False
    return True


def _score(query: str | None, value: Doc) -> float | None:
    """The share of the query's words found in the item's value (no embeddings here)."""
    words = (query or "").lower().split()
    if not words:
        return None
    text = json.dumps(value, ensure_ascii=False).lower()
    return sum(word in text for word in words) / len(words)
