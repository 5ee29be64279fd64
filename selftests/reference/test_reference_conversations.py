"""The reference server's conversations, messages and feedbacks."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import httpx
import pytest

BASE = "/api/ai/conversations"
CONVERSATION_KEYS = {"id", "threadId", "title", "status", "from", "options", "xpertId"}
MESSAGE_KEYS = {"id", "conversationId", "role", "content", "status", "createdAt", "updatedAt"}


def create_conversation(client: httpx.Client, **fields: object) -> dict:
    response = client.post(BASE, json=fields)
    assert response.status_code == 201, response.text
    return response.json()


def add_messages(client: httpx.Client, conversation_id: str, *contents: str) -> list[dict]:
    created = []
    for content in contents:
        response = client.post(f"{BASE}/{conversation_id}/messages", json={"content": content})
        assert response.status_code == 201, response.text
        created.append(response.json())
    return created


def test_conversation_lifecycle(client):
    conversation = create_conversation(client, title="Plans", threadId="t-1", options={"a": 1})
    assert set(conversation) >= CONVERSATION_KEYS | {"createdAt", "updatedAt"}
    path = f"{BASE}/{conversation['id']}"
    assert client.get(path).json() == conversation
    patched = client.patch(path, json={"title": "Holiday plans", "status": "busy"})
    assert patched.status_code == 200
    assert patched.json()["title"] == "Holiday plans" and patched.json()["options"] == {"a": 1}
    assert client.get(path).json()["status"] == "busy"
    deleted = client.delete(path)
    assert deleted.status_code == 202 and deleted.content == b""
    assert client.get(path).status_code == 404
    assert client.delete(path).status_code == 404
    assert client.post(f"{path}/messages", json={"content": "late"}).status_code == 404


def test_create_and_search_work_without_a_body(client):
    response = client.post(BASE)
    assert response.status_code == 201 and response.json()["status"] == "idle"
    listed = client.post(f"{BASE}/search")
    assert listed.status_code == 200
    assert response.json()["id"] in {c["id"] for c in listed.json()["items"]}
    assert listed.json()["total"] == len(listed.json()["items"])


def test_search_filters_and_pages(client):
    marker = "needle-7f3a"
    made = [create_conversation(client, title=f"{marker} {i}", xpertId=marker) for i in range(3)]
    found = client.post(f"{BASE}/search", json={"title": marker.upper(), "limit": 2, "offset": 1})
    assert found.status_code == 200
    assert found.json()["total"] == 3
    assert [c["id"] for c in found.json()["items"]] == [made[1]["id"], made[2]["id"]]
    typeorm = client.post(f"{BASE}/search", json={"where": {"xpertId": marker}, "take": 1}).json()
    assert typeorm["total"] == 3 and [c["id"] for c in typeorm["items"]] == [made[0]["id"]]


def test_messages_page_in_creation_order(client):
    conversation = create_conversation(client)
    messages = add_messages(client, conversation["id"], "one", "two", "three", "four", "five")
    assert set(messages[0]) == MESSAGE_KEYS and messages[0]["role"] == "user"
    path = f"{BASE}/{conversation['id']}/messages"
    page = client.get(path, params={"limit": 2, "offset": 1})
    assert page.status_code == 200
    assert page.json()["total"] == 5
    assert [m["content"] for m in page.json()["items"]] == ["two", "three"]
    one = client.get(f"{path}/{messages[4]['id']}")
    assert one.status_code == 200 and one.json() == messages[4]


@pytest.mark.parametrize(
    "params",
    [{}, {"limit": 2}, {"offset": 0}, {"limit": "two", "offset": 0}, {"limit": 1, "offset": "nan"}],
)
def test_message_paging_parameters_are_required_numbers(client, params):
    conversation = create_conversation(client)
    response = client.get(f"{BASE}/{conversation['id']}/messages", params=params)
    assert response.status_code == 400 and response.json()["statusCode"] == 400


def test_message_search_needs_no_body(client):
    conversation = create_conversation(client)
    add_messages(client, conversation["id"], "hello there", "general kenobi")
    client.post(f"{BASE}/{conversation['id']}/messages", json={"role": "assistant", "content": "x"})
    search = f"{BASE}/{conversation['id']}/messages/search"
    everything = client.post(search)
    assert everything.status_code == 200 and everything.json()["total"] == 3
    assert client.post(search, json={"role": "assistant"}).json()["total"] == 1
    assert client.post(search, json={"query": "KENOBI"}).json()["items"][0]["content"] == (
        "general kenobi"
    )


def test_feedbacks_are_created_listed_and_deleted(client):
    conversation = create_conversation(client)
    [message] = add_messages(client, conversation["id"], "rate me")
    feedbacks = f"{BASE}/{conversation['id']}/messages/{message['id']}/feedbacks"
    created = client.post(feedbacks, json={"rating": "like", "content": "good"})  # extension
    assert created.status_code == 201
    feedback = created.json()
    assert feedback["messageId"] == message["id"] and feedback["rating"] == "like"
    listed = client.get(feedbacks)
    assert listed.status_code == 200 and listed.json() == {"items": [feedback], "total": 1}
    deleted = client.delete(f"{feedbacks}/{feedback['id']}")
    assert deleted.status_code == 200 and deleted.json()["affected"] == 1
    assert client.get(feedbacks).json()["total"] == 0
    assert client.delete(f"{feedbacks}/{feedback['id']}").status_code == 404
    assert client.post(feedbacks, json={"rating": "meh"}).status_code == 400


def test_deleting_a_conversation_deletes_its_messages_and_feedbacks(client, reference_server):
    conversation = create_conversation(client)
    [message] = add_messages(client, conversation["id"], "doomed")
    feedbacks = f"{BASE}/{conversation['id']}/messages/{message['id']}/feedbacks"
    client.post(feedbacks, json={"rating": "dislike"})
    assert client.delete(f"{BASE}/{conversation['id']}").status_code == 202
    with closing(sqlite3.connect(reference_server.db_path)) as conn:
        left = conn.execute(
            "SELECT COUNT(*) FROM resources WHERE id=? OR parent IN (?, ?)",
            (message["id"], conversation["id"], message["id"]),
        ).fetchone()[0]
    assert left == 0


def test_another_principal_sees_nothing(client, client_b):
    conversation = create_conversation(client, title="private")
    [message] = add_messages(client, conversation["id"], "secret")
    path = f"{BASE}/{conversation['id']}"
    assert client_b.get(path).status_code == 404
    assert client_b.patch(path, json={"title": "mine"}).status_code == 404
    assert client_b.delete(path).status_code == 404
    assert client_b.get(f"{path}/messages", params={"limit": 1, "offset": 0}).status_code == 404
    assert client_b.get(f"{path}/messages/{message['id']}").status_code == 404
    assert client_b.post(f"{path}/messages/search").status_code == 404
    ids = {c["id"] for c in client_b.post(f"{BASE}/search").json()["items"]}
    assert conversation["id"] not in ids
    assert client.get(path).json()["title"] == "private"


@pytest.mark.parametrize(
    "body, field",
    [
        ({"title": 5}, "title"),
        ({"options": "x"}, "options"),
        ({"status": None}, "status"),
        ({"xpertId": None}, "xpertId"),
        ([], "body"),
    ],
)
def test_bad_conversation_input_is_400_and_changes_nothing(client, body, field):
    conversation = create_conversation(client, title="unchanged")
    created = client.post(BASE, json=body)
    assert created.status_code == 400 and field in created.json()["message"]
    patched = client.patch(f"{BASE}/{conversation['id']}", json=body)
    assert patched.status_code == 400
    assert client.get(f"{BASE}/{conversation['id']}").json() == conversation


def test_bad_message_input_is_400_and_stores_nothing(client):
    conversation = create_conversation(client)
    path = f"{BASE}/{conversation['id']}/messages"
    assert client.post(path, json={"role": 1, "content": "x"}).status_code == 400
    malformed = client.post(
        path, content=b'{"content": ', headers={"Content-Type": "application/json"}
    )
    assert malformed.status_code == 400
    assert client.post(f"{path}/search", json={"limit": "ten"}).status_code == 400
    assert client.post(f"{path}/search", json={"offset": 1.5}).status_code == 400
    assert (
        client.post(path, content=b"null", headers={"Content-Type": "application/json"}).status_code
        == 400
    )
    assert client.get(path, params={"limit": 10, "offset": 0}).json()["total"] == 0
