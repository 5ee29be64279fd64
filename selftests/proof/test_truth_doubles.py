"""The doubles of real servers' truths (a run path broken, an error under a 2xx, dialects, queues)
do what their docstrings say, shown with plain httpx requests against each served in-process (the
kill table then shows what the suite makes of them).

Mutants: wait answers 500 after a run that succeeded (the other run paths work); a bodyless
search answers a 2xx carrying an error; one operation's 401 lacks its challenge; wait answers 200
declared text/plain; a malformed state write is 500 after a run, 400 before; events without ids
whose finished run's join is empty.
Variants: namespaces in objects; a run status that lags its stream's end in chosen runs; runs that
take a plain text input; strict run bodies; idle state reads that vary; an id-less opening frame;
500 for documents that are none; a state write that needs a run; ids only on the older spelling;
a deleted knowledge base's status empty under both prefixes.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from safety_support import TOKEN, reference_app, serve

from assistant_conformance.proof.mutants import truth
from assistant_conformance.proof.variants import dialects, knowledge, queued, threads
from assistant_conformance.reference._agents import ECHO_ASSISTANT_ID
from assistant_conformance.suite.http import sse

RUNS_PAGE = {"limit": 10, "offset": 0}
Double = type  # a mutant's or a variant's class: an ASGI middleware around the reference


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Callable[[Double], httpx.Client]]:
    """`served(double)`: a client of principal A on the reference wrapped in `double` (a mutant's
    or a variant's class), served in-process."""
    with ExitStack() as stack:

        def client(double: Double) -> httpx.Client:
            app = double(reference_app(tmp_path / double.__name__))
            base_url = stack.enter_context(serve(app))
            auth = {"Authorization": f"Bearer {TOKEN}"}
            return stack.enter_context(httpx.Client(base_url=base_url, headers=auth, timeout=10))

        yield client


def new_thread(client: httpx.Client) -> str:
    created = client.post("/api/ai/threads", json={})
    assert created.status_code == 201, created.text
    return str(created.json()["thread_id"])


def echo(text: str, **more: Any) -> dict[str, Any]:
    return {"assistant_id": ECHO_ASSISTANT_ID, "input": {"text": text}, **more}


def runs_of(client: httpx.Client, thread: str) -> list[dict[str, Any]]:
    listed = client.get(f"/api/ai/threads/{thread}/runs", params=RUNS_PAGE)
    assert listed.status_code == 200, listed.text
    return list(listed.json())


def streamed(
    client: httpx.Client, method: str, url: str, **kwargs: Any
) -> tuple[httpx.Response, list[sse.SseEvent]]:
    """The answer of a stream read to its end, and its events."""
    with client.stream(method, url, **kwargs) as response:
        text = response.read().decode()
    return response, sse.parse_events(text) if "event-stream" in response.headers[
        "content-type"
    ] else []


def run_in(response: httpx.Response) -> str:
    return response.headers["content-location"].rsplit("/", 1)[-1]


# --- mutants -----------------------------------------------------------------------------------


def test_wait_answers_500_after_a_run_that_succeeded(served) -> None:
    client = served(truth.WaitFailsAfterRun)
    thread = new_thread(client)
    waited = client.post(f"/api/ai/threads/{thread}/runs/wait", json=echo("to the end"))
    assert waited.status_code == 500 and waited.json()["statusCode"] == 500
    assert [r["status"] for r in runs_of(client, thread)] == ["success"]
    answer, events = streamed(
        client, "POST", f"/api/ai/threads/{thread}/runs/stream", json=echo("a")
    )
    assert answer.status_code == 201 and events[-1].event == "end"
    background = client.post(f"/api/ai/threads/{thread}/runs", json=echo("b"))
    assert background.status_code == 201
    run_url = f"/api/ai/threads/{thread}/runs/{background.json()['run_id']}"
    joined, events = streamed(client, "GET", f"{run_url}/stream")
    assert joined.status_code == 200 and events[-1].event == "end"
    assert client.post(f"{run_url}/cancel").status_code == 201
    assert client.get(run_url).json()["status"] == "success"


def test_wait_answers_200_declared_as_text(served) -> None:
    client = served(truth.WaitAnswersTextPlain)
    thread = new_thread(client)
    waited = client.post(f"/api/ai/threads/{thread}/runs/wait", json=echo("plain words"))
    assert waited.status_code == 200, waited.text
    assert waited.headers["content-type"].startswith("text/plain")
    assert json.loads(waited.text)["messages"][-1]["content"] == "plain words"


def test_bodyless_searches_answer_a_success_carrying_an_error(served) -> None:
    client = served(truth.MessageSearchCrashAsSuccess)
    conversation = client.post("/api/ai/conversations", json={}).json()["id"]
    search = f"/api/ai/conversations/{conversation}/messages/search"
    bare = client.post(search)
    assert bare.status_code == 200 and set(bare.json()) == {"message"}
    assert "reading 'where'" in bare.json()["message"]
    assert {"items", "total"} <= set(client.post(search, json={}).json())
    store = served(truth.StoreCrashAsSuccess)
    for path, listed in (("items/search", "items"), ("namespaces", "namespaces")):
        bare = store.post(f"/api/ai/store/{path}")
        assert bare.status_code == 201 and "namespace_prefix" in bare.json()["message"]
        assert listed in store.post(f"/api/ai/store/{path}", json={}).json()


def test_only_thread_search_refuses_without_a_challenge(served) -> None:
    client = served(truth.ThreadSearchWithoutChallenge)
    anonymous = {"Authorization": ""}
    search = client.post("/api/ai/threads/search", json={}, headers=anonymous)
    assert search.status_code == 401 and "www-authenticate" not in search.headers
    wrong = client.post("/api/ai/threads/search", headers={"Authorization": "Bearer nobody"})
    assert wrong.status_code == 401 and "www-authenticate" not in wrong.headers
    read = client.get(f"/api/ai/threads/{uuid.uuid4()}", headers=anonymous)
    assert read.status_code == 401 and "bearer" in read.headers["www-authenticate"].lower()


def test_malformed_state_is_refused_before_a_run_and_fails_after(served) -> None:
    client = served(truth.StateWriteCrashesAfterRun)
    malformed = {"values": {"messages": [42]}}
    good = {"values": {"messages": [{"type": "human", "content": "hi"}]}}
    fresh, ran = new_thread(client), new_thread(client)
    assert client.post(f"/api/ai/threads/{fresh}/state", json=malformed).status_code == 400
    assert client.post(f"/api/ai/threads/{fresh}/state", json=good).status_code == 201
    deep = b"[" * 50_000 + b"]" * 50_000  # the suite's deep-nesting body: the reference's 400
    headers = {"content-type": "application/json"}
    assert (
        client.post(f"/api/ai/threads/{fresh}/state", content=deep, headers=headers).status_code
        == 400
    )
    assert client.post(f"/api/ai/threads/{ran}/runs/wait", json=echo("once")).status_code == 201
    assert client.post(f"/api/ai/threads/{ran}/state", json=malformed).status_code == 500
    assert client.post(f"/api/ai/threads/{ran}/state", json=good).status_code == 201
    anonymous = client.post(
        f"/api/ai/threads/{ran}/state", json=malformed, headers={"Authorization": ""}
    )
    assert anonymous.status_code == 401


def test_events_carry_no_id_and_a_finished_runs_join_is_empty(served) -> None:
    client = served(truth.IdlessReplayEmpty)
    thread = new_thread(client)
    answer, events = streamed(
        client, "POST", f"/api/ai/threads/{thread}/runs/stream", json=echo("a b")
    )
    assert events[-1].event == "end" and not any(e.own_id for e in events)
    join = f"/api/ai/threads/{thread}/runs/{run_in(answer)}/stream"
    joined, replayed = streamed(client, "GET", join)
    assert joined.status_code == 200 and replayed == []


# --- variants ----------------------------------------------------------------------------------


def test_namespaces_come_in_objects(served) -> None:
    client = served(dialects.NamespacesInObjects)
    put = client.put("/api/ai/store/items", json={"namespace": ["a", "b"], "key": "k", "value": {}})
    assert put.status_code == 204, put.text
    listed = client.post("/api/ai/store/namespaces")
    assert listed.status_code == 201 and listed.json() == {"namespaces": [{"path": ["a", "b"]}]}


def test_status_lags_the_end_of_the_chosen_streams(served) -> None:
    client = served(queued.StatusLagsStreamEnd)
    thread = new_thread(client)
    seen = []
    for n in range(4):  # the first run lags, then every third: the fourth
        answer, events = streamed(
            client, "POST", f"/api/ai/threads/{thread}/runs/stream", json=echo(f"run {n}")
        )
        ended = time.monotonic()
        assert events[-1].event == "end"
        run = client.get(f"/api/ai/threads/{thread}/runs/{run_in(answer)}").json()
        listed = {r["run_id"]: r["status"] for r in runs_of(client, thread)}
        assert time.monotonic() - ended < queued.LAG, (
            "read too late to see a lag: the machine is slow"
        )
        seen.append((run["status"], listed[run["run_id"]]))
    assert seen == [("running",) * 2, ("success",) * 2, ("success",) * 2, ("running",) * 2]
    time.sleep(queued.LAG + 0.1)
    assert {r["status"] for r in runs_of(client, thread)} == {"success"}


def test_runs_take_a_text_input_and_answer_other_input_with_an_error(served) -> None:
    client = served(dialects.InputTextOnly)
    thread = new_thread(client)
    text = {"assistant_id": ECHO_ASSISTANT_ID, "input": {"input": "hello there"}}
    waited = client.post(f"/api/ai/threads/{thread}/runs/wait", json=text)
    assert waited.status_code == 201 and waited.json()["messages"][-1]["content"] == "hello there"
    other = new_thread(client)
    chat = {
        "assistant_id": ECHO_ASSISTANT_ID,
        "input": {"messages": [{"role": "user", "content": "hi"}]},
    }
    for tail in ("/wait", "/stream", ""):
        refused = client.post(f"/api/ai/threads/{other}/runs{tail}", json=chat)
        assert refused.status_code == 201 and refused.json()["message"].startswith("[ZodError")
    assert runs_of(client, other) == []
    anonymous = client.post(
        f"/api/ai/threads/{other}/runs", json=chat, headers={"Authorization": ""}
    )
    assert anonymous.status_code == 401


def test_unknown_run_options_are_refused_by_name(served) -> None:
    client = served(dialects.StrictRunOptions)
    thread = new_thread(client)
    for tail, option in (
        ("/wait", "stream_resumable"),
        ("/stream", "on_disconnect"),
        ("", "multitask_strategy"),
    ):
        refused = client.post(
            f"/api/ai/threads/{thread}/runs{tail}", json=echo("x", **{option: None})
        )
        assert refused.status_code == 422 and option in json.dumps(refused.json())
    assert runs_of(client, thread) == []
    plain = echo("x", metadata={}, config={}, stream_mode=["values"])
    assert client.post(f"/api/ai/threads/{thread}/runs/wait", json=plain).status_code == 201


def test_idle_state_reads_vary_until_a_checkpoint_exists(served) -> None:
    client = served(dialects.IdleReadsVary)
    thread = new_thread(client)
    first, second = (client.get(f"/api/ai/threads/{thread}/state").json() for _ in range(2))
    assert first["checkpoint"]["checkpoint_id"] != second["checkpoint"]["checkpoint_id"]
    assert first["created_at"] != second["created_at"] and None not in (
        first["created_at"],
        second["created_at"],
    )
    written = client.post(f"/api/ai/threads/{thread}/state", json={"values": {"n": 1}})
    assert written.status_code == 201
    first, second = (client.get(f"/api/ai/threads/{thread}/state").json() for _ in range(2))
    assert first == second


def test_every_connection_opens_with_its_own_idless_frame(served) -> None:
    client = served(queued.IdlessOpeningFrame)
    thread = new_thread(client)
    answer, live = streamed(
        client, "POST", f"/api/ai/threads/{thread}/runs/stream", json=echo("a b")
    )
    run = run_in(answer)
    _, replayed = streamed(client, "GET", f"/api/ai/threads/{thread}/runs/{run}/stream")
    _, resumed = streamed(
        client, "GET", f"/api/ai/threads/{thread}/runs/{run}/stream", headers={"last-event-id": "2"}
    )
    for attempt, events in enumerate((live, replayed, resumed), start=1):
        opening = events[0]
        assert (opening.event, opening.own_id) == ("metadata", False)
        assert json.loads(opening.data) == {"run_id": run, "attempt": attempt}
        assert all(e.own_id for e in events[1:])
    named = [(e.id, e.event, e.data) for e in live[1:]]
    assert [(e.id, e.event, e.data) for e in replayed[1:]] == named
    assert [(e.id, e.event, e.data) for e in resumed[1:]] == named[2:]


KB = "/api/ai/v1/kb"
OTHER_KB = "/api/ai/knowledges"


def test_references_to_no_document_answer_500(served) -> None:
    client = served(knowledge.KbReferencesToNothing500)
    kb = client.post(KB, json={"name": "kb"}).json()["id"]
    (doc,) = client.post(f"{KB}/{kb}/bulk", json=[{"name": "d"}]).json()
    assert client.post(f"{KB}/{kb}/process", json=[doc["id"]]).status_code == 201
    assert client.get(f"{KB}/{kb}/status", params={"ids": doc["id"]}).status_code == 200
    for named in (["LPT1"], ["", doc["id"]]):
        assert client.post(f"{KB}/{kb}/process", json=named).status_code == 500
    assert client.get(f"{OTHER_KB}/{kb}/status", params={"ids": "LPT1"}).status_code == 500
    assert client.post(f"{KB}/{kb}/process", json=[1]).status_code == 400  # not strings
    assert client.post(f"{KB}/{uuid.uuid4()}/process", json=["LPT1"]).status_code == 404


def test_a_state_write_waits_for_a_run(served) -> None:
    client = served(threads.StateWriteNeedsRun)
    thread = new_thread(client)
    write = {"values": {"messages": [{"type": "human", "content": "kept"}]}}
    refused = client.post(f"/api/ai/threads/{thread}/state", json=write)
    assert refused.status_code == 409 and "run an assistant first" in refused.json()["message"]
    assert client.post(f"/api/ai/threads/{thread}/runs/wait", json=echo("once")).status_code == 201
    assert client.post(f"/api/ai/threads/{thread}/state", json=write).status_code == 201
    state = client.get(f"/api/ai/threads/{thread}/state").json()
    assert "kept" in [m["content"] for m in state["values"]["messages"]]


def test_events_are_numbered_only_when_asked_to_continue(served) -> None:
    client = served(threads.IdsOnContinueOnly)
    thread = new_thread(client)
    url = f"/api/ai/threads/{thread}/runs/stream"
    _, plain = streamed(client, "POST", url, json=echo("a b", stream_resumable=True))
    answer, numbered = streamed(client, "POST", url, json=echo("a b", on_disconnect="continue"))
    assert plain and not any(e.own_id for e in plain)
    assert numbered and all(e.own_id and e.id for e in numbered)
    join = f"/api/ai/threads/{thread}/runs/{run_in(answer)}/stream"
    _, resumed = streamed(client, "GET", join, headers={"last-event-id": numbered[1].id})
    assert [e.id for e in resumed] == [e.id for e in numbered[2:]]


def test_a_deleted_knowledge_base_answers_its_status_empty_under_both_prefixes(served) -> None:
    client = served(knowledge.DeletedKbStatusEmpty)
    kb = client.post(OTHER_KB, json={"name": "kb"}).json()["id"]
    (doc,) = client.post(f"{KB}/{kb}/bulk", json=[{"name": "d"}]).json()
    assert client.delete(f"{OTHER_KB}/{kb}").status_code == 200
    for prefix in (KB, OTHER_KB):
        gone = client.get(f"{prefix}/{kb}/status", params={"ids": doc["id"]})
        assert (gone.status_code, gone.json()) == (200, [])
        assert client.put(f"{prefix}/{kb}", json={"name": "again"}).status_code == 404
    assert client.get(f"{KB}/{uuid.uuid4()}/status", params={"ids": "x"}).status_code == 404
