"""The proxy's recording says what it cut, and holds every exchange that started.

- a request body past what is kept (256 KiB) is recorded cut, marked `_truncated: ["request"]`,
  with its whole size as `bodySize`; it passed on whole;
- exchanges in flight when the proxy is stopped (SIGTERM: a stream still flowing, a request
  still waiting for its answer) are in the recording, marked `_in_flight`, and in the counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from audit_support import upstream_of
from har_support import thread
from safety_support import TOKEN, serve

from assistant_conformance.audit.proxy import Proxy
from assistant_conformance.audit.session import HAR_FILE
from assistant_conformance.suite.http import trail

pytestmark = pytest.mark.xdist_group("proxy")
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def test_a_request_body_past_the_limit_is_recorded_cut_and_said(tmp_path: Path) -> None:
    body = json.dumps({"metadata": {"note": "x" * (300 * 1024)}}).encode()
    with serve(upstream_of("reference", tmp_path)) as upstream:
        proxy = Proxy(upstream, tmp_path / "live", say=lambda _: None)
        with serve(proxy) as base:
            found = httpx.post(f"{base}/api/ai/threads/search", content=body, timeout=30,
                               headers={**AUTH, "Content-Type": "application/json"})  # fmt: skip
        proxy.finish()
    assert found.status_code == 200 and found.json() == []  # the whole filter reached it
    entry = json.loads((tmp_path / "live" / HAR_FILE).read_text())["log"]["entries"][0]
    assert entry["_truncated"] == ["request"]
    assert entry["request"]["bodySize"] == len(body)
    assert len(entry["request"]["postData"]["text"]) == trail.BODY_LIMIT


STREAM = f"/api/ai/threads/{thread(1)}/runs/{thread(2)}/stream"
READ = f"/api/ai/threads/{thread(1)}"


def slow_upstream(arrived: threading.Event) -> Any:
    """A stream that drips forever, and a read that never gets its answer."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] == READ:
            arrived.set()
            await asyncio.sleep(3600)
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")]})  # fmt: skip
        number = 0
        while True:
            number += 1
            event = f"id: {number}\nevent: values\ndata: {{}}\n\n".encode()
            await send({"type": "http.response.body", "body": event, "more_body": True})
            await asyncio.sleep(0.05)

    return app


def test_exchanges_in_flight_at_sigterm_are_recorded_and_counted(tmp_path: Path) -> None:
    arrived, streaming = threading.Event(), threading.Event()
    report = tmp_path / "report"
    with serve(slow_upstream(arrived)) as upstream:
        command = [sys.executable, "-m", "assistant_conformance", "proxy", "--upstream", upstream,
                   "--port", "0", "--report-dir", str(report)]  # fmt: skip
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)  # fmt: skip
        assert process.stdout is not None
        base = process.stdout.readline().split(": ", 1)[1].split(" ")[0]

        def stream() -> None:
            with (
                contextlib.suppress(httpx.HTTPError),  # cut when the proxy stops
                httpx.stream("GET", base + STREAM, headers=AUTH, timeout=60) as flowing,
            ):
                for _ in flowing.iter_raw():
                    streaming.set()

        def read() -> None:
            with contextlib.suppress(httpx.HTTPError):
                httpx.get(base + READ, headers=AUTH, timeout=60)

        clients = [threading.Thread(target=step, daemon=True) for step in (stream, read)]
        for client in clients:
            client.start()
        assert streaming.wait(30) and arrived.wait(30)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    assert "Traceback" not in err, err
    entries = json.loads((report / HAR_FILE).read_text())["log"]["entries"]
    by_path = {httpx.URL(e["request"]["url"]).path: e for e in entries}
    assert set(by_path) == {STREAM, READ} and all(e["_in_flight"] for e in entries)
    assert by_path[STREAM]["response"]["status"] == 200
    assert "event: values" in by_path[STREAM]["response"]["content"]["text"]
    assert by_path[READ]["response"]["status"] == 0
    assert "2 exchanges in 1 file(s): 1 judged" in out and "1 without an answer" in out
