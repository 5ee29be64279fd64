"""The reference server's file uploads and chat-kit sessions."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

UPLOAD_ROUTES = ["/api/ai/v1/file", "/api/ai/contexts/file"]


def files_dir(server) -> Path:
    return Path(server.db_path).parent / "files"


@pytest.mark.parametrize("route", UPLOAD_ROUTES)
def test_upload_stores_the_bytes(client, reference_server, route):
    content = b"\x00binary\xffcontent" * 100
    response = client.post(route, files={"file": ("notes.bin", content, "application/x-test")})
    assert response.status_code == 201, response.text
    record = response.json()
    assert set(record) == {"id", "originalName", "size", "mimetype", "url"}
    assert (record["originalName"], record["size"]) == ("notes.bin", len(content))
    assert record["mimetype"] == "application/x-test"
    assert (files_dir(reference_server) / record["id"]).read_bytes() == content
    assert client.get(record["url"]).content == content  # extension download route


def test_client_file_name_never_becomes_a_path(client, reference_server):
    name = "../../etc/passwd"
    response = client.post(UPLOAD_ROUTES[1], files={"file": (name, b"not a password file")})
    assert response.status_code == 201 and response.json()["originalName"] == name
    stored = [p.name for p in files_dir(reference_server).iterdir()]
    assert response.json()["id"] in stored and "passwd" not in stored
    assert not (files_dir(reference_server).parent.parent / "etc").exists()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"files": {"other": ("a.txt", b"x")}},
        {"data": {"file": "a plain field, not a file"}},
        {"json": {"file": "x"}},
        {},
        {
            "content": b"--b\r\ngarbage",
            "headers": {"Content-Type": "multipart/form-data; boundary=b"},
        },
    ],
)
def test_upload_without_a_file_part_is_400(client, kwargs):
    response = client.post(UPLOAD_ROUTES[0], **kwargs)
    assert response.status_code == 400 and response.json()["statusCode"] == 400


def test_delete_context_file_removes_record_and_bytes(client, client_b, reference_server):
    record = client.post(UPLOAD_ROUTES[1], files={"file": ("a.txt", b"bye")}).json()
    path = f"/api/ai/contexts/file/{record['id']}"
    assert client_b.delete(path).status_code == 404  # not B's file
    deleted = client.delete(path)
    assert deleted.status_code == 200 and deleted.json()["affected"] == 1
    assert not (files_dir(reference_server) / record["id"]).exists()
    assert client.delete(path).status_code == 404
    assert client.get(record["url"]).status_code == 404


def test_chatkit_session_shape_and_defaults(client):
    response = client.post("/api/ai/v1/chatkit/sessions")
    assert response.status_code == 201
    session = response.json()
    assert set(session) == {"client_secret", "expires_at", "expires_after"}
    assert session["expires_after"] == 600
    assert abs(session["expires_at"] - (time.time() + 600)) < 60  # its clock, not speed


@pytest.mark.parametrize("expires_after", ["60", 0, -5, 1.5, True, 10**12])
def test_chatkit_session_rejects_bad_lifetimes(client, expires_after):
    response = client.post("/api/ai/v1/chatkit/sessions", json={"expires_after": expires_after})
    assert response.status_code == 400 and "expires_after" in response.json()["message"]


def test_chatkit_secret_acts_as_its_creator_until_it_expires(client, client_b, reference_server):
    mine = client.post("/api/ai/conversations", json={"title": "mine"}).json()
    theirs = client_b.post("/api/ai/conversations", json={"title": "theirs"}).json()
    secret = client.post("/api/ai/v1/chatkit/sessions", json={"expires_after": 3}).json()
    headers = {"Authorization": f"Bearer {secret['client_secret']}"}
    with httpx.Client(base_url=reference_server.base_url, headers=headers) as as_secret:
        assert as_secret.get(f"/api/ai/conversations/{mine['id']}").json()["title"] == "mine"
        assert as_secret.get(f"/api/ai/conversations/{theirs['id']}").status_code == 404
        time.sleep(max(0.0, secret["expires_at"] + 1 - time.time()) + 0.05)
        expired = as_secret.get(f"/api/ai/conversations/{mine['id']}")
        assert expired.status_code == 401
