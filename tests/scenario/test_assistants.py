"""Assistants (interface 4.3): search, count consistent with search, get what search finds.

Assistants are read-only in the contract: the tests read what the target has and create nothing.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from assistant_conformance.suite.flows import AGREE_APART, AGREE_TRIES, SHAPE, items_of, json_of
from assistant_conformance.suite.judging import findings

SEARCH, COUNT = "/api/ai/assistants/search", "/api/ai/assistants/count"
PAGE, MAX_PAGES, MAX_READS = 10, 50, 50


def search_all(api: httpx.Client, query: dict[str, Any]) -> list[dict[str, Any]]:
    """Every assistant search finds with `query`, page by page (limit/offset, LangGraph shape)."""
    found: dict[str, dict[str, Any]] = {}
    for page_number in range(MAX_PAGES):
        response = api.post(SEARCH, json={**query, "limit": PAGE, "offset": page_number * PAGE})
        findings.require_success("ASST-STATUS", response, 201)
        page = [a for a in items_of(response) if isinstance(a, dict)]
        findings.require(
            SHAPE,
            all(isinstance(a.get("assistant_id"), str) for a in page),
            "assistants with a string assistant_id",
            page,
            response,
        )
        new = {a["assistant_id"]: a for a in page if a["assistant_id"] not in found}
        found.update(new)
        if len(page) < PAGE or not new:  # the last page, or a server repeating itself
            break
    return list(found.values())


def queries(api: httpx.Client) -> list[dict[str, Any]]:
    """No filter, and a filter by the graph of the first assistant found (when there is one)."""
    first = search_all(api, {})[:1]
    graph = first[0].get("graph_id") if first else None
    return [{}] + ([{"graph_id": graph}] if isinstance(graph, str) else [])


@pytest.mark.req("ASST-COUNT-CONSISTENT", "ASST-STATUS", SHAPE)
def test_count_equals_what_search_finds(api: httpx.Client) -> None:
    for query in queries(api):
        found, response = counted(api, query)
        if response is None:
            findings.not_judged(
                "ASST-COUNT-CONSISTENT",
                f"not judged: what search finds with {query} changed around each count, "
                f"{AGREE_TRIES} times {AGREE_APART:g} s apart (other traffic writes assistants)",
            )
            continue
        count = json_of(response)
        findings.expect(
            "ASST-COUNT-CONSISTENT",
            isinstance(count, int) and not isinstance(count, bool) and count == len(found),
            f"count {len(found)} with {query}, as search finds (the same before and after it)",
            count,
            response,
        )


def counted(
    api: httpx.Client, query: dict[str, Any]
) -> tuple[list[dict[str, Any]], httpx.Response | None]:
    """What search finds and the count, read while search finds the same before and after the
    count (again, AGREE_APART apart, at most AGREE_TRIES times); no count when it never did."""
    for _ in range(AGREE_TRIES):
        found = search_all(api, query)
        response = api.post(COUNT, json=query)
        findings.require_success("ASST-STATUS", response, 201)
        if ids(search_all(api, query)) == ids(found):
            return found, response
        time.sleep(AGREE_APART)
    return [], None


def ids(found: list[dict[str, Any]]) -> list[str]:
    return sorted(a["assistant_id"] for a in found)


@pytest.mark.req("ASST-GET-FOUND", "ASST-STATUS", SHAPE)
def test_every_assistant_found_can_be_read(api: httpx.Client) -> None:
    found = search_all(api, {})[:MAX_READS]
    if not found:
        pytest.skip("search finds no assistant on the target: nothing to read back")
    gone = []
    for assistant in found:
        assistant_id = assistant["assistant_id"]
        response = api.get(f"/api/ai/assistants/{quote(assistant_id, safe='')}")
        if response.status_code == 404 and assistant_id not in ids(search_all(api, {})):
            gone.append(assistant_id)  # gone since found, search says so too: another's doing
            continue
        findings.expect_status("ASST-STATUS", response, 200)
        body = json_of(response)
        findings.expect(
            "ASST-GET-FOUND",
            response.status_code == 200
            and isinstance(body, dict)
            and body.get("assistant_id") == assistant_id,
            f"assistant {assistant_id} read by its id",
            response,
            response,
        )
    if len(gone) == len(found):
        pytest.skip(f"not judged: every assistant found ({len(found)}) was gone when read")
