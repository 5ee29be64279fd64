"""Real client traffic judged as it passes the proxy, and audited from what it recorded.

The traffic is a client app's: the official LangGraph Python client (`langgraph-sdk`) with a token
(a thread created, patched and read back, searched, a run streamed, its stream joined again and
resumed after an event, the thread deleted and read again), and plain requests without a token.
It passes the proxy to the reference, to conformant variants (extra fields, other SSE spellings,
gzip) and to mutants it exercises. The proxy's HAR audited: each conformant server exits 0 with
what the traffic did not exercise untested; each mutant is caught by exactly its requirements,
each finding naming its exchange. The proxy passes exchanges on unchanged, streams chunk by
chunk, and on SIGINT or SIGTERM writes its recording and reports (no token in any).
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest

pytest.importorskip("langgraph_sdk")
from audit_support import audited, client_traffic, upstream_of, verdicts
from safety_support import ALT_TOKEN, TOKEN, serve

from assistant_conformance.audit.proxy import Proxy
from assistant_conformance.audit.recorder import DEADLINE
from assistant_conformance.audit.session import HAR_FILE
from assistant_conformance.contract.catalogue import load
from assistant_conformance.proof import mutants
from assistant_conformance.reference._agents import ECHO_ASSISTANT_ID
from assistant_conformance.report.conformance_json import report_schema
from assistant_conformance.suite.http import trail

pytestmark = pytest.mark.xdist_group("proxy")
# The recording is HAR 1.2 as the suite writes it: the strict schema, not the one files are read by.
WRITTEN_HAR = json.loads(
    resources.files("assistant_conformance.report").joinpath("schemas/har.schema.json").read_text()
)
CONFORMANT = (
    "reference", "extra-fields", "sse-dialect", "gzip", "idless-opening-frame",
    "opaque-identifiers",
)  # fmt: skip
MUTANTS = (
    "create-thread-200", "search-threads-no-auth", "events-without-ids", "stream-served-as-text",
    "deleted-thread-readable", "thread-patch-not-persisted", "no-www-authenticate",
    "join-ignores-last-event-id", "join-repeats-last-event", "post-stream-ignores-last-event-id",
    "post-stream-skips-event", "missing-token-500",
)  # fmt: skip
EXERCISED = (  # what the traffic shows held on every conformant server
    "AUTH-MISSING-REJECTED", "AUTH-INVALID-REJECTED", "AUTH-401", "AUTH-WWW-AUTHENTICATE",
    "THR-PATCH-PERSISTS", "THR-DELETE-GONE", "RUN-STREAM-EVENT-IDS", "RUN-JOIN-RESUME",
    "RUN-STREAM-RESUME",
    "RUN-STREAM-CONTENT-TYPE", "RUN-STREAM-ENDS", "ROBUST-RESPONSE-SHAPE", "ROBUST-NO-5XX",
)  # fmt: skip


@pytest.mark.parametrize("name", CONFORMANT + MUTANTS)
def test_client_traffic_through_the_proxy_is_judged_as_audited(name: str, tmp_path: Path) -> None:
    said: list[str] = []
    with serve(upstream_of(name, tmp_path)) as upstream:
        proxy = Proxy(upstream, tmp_path / "live", say=said.append)
        with serve(proxy) as base:
            client_traffic(base)
        live = proxy.finish()
    har = tmp_path / "live" / HAR_FILE
    jsonschema.validate(json.loads(har.read_text()), WRITTEN_HAR)
    code, document = audited([har], tmp_path / "audit")
    found = verdicts(document)
    assert {rid: r.verdict for rid, r in live.requirements.items()} == found  # judged alike
    broken = {rid for rid, verdict in found.items() if verdict in ("fail", "warn")}
    expected = set(mutants.MUTANTS[name][1]) if name in mutants.MUTANTS else set()
    assert broken == expected, [r["findings"][:1] for r in document["requirements"]
                                if r["id"] in broken ^ expected]  # fmt: skip
    must = any(load()[rid].level == "MUST" for rid in expected)
    assert code == (1 if must else 0)
    assert "untested" in found.values() and "pass" in found.values()
    if not expected:
        held = {rid for rid in EXERCISED if found[rid] == "pass"}
        assert held == set(EXERCISED), set(EXERCISED) - held
    for requirement in document["requirements"]:
        for finding in requirement["findings"]:  # each names its exchange
            entry = finding["evidence"]["entry"]
            assert finding["evidence"]["har"] == str(har)
            assert f"{har}, entry {entry})" in finding["actual"]
    assert len([line for line in said if not line.startswith("no answer")]) >= len(broken)
    for path in [*(tmp_path / "live").iterdir(), *(tmp_path / "audit").iterdir()]:
        assert TOKEN not in path.read_text() and ALT_TOKEN not in path.read_text(), path


def test_exchanges_pass_unchanged_and_streams_chunk_by_chunk(tmp_path: Path) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}", "Accept-Encoding": "gzip"}
    with serve(upstream_of("gzip", tmp_path)) as upstream:
        proxy = Proxy(upstream, tmp_path / "live", say=lambda _: None)
        with serve(proxy) as base:
            got = {}
            for where in (upstream, base):
                with httpx.Client(base_url=where, headers=auth, timeout=10) as client:
                    read = client.get(f"/api/ai/assistants/{ECHO_ASSISTANT_ID}")
                    thread = client.post("/api/ai/threads", json={}).json()["thread_id"]
                    body = {"assistant_id": ECHO_ASSISTANT_ID, "input": {"text": "a b c d e"}}
                    url = f"/api/ai/threads/{thread}/runs/stream"
                    with client.stream("POST", url, json=body) as streamed:
                        chunks = list(streamed.iter_raw())
                got[where] = (read, streamed, chunks)
        proxy.finish()
    (direct, direct_stream, _), (passed, passed_stream, chunks) = got[upstream], got[base]
    assert (passed.status_code, passed.content) == (direct.status_code, direct.content)
    kept = {"content-type", "content-encoding", "content-length", "vary"}
    assert {k: v for k, v in passed.headers.items() if k in kept} == {
        k: v for k, v in direct.headers.items() if k in kept
    }
    assert passed_stream.headers["content-encoding"] == direct_stream.headers["content-encoding"]
    assert len(chunks) > 1  # passed on as they came, not gathered
    recorded = json.loads((tmp_path / "live" / HAR_FILE).read_text())["log"]["entries"]
    stream = next(e for e in recorded if e["request"]["url"].endswith("/runs/stream"))
    assert (
        stream["_stream"]["closed_by_server"]
        and "event: end" in stream["response"]["content"]["text"]
    )  # kept as it reads: inflated


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_the_command_records_until_a_signal_then_writes_its_reports(
    stop: signal.Signals, tmp_path: Path
) -> None:
    with serve(upstream_of("reference", tmp_path)) as upstream:
        report = tmp_path / "report"
        command = [sys.executable, "-m", "assistant_conformance", "proxy", "--upstream", upstream,
                   "--port", "0", "--report-dir", str(report)]  # fmt: skip
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)  # fmt: skip
        assert process.stdout is not None
        started = process.stdout.readline()
        assert "recording every exchange" in started, started
        base = started.split(": ", 1)[1].split(" ")[0]
        auth = {"Authorization": f"Bearer {TOKEN}"}
        httpx.post(f"{base}/api/ai/threads", json={}, headers=auth, timeout=10)
        httpx.post(f"{base}/api/ai/threads", json={}, timeout=10)
        process.send_signal(stop)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "2 exchanges in 1 file(s): 2 judged" in out
    document = json.loads((report / "conformance.json").read_text())
    jsonschema.validate(document, report_schema())
    assert document["invocation"] == "assistant-conformance proxy"
    assert verdicts(document)["AUTH-MISSING-REJECTED"] == "pass"
    assert {p.name for p in report.iterdir()} >= {HAR_FILE, "conformance.json", "junit.xml"}
    assert all(TOKEN not in p.read_text() for p in report.iterdir())


FLOOD = 4 * 1024 * 1024  # bytes one answer sends: far past what the proxy keeps of it


async def hostile(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """An upstream that floods (`/flood`: 4 MiB), drips (`/drip`: a comment now and then, never
    ending) or says nothing (`/silent`)."""
    if scope["type"] != "http":
        return
    if scope["path"] == "/silent":
        await asyncio.sleep(3600)
    drip = scope["path"] == "/drip"
    kind = b"text/event-stream" if drip else b"application/octet-stream"
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", kind)]})
    if not drip:
        for _ in range(FLOOD // 65536):
            await send({"type": "http.response.body", "body": b"x" * 65536, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return
    while True:
        await send({"type": "http.response.body", "body": b": ping\n\n", "more_body": True})
        await asyncio.sleep(0.05)


def test_a_flood_or_a_drip_cannot_take_the_proxy_past_its_bounds(tmp_path: Path) -> None:
    with serve(hostile) as upstream:
        proxy = Proxy(upstream, tmp_path / "live", deadline=1.0, budget=300_000, say=print)
        with serve(proxy) as base, httpx.Client(base_url=base, timeout=30) as client:
            flooded = client.get("/flood")
            silent = client.get("/silent")
            with pytest.raises(httpx.HTTPError), client.stream("GET", "/drip") as dripped:
                for _ in dripped.iter_raw():
                    pass
        proxy.finish()
    assert flooded.status_code == 200 and flooded.content == b"x" * FLOOD  # passed on whole
    assert silent.status_code == 504  # the proxy's own answer: none came in time
    flood, quiet, drip = json.loads((tmp_path / "live" / HAR_FILE).read_text())["log"]["entries"]
    assert quiet["response"]["status"] == 0 and quiet["_fault"] == "silent"
    assert flood["_truncated"] and flood["response"]["content"]["size"] == FLOOD
    assert len(flood["response"]["content"]["text"]) <= trail.BODY_LIMIT
    assert drip["_stream"]["cut"] == DEADLINE and not drip["_stream"]["closed_by_server"]
    kept = sum(len(e["response"]["content"]["text"]) for e in (flood, drip))
    assert kept <= 300_000
