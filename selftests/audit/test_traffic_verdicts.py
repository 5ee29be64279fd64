"""Verdicts that follow the traffic.

- a thread made with an id the client chose, deleted, made again with the same id and read 200:
  a new life, not a read of the deleted one (THR-DELETE-GONE does not warn); deleted again and
  read 404, it passes;
- a stream the upstream cut by dying mid-run (through the proxy, and in its recording): never a
  RUN-STREAM-ENDS pass;
- a token refused (401) on one route is refused only where it was refused on every request it
  carried before: one `insufficient_scope` 401, or a 401 on one route of a token another route
  took, makes no later 2xx an AUTH-INVALID-REJECTED failure; a token refused on every request it
  carried, then answered 2xx, still is one, and says on how many.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from audit_support import audited, verdicts
from har_support import exchange, thread, written
from safety_support import TOKEN, serve

from assistant_conformance.audit.proxy import Proxy
from assistant_conformance.audit.session import HAR_FILE

pytestmark = pytest.mark.xdist_group("audit")
CHOSEN = thread(7)
PATH = f"/api/ai/threads/{CHOSEN}"
MADE = {"thread_id": CHOSEN, "metadata": {}}


def test_a_thread_made_again_with_its_id_is_a_new_life(tmp_path: Path) -> None:
    lives = [
        exchange("POST", "/api/ai/threads", 201, body={"thread_id": CHOSEN}, answer=MADE),
        exchange("DELETE", PATH, 202),
        exchange("POST", "/api/ai/threads", 201, body={"thread_id": CHOSEN}, answer=MADE),
        exchange("GET", PATH, 200, answer=MADE),  # the new life
        exchange("DELETE", PATH, 202),
        exchange("GET", PATH, 404, answer={"detail": "gone"}),
    ]
    code, document = audited([written(tmp_path / "lives.har", lives)], tmp_path / "report")
    assert verdicts(document)["THR-DELETE-GONE"] == "pass"
    assert code == 0


async def dies_mid_stream(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """An upstream whose run stream stops after its first event: the server died."""
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/event-stream")]})  # fmt: skip
    event = b'id: 1\nevent: metadata\ndata: {"run_id": "r1"}\n\n'
    await send({"type": "http.response.body", "body": event, "more_body": True})
    raise RuntimeError("the upstream died")


def test_a_stream_the_upstream_cut_is_no_pass(tmp_path: Path) -> None:
    with serve(dies_mid_stream) as upstream:
        proxy = Proxy(upstream, tmp_path / "live", say=lambda _: None)
        auth = {"Authorization": f"Bearer {TOKEN}"}
        with (
            serve(proxy) as base,
            httpx.Client(base_url=base, headers=auth, timeout=10) as client,
            pytest.raises(httpx.HTTPError),
            client.stream("POST", f"{PATH}/runs/stream", json={"assistant_id": "a"}) as streamed,
        ):
            for _ in streamed.iter_raw():
                pass
        live = proxy.finish()
    assert live.requirements["RUN-STREAM-ENDS"].verdict != "pass"
    entry = json.loads((tmp_path / "live" / HAR_FILE).read_text())["log"]["entries"][0]
    assert entry["_stream"]["closed_by_server"] is False
    _, document = audited([tmp_path / "live" / HAR_FILE], tmp_path / "audit")
    assert verdicts(document)["RUN-STREAM-ENDS"] != "pass"


SCOPE = {"WWW-Authenticate": 'Bearer error="insufficient_scope", scope="store"'}
STORE, THREADS = "/api/ai/store/items/search", "/api/ai/threads"
TRAFFIC = {
    "insufficient scope first": [
        exchange("POST", STORE, 401, body={}, answer={"d": 1}, answer_headers=SCOPE),
        exchange("POST", THREADS, 201, body={}, answer=MADE),
        exchange("POST", THREADS, 201, body={}, answer=MADE),
    ],
    "refused on one route of a token another took": [
        exchange("POST", THREADS, 201, body={}, answer=MADE),
        exchange("POST", STORE, 401, body={}, answer={"d": 1}),
        exchange("POST", THREADS, 201, body={}, answer=MADE),
    ],
    "refused on every request before": [
        exchange("POST", STORE, 401, body={}, answer={"d": 1}),
        exchange("POST", THREADS, 401, body={}, answer={"d": 1}),
        exchange("POST", THREADS, 201, body={}, answer=MADE),
    ],
}


@pytest.mark.parametrize("case", TRAFFIC)
def test_a_refused_token_is_judged_by_every_answer_it_got(case: str, tmp_path: Path) -> None:
    code, document = audited([written(tmp_path / "auth.har", TRAFFIC[case])], tmp_path / "r")
    verdict = verdicts(document)["AUTH-INVALID-REJECTED"]
    if case == "refused on every request before":
        assert (code, verdict) == (1, "fail")
        found = next(r for r in document["requirements"] if r["id"] == "AUTH-INVALID-REJECTED")
        said = found["findings"][0]["expected"]
        assert "refused (401) 2 time(s) before, first at entry 0" in said
    else:
        assert verdict != "fail" and code == 0, document["result"]
