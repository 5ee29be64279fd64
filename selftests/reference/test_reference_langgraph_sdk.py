"""The official LangGraph Python client (langgraph-sdk) works against the reference server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from conftest import TOKEN_A

langgraph_sdk = pytest.importorskip("langgraph_sdk")
from langgraph_sdk.errors import NotFoundError  # noqa: E402

ECHO_ID = "e809e711-7ffe-5960-821d-7d83c173c321"


@pytest.fixture
def sdk(reference_server) -> Iterator[object]:
    client = langgraph_sdk.get_sync_client(
        url=f"{reference_server.base_url}/api/ai",
        api_key=None,
        headers={"Authorization": f"Bearer {TOKEN_A}"},
    )
    yield client
    client.http.client.close()


def test_assistants_search_count_get(sdk):
    assistants = sdk.assistants.search(limit=100)
    assert {a["graph_id"] for a in assistants} >= {"echo", "counter"}
    assert sdk.assistants.count() == len(assistants)
    assert sdk.assistants.count(graph_id="echo") == 1
    assert sdk.assistants.get(ECHO_ID)["graph_id"] == "echo"


def test_thread_lifecycle(sdk):
    thread = sdk.threads.create(metadata={"suite": "sdk", "n": 1})
    thread_id = thread["thread_id"]
    assert sdk.threads.get(thread_id)["metadata"] == {"suite": "sdk", "n": 1}
    found = sdk.threads.search(metadata={"suite": "sdk"}, limit=100)
    assert thread_id in [t["thread_id"] for t in found]
    updated = sdk.threads.update(thread_id, metadata={"n": 2})
    assert updated["metadata"] == {"suite": "sdk", "n": 2}

    answer = sdk.threads.update_state(thread_id, {"topic": "tea"}, as_node="echo")
    assert answer["checkpoint"]["checkpoint_id"]
    assert sdk.threads.get_state(thread_id)["values"] == {"topic": "tea"}
    sdk.threads.update_state(thread_id, {"mood": "calm"})
    history = sdk.threads.get_history(thread_id)
    assert [h["values"] for h in history] == [{"topic": "tea", "mood": "calm"}, {"topic": "tea"}]

    copy = sdk.threads.copy(thread_id)
    assert copy["thread_id"] != thread_id
    assert sdk.threads.get_state(copy["thread_id"])["values"] == {"topic": "tea", "mood": "calm"}
    assert len(sdk.threads.get_history(copy["thread_id"])) == 2

    sdk.threads.delete(thread_id)
    with pytest.raises(NotFoundError):
        sdk.threads.get(thread_id)


def test_runs_stream_join_wait_list_get(sdk):
    thread_id = sdk.threads.create()["thread_id"]
    modes = ["values", "messages-tuple"]
    parts = list(sdk.runs.stream(thread_id, "echo", input={"text": "a b c"}, stream_mode=modes))
    assert parts[0].event == "metadata"
    run_id = parts[0].data["run_id"]
    tokens = [p.data[0]["content"] for p in parts if p.event == "messages"]
    assert "".join(tokens) == "a b c"
    assert parts[-1].event == "end"

    replay = list(sdk.runs.join_stream(thread_id, run_id))
    assert [(p.event, p.data) for p in replay] == [(p.event, p.data) for p in parts]
    later = list(sdk.runs.join_stream(thread_id, run_id, last_event_id=parts[2].id))
    assert [p.id for p in later] == [p.id for p in parts[3:]]

    values = sdk.runs.wait(thread_id, "counter", input={"n": 3})
    assert values["count"] == 3
    runs = sdk.runs.list(thread_id)
    assert [r["status"] for r in runs] == ["success", "success"]
    assert sdk.runs.get(thread_id, run_id)["run_id"] == run_id


def test_messages_mode_and_the_default_mode(sdk):
    thread_id = sdk.threads.create()["thread_id"]
    parts = list(sdk.runs.stream(thread_id, "echo", input={"text": "a b"}, stream_mode="messages"))
    partial, complete = ["messages/partial"] * 2, ["messages/complete"]
    events = [p.event for p in parts]
    assert events == ["metadata", "messages/metadata", *partial, *complete, "end"]
    assert [p.data[0]["content"] for p in parts[2:5]] == ["a", "a b", "a b"]
    default = list(sdk.runs.stream(thread_id, "echo", input={"text": "c"}))  # values alone
    assert [p.event for p in default] == ["metadata", "values", "values", "end"]
    assert default[-2].data["messages"][-1]["content"] == "c"


def test_run_create_and_cancel(sdk):
    thread_id = sdk.threads.create()["thread_id"]
    run = sdk.runs.create(thread_id, ECHO_ID, input={"text": "word " * 200})
    assert run["status"] == "pending"
    sdk.runs.cancel(thread_id, run["run_id"], wait=True)
    assert sdk.runs.get(thread_id, run["run_id"])["status"] == "interrupted"
    events = [p.event for p in sdk.runs.join_stream(thread_id, run["run_id"])]
    assert events[0] == "metadata" and events[-1] == "end"


def test_store_put_search_namespaces(sdk):
    sdk.store.put_item(["sdk", "notes"], "k1", {"text": "green tea"})
    sdk.store.put_item(["sdk", "notes"], "k2", {"text": "black coffee"})
    assert sdk.store.get_item(["sdk", "notes"], "k1")["value"] == {"text": "green tea"}
    found = sdk.store.search_items(["sdk"], filter={"text": "black coffee"})
    assert [i["key"] for i in found["items"]] == ["k2"]
    assert ["sdk", "notes"] in sdk.store.list_namespaces(prefix=["sdk"])["namespaces"]
    sdk.store.delete_item(["sdk", "notes"], "k1")
    assert sdk.store.get_item(["sdk", "notes"], "k1") is None  # LangGraph's null, not a 404
    assert sdk.store.get_item(["sdk", "never"], "k") is None


def test_async_client_streams(reference_server):
    async def scenario() -> list[str]:
        client = langgraph_sdk.get_client(
            url=f"{reference_server.base_url}/api/ai",
            api_key=None,
            headers={"Authorization": f"Bearer {TOKEN_A}"},
        )
        thread = await client.threads.create()
        stream = client.runs.stream(thread["thread_id"], "counter", stream_mode="custom")
        events = [p.event async for p in stream]
        await client.http.client.aclose()
        return events

    events = asyncio.run(scenario())
    assert events[0] == "metadata" and events[-1] == "end"
    assert events.count("custom") == 5
