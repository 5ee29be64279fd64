"""The reference server and bad input: malformed JSON, wrong types, invalid UTF-8, deep nesting,
huge bodies, huge query strings, path traversal in ids (encoded, raw, NUL): each a 4xx with a JSON
body, the server stays up, nothing is stored. File names with traversal are only data: the bytes
land in the storage folder under the server's own id, nowhere else."""

from __future__ import annotations

import contextlib
import json
import select
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from conftest import TOKEN_A, TOKEN_B
from safety_support import dump, serve

from assistant_conformance.reference import embedded
from assistant_conformance.reference.app import create_app
from assistant_conformance.reference.context import Settings

API = "/api/ai"
HUGE = 6 * 1024 * 1024  # over the reference's 5 MiB body limit
TRAVERSALS = [
    "..%2F..%2Fetc%2Fpasswd",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "%00",
    "a%00b",
    "..%5c..%5cx",
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[embedded.RunningServer]:
    running = embedded.start([TOKEN_A, TOKEN_B], tmp_path_factory.mktemp("bad") / "ref.db")
    yield running
    running.stop()


@pytest.fixture(scope="module")
def api(server: embedded.RunningServer) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {TOKEN_A}"}
    with httpx.Client(base_url=server.base_url, headers=headers, timeout=30, verify=False) as c:
        yield c


@pytest.fixture(scope="module")
def ids(api: httpx.Client) -> dict[str, str]:
    thread = api.post(f"{API}/threads", json={}).json()["thread_id"]
    conversation = api.post(f"{API}/conversations", json={"title": "t"}).json()["id"]
    kb = api.post(f"{API}/v1/kb", json={"name": "kb"}).json()["id"]
    return {"thread": thread, "conversation": conversation, "kb": kb}


def json_bodies(ids: dict[str, str]) -> list[tuple[str, str]]:
    t, c, k = ids["thread"], ids["conversation"], ids["kb"]
    return [
        ("POST", f"{API}/threads"),
        ("POST", f"{API}/threads/search"),
        ("PATCH", f"{API}/threads/{t}"),
        ("POST", f"{API}/threads/{t}/state"),
        ("POST", f"{API}/threads/{t}/runs"),
        ("POST", f"{API}/threads/{t}/runs/stream"),
        ("POST", f"{API}/conversations"),
        ("PATCH", f"{API}/conversations/{c}"),
        ("POST", f"{API}/conversations/{c}/messages"),
        ("POST", f"{API}/v1/kb"),
        ("PUT", f"{API}/knowledges/{k}"),
        ("POST", f"{API}/v1/kb/{k}/bulk"),
        ("POST", f"{API}/knowledges/{k}/process"),
        ("PUT", f"{API}/store/items"),
        ("POST", f"{API}/v1/chatkit/sessions"),
    ]


BAD_BODIES = {
    "malformed": b'{"name": "unterminated',
    "invalid-utf8": b'{"name": "\xff\xfe\xc3\x28", "title": "\xff"}',
    "deep-object": b'{"a":' * 20_000 + b"1" + b"}" * 20_000,
    "deep-array": b"[" * 20_000 + b"]" * 20_000,
    "nan": b'{"limit": NaN, "name": Infinity}',
    "huge-number": b'{"limit": 1' + b"0" * 5000 + b"}",
    "lone-surrogate": b'{"name": "\\ud800", "title": "\\udfff", "metadata": {"\\ud800": 1}}',
    "whitespace": b" \r\n",  # not a JSON text: a body sent, not an absent one
}


def wrong_types(ids: dict[str, str]) -> list[tuple[str, str, Any]]:
    t, k = ids["thread"], ids["kb"]
    return [
        ("POST", f"{API}/threads", {"metadata": 5}),
        ("POST", f"{API}/threads/search", {"limit": "10"}),
        ("POST", f"{API}/threads/{t}/runs", {"assistant_id": 3}),
        ("POST", f"{API}/threads/{t}/runs", {"assistant_id": "echo", "input": {"text": 5}}),
        ("POST", f"{API}/threads/{t}/state", {"values": [1]}),
        ("POST", f"{API}/conversations", {"title": []}),
        ("POST", f"{API}/v1/kb", {"name": 7, "permission": "everyone"}),
        ("PUT", f"{API}/v1/kb/{k}", {"recall": {"topK": "x"}}),
        ("POST", f"{API}/v1/kb/{k}/bulk", [{"size": "big"}]),
        ("POST", f"{API}/v1/kb/{k}/bulk", {"not": "an array"}),
        ("POST", f"{API}/v1/kb/{k}/process", [1, 2]),
        ("PUT", f"{API}/store/items", {"namespace": "x", "key": 1, "value": 2}),
        ("POST", f"{API}/store/namespaces", {"limit": True}),
        ("POST", f"{API}/v1/chatkit/sessions", {"expires_after": "soon"}),
        ("POST", f"{API}/assistants/search", {"limit": 1.5}),
    ]


def expect_json_4xx(response: httpx.Response | tuple[int, bytes]) -> None:
    status, body = (
        (response.status_code, response.content)
        if isinstance(response, httpx.Response)
        else response
    )
    assert 400 <= status < 500, (status, body[:200])
    assert json.loads(body)["statusCode"] == status


def raw(base_url: str, request: bytes) -> tuple[int, bytes]:
    """Send bytes no client library would send; answer the status and the body.

    A server may answer and close before it has read a huge request, which resets the
    connection: so the answer is read while the request is still being sent, and a send cut
    short by the server is not an error."""
    url = urlsplit(base_url)
    with socket.create_connection((url.hostname, url.port), timeout=30) as sock:
        received: list[bytes] = []
        reader = threading.Thread(target=read_until_closed, args=(sock, received))
        reader.start()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(request)
        reader.join()
    head, _, body = b"".join(received).partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), body


def read_until_closed(sock: socket.socket, received: list[bytes]) -> None:
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            received.append(chunk)


def get_raw(base_url: str, target: bytes) -> tuple[int, bytes]:
    head = f"Host: x\r\nAuthorization: Bearer {TOKEN_A}\r\nConnection: close\r\n\r\n".encode()
    return raw(base_url, b"GET " + target + b" HTTP/1.1\r\n" + head)


def test_bad_input_is_a_json_4xx_and_nothing_is_stored(
    server: embedded.RunningServer, api: httpx.Client, ids: dict[str, str]
) -> None:
    stored = dump(server.db_path)
    json_header = {"Content-Type": "application/json"}
    for method, path in json_bodies(ids):
        for body in BAD_BODIES.values():
            expect_json_4xx(api.request(method, path, content=body, headers=json_header))
    huge = b"{}" + b" " * HUGE
    for method, path in json_bodies(ids)[::5]:
        expect_json_4xx(api.request(method, path, content=huge, headers=json_header))
    for method, path, body in wrong_types(ids):
        expect_json_4xx(api.request(method, path, json=body))
    chunks = (b"[" + b" " * 1024 * 1024 for _ in range(7))  # no length given: chunked, 7 MiB
    expect_json_4xx(api.post(f"{API}/threads/search", content=chunks, headers=json_header))
    assert dump(server.db_path) == stored  # not one row changed


def test_huge_query_strings_and_traversal_in_ids_are_json_4xx(
    server: embedded.RunningServer, api: httpx.Client, ids: dict[str, str]
) -> None:
    stored = dump(server.db_path)
    runs = f"{API}/threads/{ids['thread']}/runs?limit=1&offset=0&pad="
    expect_json_4xx(api.get(runs + "a" * 10_000))
    for size in (100_000, 1_000_000):  # too long for the HTTP parser: still a JSON 400
        expect_json_4xx(get_raw(server.base_url, runs.encode() + b"a" * size))
    for target in (
        b"/api/ai/threads/a\x00b",
        b"/api/ai/threads/\xff\xfe",
        b"/api/ai/files/../../etc/passwd",
    ):
        expect_json_4xx(get_raw(server.base_url, target))
    for bad in TRAVERSALS:
        for method, path in [
            ("GET", f"{API}/threads/{bad}"),
            ("DELETE", f"{API}/conversations/{bad}"),
            ("PUT", f"{API}/v1/kb/{bad}"),
            ("GET", f"{API}/knowledges/{bad}/status?ids={bad}"),
            ("DELETE", f"{API}/contexts/file/{bad}"),
            ("GET", f"{API}/files/{bad}"),
            ("GET", f"{API}/threads/{ids['thread']}/runs/{bad}"),
        ]:
            response = api.request(method, path, json={"name": "x"} if method == "PUT" else None)
            expect_json_4xx(response)
            assert b"root:" not in response.content
    assert dump(server.db_path) == stored
    assert api.get(f"{API}/threads/{ids['thread']}").status_code == 200  # still up, still there


@pytest.mark.parametrize(
    "name", ["../../etc/passwd", "..\\..\\x", "/abs/path", "a\x00b", "%2e%2e%2fx"]
)
def test_upload_never_writes_outside_its_storage_folder(
    server: embedded.RunningServer, api: httpx.Client, name: str
) -> None:
    root = server.db_path.parent
    files = root / "files"
    before = {p for p in root.parent.rglob("*")}
    response = api.post(f"{API}/contexts/file", files={"file": (name, b"payload")})
    assert response.status_code in (201, 400), response.text
    new = {p for p in root.parent.rglob("*")} - before
    if response.status_code == 201:
        file_id = response.json()["id"]
        assert new == {files / file_id} and (files / file_id).read_bytes() == b"payload"
        assert api.delete(f"{API}/contexts/file/{file_id}").status_code == 200
    else:
        assert new == set()
    assert server.process.poll() is None


NON_FINITE = (b"1e999", b"-1e999", b"NaN", b"Infinity", b"-Infinity")


def valid_but_for_one_number(ids: dict[str, str]) -> list[tuple[str, str, bytes]]:
    """Bodies accepted as they are, with X where a number goes: only X can make them refused."""
    t = ids["thread"]
    return [
        ("POST", f"{API}/threads", b'{"metadata": {"x": X}}'),
        ("PATCH", f"{API}/threads/{t}", b'{"metadata": {"x": X}}'),
        ("POST", f"{API}/threads/{t}/state", b'{"values": {"x": X}}'),
        ("PUT", f"{API}/store/items", b'{"namespace": ["n"], "key": "k", "value": {"x": X}}'),
        ("POST", f"{API}/conversations", b'{"title": "t", "options": {"x": X}}'),
    ]


def test_numbers_json_cannot_carry_back_are_refused(
    server: embedded.RunningServer, api: httpx.Client, ids: dict[str, str]
) -> None:
    stored = dump(server.db_path)
    json_header = {"Content-Type": "application/json"}
    for method, path, template in valid_but_for_one_number(ids):
        for number in NON_FINITE:
            response = api.request(method, path, content=template.replace(b"X", number),
                                   headers=json_header)  # fmt: skip
            expect_json_4xx(response)
    assert dump(server.db_path) == stored
    for method, path, template in valid_but_for_one_number(ids)[:1]:  # the control: 1 is taken
        created = api.request(method, path, content=template.replace(b"X", b"1"),
                              headers=json_header)  # fmt: skip
        assert created.is_success, created.text


def test_a_stalled_body_gets_408_and_stalled_clients_do_not_hold_others(tmp_path) -> None:
    """Twenty clients that stop mid-body do not hold up another: it is answered while every one
    of them still waits (none has its 408 yet: an order, not a clock), and each then gets its
    408 (the socket's timeout bounds the wait)."""
    settings = Settings(
        tokens={TOKEN_A: "a"}, db_path=tmp_path / "r.db", files_dir=tmp_path / "f", body_timeout_s=3
    )
    head = (
        "POST /api/ai/threads HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {TOKEN_A}\r\nContent-Length: 100\r\n\r\n"
    ).encode()
    with serve(create_app(settings)) as base_url:
        url = urlsplit(base_url)
        address = (url.hostname, url.port)
        stalled = [socket.create_connection(address, timeout=30) for _ in range(20)]
        for sock in stalled:
            sock.sendall(head + b'{"metadata": ')  # 13 of the 100 bytes announced, then nothing
        headers = {"Authorization": f"Bearer {TOKEN_A}"}
        with httpx.Client(base_url=base_url, headers=headers, timeout=10) as client:
            served = client.post("/api/ai/threads/search", json={"limit": 10})
            answered_already = select.select(stalled, [], [], 0)[0]
            assert served.status_code == 200 and not answered_already  # not held up
            answers = []
            for sock in stalled:
                received: list[bytes] = []
                read_until_closed(sock, received)  # ends: the server closes the connection
                answers.append(b"".join(received))
                sock.close()
            assert all(a.startswith(b"HTTP/1.1 408 ") for a in answers), answers[0][:200]
            expect_json_4xx((408, answers[0].partition(b"\r\n\r\n")[2]))
            assert client.post("/api/ai/threads/search", json={"limit": 10}).json() == []


def test_a_request_cut_off_in_its_body_stores_nothing(server: embedded.RunningServer) -> None:
    """A client gone after the headers (its process killed, say): neither the part of the body
    sent nor none at all is taken for the whole body, so nothing is created."""
    stored = dump(server.db_path)
    url = urlsplit(server.base_url)
    head = (
        "POST /api/ai/conversations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {TOKEN_A}\r\nContent-Length: 60\r\n\r\n"
    ).encode()
    for sent in (b"", b'{"title": "cut'):
        with socket.create_connection((url.hostname, url.port), timeout=10) as sock:
            sock.sendall(head + sent)
            time.sleep(0.2)  # the server has the headers and waits for the rest
    time.sleep(0.3)  # what it would do with the request is done by now
    assert dump(server.db_path) == stored
