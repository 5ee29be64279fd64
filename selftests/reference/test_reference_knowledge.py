"""The reference server's knowledge bases: both prefixes, processing, validation, durability."""

from __future__ import annotations

import sqlite3
import time
import uuid
from contextlib import closing

import httpx
import pytest
from conftest import TOKEN_A

V1, UNVERSIONED = "/api/ai/v1/kb", "/api/ai/knowledges"
PREFIXES = [V1, UNVERSIONED]
PIPELINE = ["waiting", "running", "splitted", "embedding", "finish"]

# Ten 9-character words, one paragraph each: with chunkSize 20 two words fit in a chunk.
TEN_WORDS = "\n\n".join(f"word{i:05d}" for i in range(10))
PARSER = {"chunkSize": 20, "chunkOverlap": 10, "delimiter": "\\n\\n \\n"}


def create_kb(client: httpx.Client, prefix: str = V1, **fields: object) -> dict:
    response = client.post(prefix, json={"name": "kb", **fields})
    assert response.status_code == 201, response.text
    return response.json()


def add_documents(client: httpx.Client, kb_id: str, *docs: dict, prefix: str = V1) -> list[str]:
    response = client.post(f"{prefix}/{kb_id}/bulk", json=list(docs))
    assert response.status_code == 201, response.text
    return [doc["id"] for doc in response.json()]


def wait_until_done(client: httpx.Client, kb_id: str, ids: list[str], prefix: str = V1) -> list:
    """Poll status until every document is finish or error; answer every distinct status seen."""
    seen: dict[str, list[str]] = {doc_id: [] for doc_id in ids}
    deadline = time.monotonic() + 60  # a bound on the wait, not a timing
    while time.monotonic() < deadline:
        response = client.get(f"{prefix}/{kb_id}/status", params={"ids": ",".join(ids)})
        assert response.status_code == 200, response.text
        for row in response.json():
            if not seen[row["id"]] or seen[row["id"]][-1] != row["status"]:
                seen[row["id"]].append(row["status"])
        if all(s and s[-1] in ("finish", "error") for s in seen.values()):
            return list(seen.values())
        time.sleep(0.01)
    raise AssertionError(f"documents did not finish: {seen}")


def documents(client: httpx.Client, kb_id: str) -> dict[str, dict]:
    response = client.get(f"{V1}/{kb_id}/documents")  # extension route
    assert response.status_code == 200
    return {doc["id"]: doc for doc in response.json()["items"]}


def count_rows(server, kind: str) -> int:
    with closing(sqlite3.connect(server.db_path)) as conn:
        return conn.execute("SELECT COUNT(*) FROM resources WHERE kind=?", (kind,)).fetchone()[0]


@pytest.mark.parametrize("prefix", PREFIXES)
def test_each_operation_answers_the_contract_status(client, prefix):
    kb = create_kb(client, prefix)
    assert client.put(f"{prefix}/{kb['id']}", json={"name": "renamed"}).status_code == 200
    [doc_id] = add_documents(client, kb["id"], {"name": "a", "content": "text"}, prefix=prefix)
    assert client.post(f"{prefix}/{kb['id']}/process", json=[doc_id]).status_code == 201
    assert client.get(f"{prefix}/{kb['id']}/status", params={"ids": doc_id}).status_code == 200
    deleted = client.delete(f"{prefix}/{kb['id']}")
    assert deleted.status_code == 200 and deleted.json()["affected"] == 1
    for method, path, kwargs in [
        ("PUT", "", {"json": {}}),
        ("DELETE", "", {}),
        ("POST", "/bulk", {"json": []}),
        ("POST", "/process", {"json": []}),
        ("GET", "/status", {"params": {"ids": doc_id}}),
    ]:
        response = client.request(method, f"{prefix}/{kb['id']}{path}", **kwargs)
        assert response.status_code == 404, (method, path)
        assert response.json()["statusCode"] == 404


@pytest.mark.parametrize(
    "path, allowed",
    [
        (f"{V1}/some-id", "DELETE, GET, PUT"),  # GET: extension
        ("/api/ai/conversations/some-id", "DELETE, GET, PATCH"),
        ("/api/ai/conversations/search", "POST"),  # not the methods of /conversations/{id}
    ],
)
def test_a_wrong_method_is_405_naming_every_method_of_the_path(client, path, allowed):
    response = client.request("OPTIONS", path)
    assert response.status_code == 405 and response.headers["allow"] == allowed


@pytest.mark.parametrize("home, other", [(V1, UNVERSIONED), (UNVERSIONED, V1)])
def test_one_store_behind_both_prefixes(client, home, other):
    kb = create_kb(client, home)
    updated = client.put(f"{other}/{kb['id']}", json={"name": "other", "parserConfig": PARSER})
    assert updated.status_code == 200 and updated.json()["name"] == "other"
    ids = add_documents(client, kb["id"], {"content": TEN_WORDS}, prefix=other)
    assert client.post(f"{other}/{kb['id']}/process", json=ids).status_code == 201
    assert wait_until_done(client, kb["id"], ids, prefix=home)[0][-1] == "finish"
    assert client.delete(f"{other}/{kb['id']}").status_code == 200
    assert client.put(f"{home}/{kb['id']}", json={}).status_code == 404


def test_create_answers_the_saved_record_with_defaults(client):
    kb = create_kb(client, unknownField="ignored")
    assert uuid.UUID(kb["id"])
    assert kb["permission"] == "private" and kb["recall"] == {"topK": 10}
    assert kb["documentNum"] == 0 and kb["createdAt"] and kb["updatedAt"]
    assert "unknownField" not in kb


def test_put_replaces_every_field(client):
    kb = create_kb(client)
    body = {
        "workspaceId": str(uuid.uuid4()),
        "name": "full",
        "description": "every field",
        "permission": "organization",
        "type": "external",
        "recall": {"topK": 3, "score": 0.5},
        "parserConfig": PARSER,
        "integrationId": str(uuid.uuid4()),
        "extKnowledgebaseId": "ext-1",
        "copilotModel": {"copilotId": "c", "modelType": "text-embedding", "model": "m"},
    }
    replaced = client.put(f"{V1}/{kb['id']}", json=body).json()
    assert {key: replaced[key] for key in body} == body
    assert replaced["id"] == kb["id"] and replaced["createdAt"] == kb["createdAt"]
    emptied = client.put(f"{UNVERSIONED}/{kb['id']}", json={}).json()
    assert "name" not in emptied and emptied["permission"] == "private"


def test_processing_chunks_text_with_the_parser_config(client):
    kb = create_kb(client, parserConfig=PARSER)
    docs = [
        {"name": "overlapping", "category": "text", "content": TEN_WORDS},
        {"name": "own config", "content": TEN_WORDS, "parserConfig": {"chunkOverlap": 0}},
        {"name": "hard cut", "content": "x" * 50, "parserConfig": {"chunkOverlap": 0}},
        {"name": "no content", "category": "text"},
    ]
    created = client.post(f"{V1}/{kb['id']}/bulk", json=docs).json()
    assert [doc["status"] for doc in created] == ["waiting"] * 4
    ids = [doc["id"] for doc in created]
    started = client.post(f"{V1}/{kb['id']}/process", json=ids).json()
    assert [(d["status"], d["progress"]) for d in started] == [("running", 0)] * 4
    for statuses in wait_until_done(client, kb["id"], ids):  # never a step backwards
        assert [PIPELINE.index(s) for s in statuses if s != "error"] == sorted(
            PIPELINE.index(s) for s in statuses if s != "error"
        )
    final = documents(client, kb["id"])
    # overlap 10 repeats one word per chunk: 9 chunks; without overlap 5; 50 chars / 20 -> 3.
    assert [final[i]["chunkNum"] for i in ids[:3]] == [9, 5, 3]
    assert [final[i]["status"] for i in ids[:3]] == ["finish"] * 3
    assert final[ids[0]]["tokenNum"] == 18 and final[ids[0]]["progress"] == 100
    assert final[ids[3]]["status"] == "error" and final[ids[3]]["processMsg"]


def test_status_answers_exactly_the_requested_documents(client):
    kb, other_kb = create_kb(client), create_kb(client)
    ids = add_documents(client, kb["id"], {"name": "1"}, {"name": "2"}, {"name": "3"})
    [foreign] = add_documents(client, other_kb["id"], {"name": "elsewhere"})
    asked = ",".join([ids[2], "no-such-document", foreign, ids[0]])
    rows = client.get(f"{V1}/{kb['id']}/status", params={"ids": asked}).json()
    assert [row["id"] for row in rows] == [ids[2], ids[0]]
    assert all(set(row) == {"id", "status", "progress", "processMsg"} for row in rows)


def test_process_with_a_foreign_id_starts_nothing(client):
    kb = create_kb(client)
    [doc_id] = add_documents(client, kb["id"], {"content": "text"})
    response = client.post(f"{V1}/{kb['id']}/process", json=[doc_id, "not-a-document"])
    assert response.status_code == 404 and "not-a-document" in response.json()["message"]
    time.sleep(0.1)
    assert documents(client, kb["id"])[doc_id]["status"] == "waiting"


@pytest.mark.parametrize(
    "body, field",
    [
        ({"permission": "secret"}, "permission"),
        ({"type": "vector"}, "type"),
        ({"workspaceId": "not-a-uuid"}, "workspaceId"),
        ({"integrationId": 42}, "integrationId"),
        ({"name": ["x"]}, "name"),
        ({"recall": {"topK": "10"}}, "recall.topK"),
        ({"recall": {"score": True}}, "recall.score"),
        ({"parserConfig": []}, "parserConfig"),
        ({"parserConfig": {"delimiter": 5}}, "parserConfig.delimiter"),
        ({"copilotModel": {"model": None}}, "copilotModel.model"),
        (None, "body"),
        ("a string", "body"),
        ([{"name": "x"}], "body"),
    ],
)
def test_invalid_knowledgebase_is_400_and_stores_nothing(client, reference_server, body, field):
    before = count_rows(reference_server, "knowledgebase")
    response = client.post(V1, json=body)
    assert response.status_code == 400
    assert field in response.json()["message"]
    assert count_rows(reference_server, "knowledgebase") == before


@pytest.mark.parametrize(
    "raw",
    [
        b"{",
        b'{"name": "\xff\xfe"}',
        b'{"recall": {"topK": 1e999}}',
        b"[" * 5000,
        b"9" * 5000,
        b'{"name": "\\ud800"}',
        b'{"recall": {"score": NaN}}',
    ],
)
def test_malformed_json_is_400(client, raw):
    response = client.post(V1, content=raw, headers={"Content-Type": "application/json"})
    assert response.status_code == 400 and response.json()["statusCode"] == 400


def test_invalid_bulk_is_400_and_stores_nothing(client):
    kb = create_kb(client)
    bulk = f"{V1}/{kb['id']}/bulk"
    assert client.post(bulk, json={"name": "not an array"}).status_code == 400
    response = client.post(bulk, json=[{"name": "ok"}, {"category": "pdf"}])
    assert response.status_code == 400 and "body[1].category" in response.json()["message"]
    assert client.post(bulk, json=[{"size": "12"}]).status_code == 400
    assert client.post(bulk, json=[]).json() == []
    assert documents(client, kb["id"]) == {}
    assert client.get(f"{V1}/{kb['id']}").json()["documentNum"] == 0


def test_process_and_status_need_their_input(client):
    kb = create_kb(client)
    assert client.post(f"{V1}/{kb['id']}/process", json=[1, 2]).status_code == 400
    assert client.post(f"{V1}/{kb['id']}/process", json={"ids": []}).status_code == 400
    missing = client.get(f"{V1}/{kb['id']}/status")
    assert missing.status_code == 400 and "ids" in missing.json()["message"]


def test_another_principal_sees_nothing(client, client_b):
    kb = create_kb(client)
    [doc_id] = add_documents(client, kb["id"], {"content": "text"})
    for method, path, kwargs in [
        ("PUT", "", {"json": {"name": "stolen"}}),
        ("POST", "/bulk", {"json": [{"name": "planted"}]}),
        ("POST", "/process", {"json": [doc_id]}),
        ("GET", "/status", {"params": {"ids": doc_id}}),
        ("DELETE", "", {}),
    ]:
        assert client_b.request(method, f"{V1}/{kb['id']}{path}", **kwargs).status_code == 404
    mine = client.get(f"{V1}/{kb['id']}").json()  # extension route
    assert (mine["name"], mine["documentNum"]) == ("kb", 1)
    assert documents(client, kb["id"])[doc_id]["status"] == "waiting"


def test_restart_keeps_knowledge_conversations_and_files(start_server, tmp_path, monkeypatch):
    """Durability of this half's data; a document left mid-processing is finished after restart."""
    db = tmp_path / "durable.db"
    monkeypatch.setenv("ASSISTANT_REFERENCE_KB_STEP_MS", "2000")  # stop while still processing
    server = start_server(db=db)
    with httpx.Client(
        base_url=server.base_url, headers={"Authorization": f"Bearer {TOKEN_A}"}
    ) as c:
        kb = create_kb(c, parserConfig=PARSER)
        ids = add_documents(c, kb["id"], {"content": TEN_WORDS})
        assert c.post(f"{V1}/{kb['id']}/process", json=ids).json()[0]["status"] == "running"
        conversation = c.post("/api/ai/conversations", json={"title": "kept"}).json()
        message = c.post(
            f"/api/ai/conversations/{conversation['id']}/messages", json={"content": "hi"}
        )
        upload = c.post("/api/ai/contexts/file", files={"file": ("a.txt", b"kept bytes")}).json()
    server.stop()
    monkeypatch.delenv("ASSISTANT_REFERENCE_KB_STEP_MS")
    server = start_server(db=db)
    with httpx.Client(
        base_url=server.base_url, headers={"Authorization": f"Bearer {TOKEN_A}"}
    ) as c:
        assert wait_until_done(c, kb["id"], ids)[0][-1] == "finish"
        assert documents(c, kb["id"])[ids[0]]["chunkNum"] == 9
        conversation_path = f"/api/ai/conversations/{conversation['id']}"
        assert c.get(conversation_path).json()["title"] == "kept"
        listed = c.get(f"{conversation_path}/messages", params={"limit": 10, "offset": 0}).json()
        assert [m["id"] for m in listed["items"]] == [message.json()["id"]]
        assert c.get(f"/api/ai/files/{upload['id']}").content == b"kept bytes"
    server.stop()
    server = start_server(db=db)  # and a finished document stays finished
    with httpx.Client(
        base_url=server.base_url, headers={"Authorization": f"Bearer {TOKEN_A}"}
    ) as c:
        rows = c.get(f"{V1}/{kb['id']}/status", params={"ids": ids[0]}).json()
        assert rows[0]["status"] == "finish" and rows[0]["progress"] == 100
        kept = c.get(f"{UNVERSIONED}/{kb['id']}").json()
        assert (kept["parserConfig"], kept["documentNum"]) == (PARSER, 1)
