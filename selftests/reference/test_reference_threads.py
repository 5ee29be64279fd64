"""The reference server's threads, runs, assistants and store routes (principal A unless noted)."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import httpx
import pytest
from conftest import TOKEN_A

API = "/api/ai"
ECHO_ID = "e809e711-7ffe-5960-821d-7d83c173c321"
COUNTER_ID = "3c2ddcc0-8014-58a3-be2e-582ab4be4c07"
LONG_TEXT = "word " * 300  # 300 tokens at 10 ms: about 3 s, time to observe and cancel
TOKENS = ["values", "messages-tuple", "updates"]  # one `messages` event per word (as the suite)


# --- helpers -----------------------------------------------------------------------------


def new_thread(client: httpx.Client, **body: Any) -> str:
    response = client.post(f"{API}/threads", json=body)
    assert response.status_code == 201, response.text
    return str(response.json()["thread_id"])


def start_run(client: httpx.Client, thread_id: str, text: str = LONG_TEXT, **body: Any) -> str:
    payload = {"assistant_id": "echo", "input": {"text": text}, "stream_mode": TOKENS, **body}
    response = client.post(f"{API}/threads/{thread_id}/runs", json=payload)
    assert response.status_code == 201, response.text
    return str(response.json()["run_id"])


def parse_sse(text: str) -> list[tuple[int, str, Any]]:
    events = []
    for frame in filter(None, text.strip().split("\n\n")):
        fields = dict(line.split(": ", 1) for line in frame.splitlines())
        events.append((int(fields["id"]), fields["event"], json.loads(fields["data"])))
    return events


def stream(client: httpx.Client, method: str, path: str, expect: int = 200, **kw: Any) -> list:
    with client.stream(method, f"{API}{path}", **kw) as response:
        assert response.status_code == expect
        assert response.headers["content-type"].startswith("text/event-stream")
        return parse_sse(response.read().decode())


def join(client: httpx.Client, thread_id: str, run_id: str, last_event_id: str | None = None):
    headers = {} if last_event_id is None else {"last-event-id": last_event_id}
    return stream(client, "GET", f"/threads/{thread_id}/runs/{run_id}/stream", headers=headers)


def run_status(client: httpx.Client, thread_id: str, run_id: str) -> str:
    return str(client.get(f"{API}/threads/{thread_id}/runs/{run_id}").json()["status"])


def wait_for(predicate: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)


# --- threads -----------------------------------------------------------------------------


def test_thread_crud_statuses_and_metadata_merge(client):
    thread_id = new_thread(client, metadata={"owner": "me", "tier": 1})
    thread = client.get(f"{API}/threads/{thread_id}").json()
    assert thread["status"] == "idle" and thread["values"] == {}
    assert set(thread) >= {"thread_id", "created_at", "updated_at", "metadata", "status", "values"}

    patched = client.patch(f"{API}/threads/{thread_id}", json={"metadata": {"tier": 2, "x": True}})
    assert patched.status_code == 200
    assert patched.json()["metadata"] == {"owner": "me", "tier": 2, "x": True}

    deleted = client.delete(f"{API}/threads/{thread_id}")
    assert deleted.status_code == 202 and deleted.content == b""
    assert client.get(f"{API}/threads/{thread_id}").status_code == 404
    assert client.get(f"{API}/threads/{thread_id}/state").status_code == 404


def test_create_with_given_id_and_if_exists(client):
    thread_id = str(uuid.uuid4())
    assert new_thread(client, thread_id=thread_id) == thread_id
    assert client.post(f"{API}/threads", json={"thread_id": thread_id}).status_code == 409
    again = client.post(f"{API}/threads", json={"thread_id": thread_id, "if_exists": "do_nothing"})
    assert again.status_code == 201 and again.json()["thread_id"] == thread_id
    assert client.post(f"{API}/threads").status_code == 201  # no body at all


def test_search_filters_and_pages(client):
    tag = str(uuid.uuid4())
    ids = [new_thread(client, metadata={"tag": tag, "i": i}) for i in range(3)]
    search = client.post(f"{API}/threads/search", json={"metadata": {"tag": tag}, "limit": 100})
    assert search.status_code == 200
    assert [t["thread_id"] for t in search.json()] == ids[::-1]  # newest first
    page = client.post(
        f"{API}/threads/search", json={"metadata": {"tag": tag}, "limit": 1, "offset": 1}
    )
    assert [t["thread_id"] for t in page.json()] == [ids[1]]
    only = client.post(f"{API}/threads/search", json={"metadata": {"tag": tag, "i": 2}}).json()
    assert [t["thread_id"] for t in only] == [ids[2]]
    busy = client.post(f"{API}/threads/search", json={"metadata": {"tag": tag}, "status": "busy"})
    assert busy.json() == []


def test_state_history_and_copy(client):
    thread_id = new_thread(client, metadata={"k": "v"})
    empty = client.get(f"{API}/threads/{thread_id}/state")
    assert empty.status_code == 200 and empty.json()["values"] == {}
    first = client.post(f"{API}/threads/{thread_id}/state", json={"values": {"a": 1}})
    assert first.status_code == 201
    checkpoint = first.json()["checkpoint"]
    assert checkpoint["thread_id"] == thread_id and checkpoint["checkpoint_id"]
    client.post(f"{API}/threads/{thread_id}/state", json={"values": {"b": 2}})
    state = client.get(f"{API}/threads/{thread_id}/state").json()
    assert state["values"] == {"a": 1, "b": 2}
    assert state["parent_checkpoint"]["checkpoint_id"] == checkpoint["checkpoint_id"]

    history = client.post(f"{API}/threads/{thread_id}/history")
    assert history.status_code == 201
    assert [h["values"] for h in history.json()] == [{"a": 1, "b": 2}, {"a": 1}]
    limited = client.post(f"{API}/threads/{thread_id}/history", json={"limit": 1}).json()
    assert [h["values"] for h in limited] == [{"a": 1, "b": 2}]
    before = {"before": state["checkpoint"]}
    older = client.post(f"{API}/threads/{thread_id}/history", json=before).json()
    assert [h["values"] for h in older] == [{"a": 1}]

    copy = client.post(f"{API}/threads/{thread_id}/copy")
    assert copy.status_code == 201
    copy_id = copy.json()["thread_id"]
    assert copy_id != thread_id and copy.json()["metadata"] == {"k": "v"}
    copied = client.post(f"{API}/threads/{copy_id}/history").json()
    assert [h["values"] for h in copied] == [{"a": 1, "b": 2}, {"a": 1}]
    assert copied[0]["checkpoint"]["thread_id"] == copy_id


# --- runs --------------------------------------------------------------------------------


def test_run_moves_pending_running_success(client):
    thread_id = new_thread(client)
    created = client.post(
        f"{API}/threads/{thread_id}/runs",
        json={"assistant_id": ECHO_ID, "input": {"text": "a b " * 75}},
    )
    assert created.status_code == 201
    run = created.json()
    assert run["status"] == "pending" and run["assistant_id"] == ECHO_ID
    wait_for(lambda: run_status(client, thread_id, run["run_id"]) == "running")
    assert client.get(f"{API}/threads/{thread_id}").json()["status"] == "busy"
    wait_for(lambda: run_status(client, thread_id, run["run_id"]) == "success")
    thread = client.get(f"{API}/threads/{thread_id}").json()
    assert thread["status"] == "idle"
    assert thread["values"]["messages"][-1]["content"] == ("a b " * 75).strip()


def test_stream_events_in_order_with_increasing_ids(client):
    thread_id = new_thread(client)
    body = {
        "assistant_id": "echo",
        "input": {"text": "hello brave new world"},
        "stream_mode": TOKENS,
    }
    events = stream(client, "POST", f"/threads/{thread_id}/runs/stream", expect=201, json=body)
    ids = [seq for seq, _, _ in events]
    assert ids == sorted(set(ids))
    assert events[0][1] == "metadata" and events[0][2]["attempt"] == 1
    assert events[-1][1] == "end"
    tokens = [data[0]["content"] for _, name, data in events if name == "messages"]
    assert "".join(tokens) == "hello brave new world"
    run_id = events[0][2]["run_id"]
    assert run_status(client, thread_id, run_id) == "success"
    assert join(client, thread_id, run_id) == events  # replay after finish


def run_events(client: httpx.Client, text: str, **body: Any) -> tuple[str, list]:
    """A new thread, an echo run on `text` streamed whole: its run id and its events."""
    payload = {"assistant_id": "echo", "input": {"text": text}, **body}
    path = f"/threads/{new_thread(client)}/runs/stream"
    events = stream(client, "POST", path, expect=201, json=payload)
    return events[0][2]["run_id"], events


def test_no_stream_mode_streams_values_alone(client):
    _, events = run_events(client, "a b")
    assert [name for _, name, _ in events] == ["metadata", "values", "values", "end"]
    assert [m["content"] for m in events[2][2]["messages"]] == ["a b", "a b"]


def test_messages_mode_sends_langgraph_message_events(client):
    run_id, events = run_events(client, "one two three", stream_mode="messages")
    ai = f"{run_id}-ai"
    names = [name for _, name, _ in events]
    partials = ["messages/partial"] * 3
    assert names == ["metadata", "messages/metadata", *partials, "messages/complete", "end"]
    assert events[1][2] == {ai: {"metadata": {"langgraph_node": "echo", "run_id": run_id}}}
    partial = [data for _, name, data in events if name == "messages/partial"]
    assert partial == [
        [{"type": "ai", "content": text, "id": ai}] for text in ("one", "one two", "one two three")
    ]
    assert events[5][2] == [{"type": "ai", "content": "one two three", "id": ai}]


def test_both_message_modes_each_send_their_own(client):
    modes = ["messages-tuple", "messages"]
    _, events = run_events(client, "x y", stream_mode=modes)
    names = [name for _, name, _ in events]
    assert names.count("messages") == 2 and names.count("messages/partial") == 2
    assert names.count("messages/complete") == 1
    tuples = [data for _, name, data in events if name == "messages"]
    assert [(chunk["type"], chunk["content"]) for chunk, _ in tuples] == [
        ("AIMessageChunk", "x"),
        ("AIMessageChunk", " y"),
    ]


def test_a_failing_run_completes_no_message(client):
    body = {"assistant_id": "echo", "input": {"text": "a b", "fail": "asked to"}}
    path = f"/threads/{new_thread(client)}/runs/stream"
    events = stream(client, "POST", path, expect=201, json=body | {"stream_mode": "messages"})
    names = [name for _, name, _ in events]
    assert names.count("messages/partial") == 2 and "messages/complete" not in names
    assert names[-2:] == ["error", "end"]


def test_last_event_id_resumes_after_it(client):
    thread_id = new_thread(client)
    run_id = start_run(client, thread_id, text="one two three four")
    everything = join(client, thread_id, run_id)
    assert join(client, thread_id, run_id, "3") == [e for e in everything if e[0] > 3]
    for from_start in ("", "-1", "abc"):
        assert join(client, thread_id, run_id, from_start) == everything
    assert join(client, thread_id, run_id, str(everything[-1][0])) == []


def test_join_while_running_tails_to_end_and_disconnect_keeps_run(client):
    thread_id = new_thread(client)
    run_id = start_run(client, thread_id, text="x " * 30)
    path = f"{API}/threads/{thread_id}/runs/{run_id}/stream"
    with client.stream("GET", path) as response:  # leave after the first event
        next(response.iter_lines())
    events = join(client, thread_id, run_id)  # joins mid-run, ends with the run
    assert events[-1][1] == "end"
    assert run_status(client, thread_id, run_id) == "success"
    assert len([e for e in events if e[1] == "messages"]) == 30


def test_cancel_interrupts_and_ends_the_stream(client):
    thread_id = new_thread(client)
    run_id = start_run(client, thread_id)
    wait_for(lambda: run_status(client, thread_id, run_id) == "running")
    cancelled = client.post(f"{API}/threads/{thread_id}/runs/{run_id}/cancel")
    assert cancelled.status_code == 201
    assert run_status(client, thread_id, run_id) == "interrupted"
    events = join(client, thread_id, run_id)
    assert events[0][1] == "metadata" and events[-1][1] == "end"
    assert len([e for e in events if e[1] == "messages"]) < 300
    again = client.post(f"{API}/threads/{thread_id}/runs/{run_id}/cancel", params={"wait": 1})
    assert again.status_code == 201 and again.json()["status"] == "interrupted"
    assert client.get(f"{API}/threads/{thread_id}").json()["status"] == "idle"


def test_wait_answers_final_values_after_the_run(client):
    thread_id = new_thread(client)
    response = client.post(
        f"{API}/threads/{thread_id}/runs/wait", json={"assistant_id": "counter", "input": {"n": 4}}
    )
    assert response.status_code == 201
    assert response.json() == {"count": 4}
    runs = client.get(f"{API}/threads/{thread_id}/runs", params={"limit": 5, "offset": 0}).json()
    assert runs[0]["status"] == "success"


def test_failing_run_ends_with_error_then_end(client):
    thread_id = new_thread(client)
    body = {"assistant_id": "echo", "input": {"text": "a b", "fail": "asked to"}}
    events = stream(client, "POST", f"/threads/{thread_id}/runs/stream", expect=201, json=body)
    assert [name for _, name, _ in events[-2:]] == ["error", "end"]
    assert events[-2][2]["message"] == "asked to"
    assert run_status(client, thread_id, events[0][2]["run_id"]) == "error"
    assert client.get(f"{API}/threads/{thread_id}").json()["status"] == "error"


def test_multitask_reject_and_interrupt(client):
    thread_id = new_thread(client)
    first = start_run(client, thread_id)
    body = {"assistant_id": "echo", "multitask_strategy": "reject"}
    assert client.post(f"{API}/threads/{thread_id}/runs", json=body).status_code == 409
    second = start_run(client, thread_id, text="short", multitask_strategy="interrupt")
    assert run_status(client, thread_id, first) == "interrupted"
    wait_for(lambda: run_status(client, thread_id, second) == "success")


def test_enqueued_runs_wait_their_turn(client):
    thread_id = new_thread(client)
    first = start_run(client, thread_id, text="a " * 100)
    second = start_run(client, thread_id, text="b")
    wait_for(lambda: run_status(client, thread_id, first) == "running")
    assert run_status(client, thread_id, second) == "pending"
    wait_for(lambda: run_status(client, thread_id, second) == "success")
    assert run_status(client, thread_id, first) == "success"


def test_on_disconnect_cancel_stops_the_run_and_if_not_exists_creates(client):
    thread_id = str(uuid.uuid4())
    body = {"assistant_id": "echo", "input": {"text": LONG_TEXT}}
    body |= {"on_disconnect": "cancel", "if_not_exists": "create"}
    with client.stream("POST", f"{API}/threads/{thread_id}/runs/stream", json=body) as response:
        lines = response.iter_lines()
        metadata_frame = [next(lines) for _ in range(3)]  # id, event, data; then hang up
    run_id = json.loads(metadata_frame[2].removeprefix("data: "))["run_id"]
    wait_for(lambda: run_status(client, thread_id, run_id) == "interrupted")


def test_runs_list_newest_first_and_paged(client):
    thread_id = new_thread(client)
    ids = [start_run(client, thread_id, text="hi") for _ in range(3)]
    listed = client.get(f"{API}/threads/{thread_id}/runs", params={"limit": 10, "offset": 0})
    assert listed.status_code == 200
    assert [r["run_id"] for r in listed.json()] == ids[::-1]
    page = client.get(f"{API}/threads/{thread_id}/runs", params={"limit": 1, "offset": 2}).json()
    assert [r["run_id"] for r in page] == [ids[0]]


def test_usage_counts_streamed_words_in_the_window(client):
    thread_id = new_thread(client)
    body = {"assistant_id": "echo", "input": {"text": "a b c"}}
    run = client.post(f"{API}/threads/{thread_id}/runs", json=body).json()
    wait_for(lambda: run_status(client, thread_id, run["run_id"]) == "success")
    hour = run["created_at"][:10] + " " + run["created_at"][11:13]  # its UTC yyyy-MM-dd HH
    for start, end in ((hour, hour), ("2000-01-01T00:00:00Z", "2999-01-01T00:00:00+00:00")):
        response = client.get(
            f"{API}/threads/{thread_id}/usage", params={"start": start, "end": end}
        )
        assert response.status_code == 200
        [row] = response.json()
        assert row["currency"] == "USD" and row["tokenUsed"] == 3 and row["priceUsed"] > 0
    past = {"start": "2000-01-01 00", "end": "2000-01-01 01"}
    assert client.get(f"{API}/threads/{thread_id}/usage", params=past).json()[0]["tokenUsed"] == 0


# --- assistants and store ----------------------------------------------------------------


def test_assistants_search_count_get(client):
    search = client.post(f"{API}/assistants/search")
    assert search.status_code == 201
    assert {a["assistant_id"] for a in search.json()} == {ECHO_ID, COUNTER_ID}
    count = client.post(f"{API}/assistants/count", json={"graph_id": "counter"})
    assert count.status_code == 201 and count.json() == 1
    filtered = client.post(f"{API}/assistants/search", json={"graph_id": "counter"}).json()
    assert [a["assistant_id"] for a in filtered] == [COUNTER_ID]
    got = client.get(f"{API}/assistants/{COUNTER_ID}")
    assert got.status_code == 200 and got.json()["graph_id"] == "counter"
    assert client.get(f"{API}/assistants/nope").status_code == 404


@pytest.mark.parametrize("body", [None, b"", b"{}"])
def test_store_routes_take_no_body(client, body):
    headers = {"Content-Type": "application/json"} if body is not None else {}
    for path, key in (("/store/items/search", "items"), ("/store/namespaces", "namespaces")):
        response = client.post(f"{API}{path}", content=body, headers=headers)
        assert response.status_code == 201 and isinstance(response.json()[key], list)


def test_a_null_body_is_not_an_object(client):
    headers = {"Content-Type": "application/json"}
    for path in ("/store/items/search", "/threads", "/threads/search", "/assistants/count"):
        response = client.post(f"{API}{path}", content=b"null", headers=headers)
        assert response.status_code == 400, path


def test_store_put_search_namespaces(client, client_b):
    ns = ["selftest", str(uuid.uuid4())]
    put = client.put(f"{API}/store/items", json={"namespace": ns, "key": "k", "value": {"n": 1}})
    assert put.status_code == 204
    found = client.post(f"{API}/store/items/search", json={"namespace_prefix": ns}).json()
    assert [(i["key"], i["value"]) for i in found["items"]] == [("k", {"n": 1})]
    spaces = client.post(f"{API}/store/namespaces", json={"prefix": ns[:1], "limit": 1000}).json()
    assert ns in spaces["namespaces"]
    other = client_b.post(f"{API}/store/items/search", json={"namespace_prefix": ns}).json()
    assert other["items"] == []


def test_a_missing_store_item_reads_as_null(client, client_b):
    """LangGraph's answer (its clients read null as "no item"); the interface lists no such read."""
    ns = ["selftest", str(uuid.uuid4())]
    params = {"namespace": ".".join(ns), "key": "k"}
    never = client.get(f"{API}/store/items", params=params)
    assert never.status_code == 200 and never.content == b"null"
    client.put(f"{API}/store/items", json={"namespace": ns, "key": "k", "value": {"n": 1}})
    assert client.get(f"{API}/store/items", params=params).json()["value"] == {"n": 1}
    assert client_b.get(f"{API}/store/items", params=params).json() is None
    client.request("DELETE", f"{API}/store/items", json={"namespace": ns, "key": "k"})
    assert client.get(f"{API}/store/items", params=params).json() is None


# --- isolation and bad input -------------------------------------------------------------


def test_other_principal_cannot_see_or_touch_a_thread(client, client_b):
    secret = str(uuid.uuid4())
    thread_id = new_thread(client, metadata={"secret": secret})
    run_id = start_run(client, thread_id, text="hi")
    base = f"{API}/threads/{thread_id}"
    assert client_b.get(base).status_code == 404
    assert client_b.patch(base, json={"metadata": {"x": 1}}).status_code == 404
    assert client_b.get(f"{base}/state").status_code == 404
    assert client_b.get(f"{base}/runs/{run_id}").status_code == 404
    assert client_b.post(f"{base}/runs", json={"assistant_id": "echo"}).status_code == 404
    assert client_b.delete(base).status_code == 404
    found = client_b.post(f"{API}/threads/search", json={"metadata": {"secret": secret}})
    assert found.json() == []
    assert client.get(base).json()["metadata"] == {"secret": secret}


def test_unknown_ids_are_404_json(client):
    thread_id = new_thread(client)
    missing = str(uuid.uuid4())
    for response in (
        client.get(f"{API}/threads/{missing}"),
        client.get(f"{API}/threads/{thread_id}/runs/{missing}"),
        client.get(f"{API}/threads/{thread_id}/runs/{missing}/stream"),
        client.post(f"{API}/threads/{thread_id}/runs/{missing}/cancel"),
        client.post(f"{API}/threads/{thread_id}/runs", json={"assistant_id": "no-such-graph"}),
    ):
        assert response.status_code == 404
        assert response.json()["statusCode"] == 404


FIXED_ID = (
    "0b5a3c1e-5f0e-4c1a-9b7e-1d2c3b4a5f60"  # fixed: parameter ids must match across xdist workers
)
BAD_REQUESTS = [
    ("POST", "/threads", b"{not json", None),
    ("POST", "/threads", b"[1, 2]", None),
    ("POST", "/threads", b'{"thread_id": "%s", "metadata": {"x": NaN}}' % FIXED_ID.encode(), None),
    ("POST", "/threads", {"thread_id": FIXED_ID, "metadata": "text"}, "metadata"),
    ("POST", "/threads", {"thread_id": "not-a-uuid"}, "thread_id"),
    ("POST", "/threads/search", {"limit": -1}, "limit"),
    ("POST", "/threads/search", {"limit": "5"}, "limit"),
    ("POST", "/threads/search", {"status": "sleeping"}, "status"),
    ("POST", "/assistants/search", {"offset": 1.5}, "offset"),
    ("POST", "/store/items/search", {"namespace_prefix": "a"}, "namespace_prefix"),
    ("POST", "/store/namespaces", {"max_depth": 0}, "max_depth"),
    ("PUT", "/store/items", {"namespace": ["a"], "key": "k", "value": 3}, "value"),
    ("PATCH", "/threads/{t}", {"metadata": [1]}, "metadata"),
    ("POST", "/threads/{t}/state", {"values": [1]}, "values"),
    ("POST", "/threads/{t}/history", {"limit": "x"}, "limit"),
    ("POST", "/threads/{t}/runs", {}, "assistant_id"),
    ("POST", "/threads/{t}/runs", {"assistant_id": 5}, "assistant_id"),
    ("POST", "/threads/{t}/runs", {"assistant_id": "echo", "stream_mode": "nope"}, "stream_mode"),
    ("POST", "/threads/{t}/runs", {"assistant_id": "echo", "input": "text"}, "input"),
    ("POST", "/threads/{t}/runs", {"assistant_id": "counter", "input": {"n": "3"}}, "input.n"),
    ("POST", "/threads/{t}/runs/stream", {"assistant_id": "echo", "metadata": 1}, "metadata"),
    ("POST", "/threads/{t}/runs/wait", {"assistant_id": "echo", "multitask_strategy": "x"}, None),
    ("GET", "/threads/{t}/runs?limit=abc&offset=0", None, "limit"),
    ("GET", "/threads/{t}/runs?limit=5", None, "offset"),
    ("GET", "/threads/{t}/runs?limit=-1&offset=0", None, "limit"),
    ("GET", "/threads/{t}/usage?start=2024-01-01", None, "end"),
    ("GET", "/threads/{t}/usage?start=yesterday&end=2024-01-01 10", None, "start"),
    ("POST", "/threads/{t}/runs/x/cancel?action=explode", None, "action"),
]


@pytest.fixture(scope="module")
def shared_client(reference_server):
    """One client for the many bad-input cases (a new httpx client costs ~0.2 s of TLS setup)."""
    headers = {"Authorization": f"Bearer {TOKEN_A}"}
    with httpx.Client(base_url=reference_server.base_url, headers=headers, verify=False) as client:
        yield client


@pytest.mark.parametrize(("method", "path", "body", "field"), BAD_REQUESTS)
def test_bad_input_is_400_and_stores_nothing(shared_client, method, path, body, field):
    client = shared_client
    thread_id = new_thread(client, metadata={"keep": True})
    kwargs: dict[str, Any] = {"content": body} if isinstance(body, bytes) else {"json": body}
    if isinstance(body, bytes):
        kwargs["headers"] = {"Content-Type": "application/json"}
    response = client.request(method, API + path.format(t=thread_id), **kwargs)
    assert response.status_code == 400, response.text
    assert response.json()["statusCode"] == 400
    if field:
        assert field in response.json()["message"]
    assert client.get(f"{API}/threads/{FIXED_ID}").status_code == 404
    thread = client.get(f"{API}/threads/{thread_id}").json()
    assert thread["metadata"] == {"keep": True} and thread["values"] == {}
    runs = client.get(f"{API}/threads/{thread_id}/runs", params={"limit": 10, "offset": 0})
    assert runs.json() == []
