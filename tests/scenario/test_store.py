"""Store (interface 4.6): item search and namespaces, with and without a body; finding an item."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from assistant_conformance.suite.flows import SHAPE, is_success, items_of
from assistant_conformance.suite.judging import findings
from assistant_conformance.suite.safety.ledger import Ledger

ITEMS = "/api/ai/store/items"  # PUT/DELETE: LangGraph's extension, not in the contract
SEARCH = "/api/ai/store/items/search"
NAMESPACES = "/api/ai/store/namespaces"
LIST_FIELD = {SEARCH: "items", NAMESPACES: "namespaces"}
NO_BODY = object()


@pytest.mark.parametrize("path", [SEARCH, NAMESPACES], ids=["items-search", "namespaces"])
@pytest.mark.parametrize(
    "body",
    [
        pytest.param(NO_BODY, id="no-body", marks=pytest.mark.req("STORE-NO-BODY")),
        pytest.param({}, id="empty-object", marks=pytest.mark.req("ROBUST-NO-5XX")),
        pytest.param(
            {"limit": 5, "offset": 0}, id="with-body", marks=pytest.mark.req("ROBUST-NO-5XX")
        ),
    ],
)
@pytest.mark.req("STORE-STATUS", SHAPE)
def test_store_listing_answers_201_with_or_without_body(
    api: httpx.Client, path: str, body: Any
) -> None:
    if body is NO_BODY:
        response = api.post(path)  # no body and no Content-Type, as the reference call sends
        if not findings.expect_success("STORE-NO-BODY", response, "without a body"):
            findings.not_judged("STORE-STATUS", "not judged: STORE-NO-BODY failed first")
            return
    else:  # the suite's reading of a body the document leaves unspecified
        response = api.post(path, json=body)
        findings.expect("ROBUST-NO-5XX", response.status_code < 500, "no 5xx", response, response)
    findings.expect_status("STORE-STATUS", response, 201)
    if is_success(response):
        items_of(response, LIST_FIELD[path])


@pytest.mark.req("STORE-SEARCH-FINDS", "STORE-STATUS", SHAPE)
def test_search_and_namespaces_find_an_item_put_there(api: httpx.Client, ledger: Ledger) -> None:
    namespace = [ledger.run_prefix, "scenario"]
    item = {"namespace": namespace, "key": "item-1", "value": {"run": ledger.run_prefix}}
    put = api.put(ITEMS, json=item)
    if put.status_code in (404, 405, 501):
        pytest.skip(f"the target cannot put a store item (PUT {ITEMS}: HTTP {put.status_code})")
    findings.require(SHAPE, is_success(put), f"PUT {ITEMS}: HTTP 2xx", put, put)
    try:
        search = api.post(SEARCH, json={"namespace_prefix": [ledger.run_prefix], "limit": 10})
        findings.require_success("STORE-STATUS", search, 201)
        found = [
            (i.get("namespace"), i.get("key")) for i in items_of(search) if isinstance(i, dict)
        ]
        findings.expect(
            "STORE-SEARCH-FINDS",
            (namespace, "item-1") in found,
            f"item-1 in {namespace} found by its namespace prefix",
            found,
            search,
        )

        listed = api.post(NAMESPACES, json={"prefix": [ledger.run_prefix], "limit": 10})
        findings.require_success("STORE-STATUS", listed, 201)
        namespaces = paths_of(items_of(listed, "namespaces"))
        findings.expect(
            "STORE-SEARCH-FINDS", namespace in namespaces, f"{namespace} listed", namespaces, listed
        )
    finally:  # the ledger sends no body; LangGraph deletes an item by a JSON body
        api.request("DELETE", ITEMS, json={"namespace": namespace, "key": "item-1"})


def paths_of(entries: list[Any]) -> list[Any]:
    """The namespaces a listing names. The document shows no body: a namespace is read as a list of
    labels, or an object carrying one under `path` or `namespace` (spec/README.md)."""
    found = []
    for entry in entries:
        if isinstance(entry, dict):
            entry = entry.get("path", entry.get("namespace"))
        found.append(entry)
    return found
