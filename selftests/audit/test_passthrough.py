"""The proxy passes every request the upstream would take, and records it; what it cannot pass it
answers itself, saying so, and records that too.

- `Authorization: Bearer ` (an empty bearer, a trailing space), a header value with a trailing
  space, a header value with a non-ASCII byte (`X-Name: café`): each gets through the proxy the
  answer it gets sent straight to the upstream (sent as raw bytes: an HTTP client would not send
  the first), and each is in the recording, as it came; the empty bearer is judged as refused;
- an upstream that cannot be reached: a 502 that names the proxy (a JSON body, `Proxy-Status`),
  and the request in the recording, without an answer, with the proxy's own.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import httpx
import pytest
from audit_support import audited, upstream_of, verdicts
from safety_support import TOKEN, serve

from assistant_conformance.audit.proxy import Proxy
from assistant_conformance.audit.session import HAR_FILE

pytestmark = pytest.mark.xdist_group("proxy")
BODY = b"{}"
REQUESTS = {  # a header line each, on a POST /api/ai/threads
    "empty bearer": b"Authorization: Bearer ",
    "bearer without a space": b"Authorization: Bearer",
    "trailing space": b"Authorization: Bearer " + TOKEN.encode() + b"\r\nX-Note: kept ",
    "non-ASCII byte": b"Authorization: Bearer " + TOKEN.encode() + b"\r\nX-Name: caf\xc3\xa9",
}


def status_of(base: str, header: bytes) -> int:
    """The status a request sent as these bytes gets (a raw socket: no client refuses them)."""
    host, port = base.removeprefix("http://").split(":")
    request = (b"POST /api/ai/threads HTTP/1.1\r\nHost: " + host.encode() + b"\r\n" + header
               + b"\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close"
               + b"\r\n\r\n" + BODY)  # fmt: skip
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return int(answer.split(b" ", 2)[1])


def test_what_the_upstream_takes_passes_as_it_came(tmp_path: Path) -> None:
    with serve(upstream_of("reference", tmp_path)) as upstream:
        proxy = Proxy(upstream, tmp_path / "live", say=lambda _: None)
        with serve(proxy) as base:
            got = {name: (status_of(upstream, header), status_of(base, header))
                   for name, header in REQUESTS.items()}  # fmt: skip
        run = proxy.finish()
    assert {name: direct for name, (direct, _) in got.items()} == {
        "empty bearer": 401, "bearer without a space": 401, "trailing space": 201,
        "non-ASCII byte": 201}  # fmt: skip
    assert {name: passed for name, (_, passed) in got.items()} == {
        name: direct for name, (direct, _) in got.items()}  # fmt: skip
    entries = json.loads((tmp_path / "live" / HAR_FILE).read_text())["log"]["entries"]
    assert [e["response"]["status"] for e in entries] == [401, 401, 201, 201]
    headers = [{h["name"].lower(): h["value"] for h in e["request"]["headers"]} for e in entries]
    assert [e["_principal"] for e in entries] == ["invalid", "invalid", "credential-1",
                                                  "credential-1"]  # fmt: skip
    # As it came (Authorization is masked); the trailing space is optional whitespace, not part
    # of the value (RFC 9110 5.5): parsers differ (uvicorn 0.55 with httptools 0.9 drops it),
    # and the proxy passes on what its own server parsed.
    assert headers[2]["x-note"] in ("kept ", "kept")
    assert headers[3]["x-name"] == "café"
    assert run.info["audit"]["judged"] == 4
    assert run.requirements["AUTH-INVALID-REJECTED"].verdict == "pass"
    assert run.requirements["AUTH-401"].verdict == "pass"


def test_what_the_proxy_cannot_pass_it_answers_itself_and_records(tmp_path: Path) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, never listening: nothing answers there
    upstream = f"http://127.0.0.1:{closed.getsockname()[1]}"
    said: list[str] = []
    proxy = Proxy(upstream, tmp_path / "live", say=said.append)
    try:
        with serve(proxy) as base:
            auth = {"Authorization": f"Bearer {TOKEN}"}
            answer = httpx.post(f"{base}/api/ai/threads", json={}, headers=auth, timeout=30)
    finally:
        closed.close()
    proxy.finish()
    assert answer.status_code == 502
    assert answer.json()["proxy"] == "assistant-conformance-proxy"
    assert answer.headers["proxy-status"].startswith("assistant-conformance-proxy; error=")
    entry = json.loads((tmp_path / "live" / HAR_FILE).read_text())["log"]["entries"][0]
    assert entry["response"]["status"] == 0  # no answer from the upstream
    assert entry["_proxy"]["status"] == 502 and entry["_proxy"]["error"]
    assert entry["request"]["url"].endswith("/api/ai/threads")
    assert any("proxy answered 502" in line for line in said)
    code, document = audited([tmp_path / "live" / HAR_FILE], tmp_path / "audit")
    assert code == 3 and document["audit"]["unanswered"] == 1 and verdicts(document)
