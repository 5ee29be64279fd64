"""Judging costs the same per exchange at the last as at the first, and the proxy serves while it
judges.

- the audit of a session reads each exchange a bounded number of times, whatever came before it:
  judging four times the traffic (threads created, patched, read, deleted, read again) reads the
  exchanges about four times as often, not sixteen (counted, not timed: bench/audit_scale.py
  measures the seconds);
- the proxy judges off the loop that serves its clients: with its judging held, it still answers
  every request, and judges them all once let go.
"""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest
from har_support import exchange, har, thread
from safety_support import TOKEN, serve

from assistant_conformance.audit.capture import Capture
from assistant_conformance.audit.harfile import judged_entry
from assistant_conformance.audit.proxy import Proxy
from assistant_conformance.audit.rules import Judging

pytestmark = pytest.mark.xdist_group("audit")


class Counted(list):  # type: ignore[type-arg]
    """A list that counts how often its items are read."""

    reads = 0

    def __getitem__(self, index: Any) -> Any:
        found = super().__getitem__(index)
        Counted.reads += len(found) if isinstance(index, slice) else 1
        return found

    def __iter__(self) -> Any:
        for item in super().__iter__():
            Counted.reads += 1
            yield item


def session(threads: int) -> list[dict[str, Any]]:
    """Each thread created, patched, read twice, deleted and read again."""
    entries = []
    for number in range(threads):
        path = f"/api/ai/threads/{thread(number)}"
        made = {"thread_id": thread(number), "metadata": {"n": number}}
        entries += [
            exchange("POST", "/api/ai/threads", 201, body={}, answer=made),
            exchange("PATCH", path, 200, body={"metadata": {"n": number}}, answer=made),
            exchange("GET", path, 200, answer=made),
            exchange("GET", path, 200, answer=made),
            exchange("DELETE", path, 202),
            exchange("GET", path, 404, answer={"detail": "gone"}),
        ]
    return entries


def reads_to_judge(threads: int) -> int:
    capture = Capture("session.har")
    for raw in har(session(threads))["log"]["entries"]:
        capture.add(*judged_entry(raw))
    capture.entries = Counted(capture.entries)
    judging = Judging(capture)
    judging.ops = Counted()
    Counted.reads = 0
    findings = judging.all()
    assert {f.requirement for f in findings} >= {"THR-PATCH-PERSISTS", "THR-DELETE-GONE"}
    return Counted.reads


def test_judging_reads_each_exchange_a_bounded_number_of_times() -> None:
    few, many = reads_to_judge(50), reads_to_judge(200)
    assert many <= 4.4 * few, (few, many)  # linear: 4 times the traffic, 4 times the reads


def test_the_proxy_serves_while_its_judging_is_held(tmp_path, monkeypatch) -> None:
    held = threading.Event()
    judge = Judging.next

    def slow(self: Judging) -> Any:
        held.wait(30)
        return judge(self)

    monkeypatch.setattr(Judging, "next", slow)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    from audit_support import upstream_of

    with serve(upstream_of("reference", tmp_path)) as upstream:
        proxy = Proxy(upstream, tmp_path / "live", say=lambda _: None)
        with serve(proxy) as base, httpx.Client(base_url=base, headers=auth, timeout=5) as client:
            statuses = [client.post("/api/ai/threads", json={}).status_code for _ in range(3)]
            held.set()
        run = proxy.finish()
    assert statuses == [201, 201, 201]
    assert run.info["audit"]["judged"] == 3
    assert run.requirements["THR-STATUS"].verdict in ("pass", "skip")
