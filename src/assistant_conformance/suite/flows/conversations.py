"""Conversation and message flows (interface 4.5): create, page, search.

Bodies follow the deployed shapes (spec/openapi.yaml ConversationCreate, MessageCreate,
ConversationSearch); answers are read only by `id` and the `items` of list answers.
"""

from __future__ import annotations

from typing import Any

import httpx

from assistant_conformance.suite.flows import identifier, items_of, json_of
from assistant_conformance.suite.judging import findings
from assistant_conformance.suite.safety.ledger import Ledger

BASE = "/api/ai/conversations"


def conversation_url(conversation_id: str) -> str:
    return f"{BASE}/{conversation_id}"


def messages_url(conversation_id: str) -> str:
    return f"{BASE}/{conversation_id}/messages"


def create_conversation(api: httpx.Client, ledger: Ledger, label: str) -> str:
    """Create a conversation titled with the run prefix (201); track its delete; answer its id."""
    body = {"title": f"{ledger.run_prefix}-{label}", "options": {"run": ledger.run_prefix}}
    response = api.post(BASE, json=body)
    findings.require_success("CONV-STATUS", response, 201)
    conversation_id = identifier(response)
    ledger.track("DELETE", conversation_url(conversation_id))
    return conversation_id


def create_messages(api: httpx.Client, conversation_id: str, label: str, count: int) -> list[str]:
    """Create `count` messages (201 each); answer their ids in creation order."""
    ids = []
    for i in range(count):
        body = {"role": ("user", "assistant")[i % 2], "content": f"{label} message {i}"}
        response = api.post(messages_url(conversation_id), json=body)
        findings.require_success("MSG-STATUS", response, 201)
        ids.append(identifier(response))
    return ids


def list_page(api: httpx.Client, conversation_id: str, limit: int, offset: int) -> httpx.Response:
    return api.get(messages_url(conversation_id), params={"limit": limit, "offset": offset})


def ids_in(records: list[Any]) -> list[Any]:
    return [r.get("id") for r in records if isinstance(r, dict)]


def total_of(response: httpx.Response) -> Any:
    body = json_of(response)
    return body.get("total") if isinstance(body, dict) else None


def search_finds(
    api: httpx.Client, conversation_id: str, title: str
) -> tuple[bool, httpx.Response]:
    """Search by title (TypeORM style, as deployed), then unfiltered; whether either finds it."""
    response = api.post(f"{BASE}/search", json={"where": {"title": title}, "take": 100})
    if response.status_code < 300 and conversation_id in ids_in(items_of(response)):
        return True, response
    unfiltered = api.post(f"{BASE}/search")
    found = unfiltered.status_code < 300 and conversation_id in ids_in(items_of(unfiltered))
    return found, response
