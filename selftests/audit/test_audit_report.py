"""What a user of `audit` and `proxy` sees.

- the reports of an audit have its own header (the files; the exchanges judged, off the document
  and unanswered; the period they cover), not a suite run's fields (runs, transport, seed, tests);
- an untested requirement says which it is: not judgeable from traffic (no exchange can show it,
  whoever sent it) or not exercised by these exchanges;
- `proxy --base-path /` judges a server mounted at the root; without it nothing is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from audit_support import audited, upstream_of
from har_support import exchange, thread, written
from safety_support import TOKEN, serve

from assistant_conformance.audit.proxy import Proxy

pytestmark = pytest.mark.xdist_group("audit")
NOT_JUDGEABLE = "not judgeable from traffic: "
NOT_EXERCISED = "untested: no exchange of these exercised it"


def threads_file(path: Path) -> Path:
    made = {"thread_id": thread(1), "metadata": {}}
    return written(path, [
        exchange("POST", "/api/ai/threads", 201, body={}, answer=made),
        exchange("GET", f"/api/ai/threads/{thread(1)}", 200, answer=made),
        exchange("GET", "/favicon.ico", 404, answer="no"),
        exchange("GET", f"/api/ai/threads/{thread(2)}", 0),
    ])  # fmt: skip


def test_an_audits_reports_have_its_own_header(tmp_path: Path) -> None:
    har = threads_file(tmp_path / "threads.har")
    _, document = audited([har], tmp_path / "report")
    seen = document["audit"]
    assert (seen["files"], seen["judged"], seen["off_document"], seen["unanswered"]) == (
        [str(har)], 2, 1, 1)  # fmt: skip
    assert seen["period"] == {"from": "2026-01-02T03:04:05.000Z", "to": "2026-01-02T03:04:05.007Z"}
    html = (tmp_path / "report" / "conformance.html").read_text()
    markdown = (tmp_path / "report" / "conformance.md").read_text()
    for text in (html, markdown):
        assert str(har) in text and "2026-01-02T03:04:05.000Z" in text
        assert "2 judged" in text and "1 off the document" in text and "1 unanswered" in text
        assert "seed 0" not in text
    for field in ("<dt>Runs</dt>", "<dt>Transport</dt>", "<dt>Clean-up</dt>", "test(s)"):
        assert field not in html, field


def test_untested_says_whether_traffic_could_judge_it(tmp_path: Path) -> None:
    _, document = audited([threads_file(tmp_path / "threads.har")], tmp_path / "report")
    untested = {r["id"]: r["reason"] for r in document["requirements"]
                if r["verdict"] == "untested"}  # fmt: skip
    cannot = {rid for rid, why in untested.items() if why.startswith(NOT_JUDGEABLE)}
    assert {rid for rid, why in untested.items() if why == NOT_EXERCISED} == set(untested) - cannot
    assert {"AUTH-PRINCIPAL-ISOLATION", "KB-PREFIXES-IDENTICAL", "KB-STATUS-IDS-REQUIRED"} <= cannot
    assert {"CONV-DELETE-GONE", "AUTH-MISSING-REJECTED"} <= set(untested) - cannot
    assert document["audit"]["not_judgeable"] == len(cannot) >= 39
    assert document["audit"]["not_exercised"] == len(untested) - len(cannot)
    html = (tmp_path / "report" / "conformance.html").read_text()
    assert f"{len(cannot)} not judgeable from traffic" in html


def at_the_root(api: Any) -> Any:
    """The reference mounted at the root: `/threads` is its `/api/ai/threads`."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            scope = {**scope, "path": "/api/ai" + scope["path"],
                     "raw_path": b"/api/ai" + scope.get("raw_path", b"")}  # fmt: skip
        await api(scope, receive, send)

    return app


@pytest.mark.parametrize("base_path", ["/", None])
def test_the_proxy_reads_a_server_at_the_root_with_its_base_path(base_path, tmp_path) -> None:
    with serve(at_the_root(upstream_of("reference", tmp_path))) as upstream:
        proxy = Proxy(upstream, tmp_path / "live", say=lambda _: None, base_path=base_path)
        with serve(proxy) as base:
            made = httpx.post(f"{base}/threads", json={},
                              headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)  # fmt: skip
        run = proxy.finish()
    assert made.status_code == 201
    assert run.info["audit"]["judged"] == (1 if base_path else 0)
    assert run.requirements["THR-STATUS"].verdict != "untested" if base_path else True
    assert run.info["options"]["base_path"] == base_path
