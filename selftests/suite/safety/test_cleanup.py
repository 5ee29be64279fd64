"""Owned data only: what a run creates is in its ledger and gone at the end; data it did not create
is untouched; --no-cleanup keeps, --sweep removes; --read-only changes nothing at all.

The runs are made once (safety_batch.py) against reference servers seeded, before the run, with
data of both principals the suite did not create.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from safety_batch import batch
from safety_support import TOKEN

from assistant_conformance.suite.http.answer_bounds import BoundedTransport
from assistant_conformance.suite.safety.guard import Guard, NotOwned, ReadOnlyRefused
from assistant_conformance.suite.safety.guarded import Guarding
from assistant_conformance.suite.safety.ledger import LEDGER_DIR, Ledger, read_ledger
from assistant_conformance.suite.safety.removal import Leftover
from assistant_conformance.suite.safety.sweep import open_entries, sweep_ledgers

# Under xdist the batch is made once, on one worker, for every test that reads it.
pytestmark = pytest.mark.xdist_group("safety-batch")

EXPIRES_ONLY = {"chatkit_secret"}  # no delete operation in the contract: they expire


def test_nothing_the_run_created_is_left_and_the_rest_is_untouched() -> None:
    before, after = batch().before["main"], batch().after["main"]
    assert batch().runs["main"].returncode == 0, batch().runs["main"].output
    assert after.listings == before.listings  # threads, conversations, namespaces; both principals
    assert data(before.rows) - data(after.rows) == set()  # what was there is there, unchanged
    assert data(after.rows) - data(before.rows) == set()  # nothing more (but chat-kit secrets)
    assert before.counts["knowledge_document"] == after.counts["knowledge_document"]


def test_every_created_knowledge_base_is_gone() -> None:
    """No KB list operation exists: the ledger names them, the reference's GET extension checks."""
    assert len(batch().kb_paths) >= 10
    assert {path: codes for path, codes in batch().kb_after.items() if codes != (404, 404)} == {}


def test_ledger_records_intent_before_the_answer_and_the_delete_after() -> None:
    run = batch().runs["main"]
    (path,) = (run.report_dir / "ledger").glob("conformance-*.jsonl")
    records = read_ledger(path)
    assert records[0]["event"] == "run" and records[0]["run"] == path.stem
    intents = {r["seq"]: i for i, r in enumerate(records) if r["event"] == "intent"}
    created = [
        (i, r) for i, r in enumerate(records) if r["event"] == "created" and r["seq"] in intents
    ]
    assert created and all(intents[r["seq"]] < i for i, r in created)  # intent first
    removed = {r["seq"] for r in records if r["event"] == "removed"}
    assert {r["seq"] for _, r in created} <= removed
    assert records[-1] == {"event": "closed", "left": []}
    assert open_entries(records) == ([], [])
    assert "cleanup: removed" in run.output


def test_a_whole_run_says_which_chat_kit_sessions_it_leaves_and_until_when() -> None:
    """The interface has no delete for a chat-kit session: the run says how many stay, why, and
    by when they expire, at its end and in its reports; everything else is gone."""
    run = batch().runs["main"]
    left = batch().after["main"].counts.get("chatkit_secret", 0)
    left -= batch().before["main"].counts.get("chatkit_secret", 0)
    assert left > 0, "the run made chat-kit sessions: else nothing is shown here"
    said = f"left: {left} chat-kit sessions (the interface has no delete; they expire by 20"
    assert said in run.output, run.output[-3000:]
    (group,) = run.json()["cleanup"]["left"]
    assert (group["kind"], group["count"], group["removable"]) == ("chat-kit session", left, False)
    assert group["expires_by"] and "left: " in (run.report_dir / "conformance.md").read_text()


def test_no_cleanup_keeps_and_sweep_removes() -> None:
    kept_run, sweep_run = batch().runs["kept"], batch().runs["sweep"]
    before, between, after = batch().before["kept"], batch().between, batch().after["kept"]
    assert kept_run.returncode == 0, kept_run.output
    assert "--no-cleanup: kept the" in kept_run.output
    assert between is not None
    assert len(between.listings["main"]["threads"]) > len(before.listings["main"]["threads"])
    assert sweep_run.returncode == 0, sweep_run.output
    assert "sweep: 1 earlier runs with resources left" in sweep_run.output
    assert after.listings == before.listings and data(after.rows) == data(before.rows)


def data(rows: list[tuple[object, ...]]) -> set[tuple[object, ...]]:
    """The rows that are data: not the id counters (they only ever grow), nor chat-kit secrets."""
    return {r for r in rows if r[0] != "counters" and r[1] not in EXPIRES_ONLY}


def test_read_only_changes_nothing() -> None:
    run = batch().runs["read-only"]
    before, after = batch().before["read-only"], batch().after["read-only"]
    assert run.returncode == 0, run.output
    assert after.rows == before.rows  # every row of every table, byte for byte
    report = run.json()
    reasons = " ".join(r["reason"] for r in report["requirements"])
    assert "read-only mode" in reasons
    verdicts = run.verdicts()
    for checked in ("AUTH-MISSING-REJECTED", "AUTH-INVALID-REJECTED", "ROBUST-UNKNOWN-ID-404"):
        assert verdicts[checked] == "pass", (checked, verdicts[checked])
    for ledger in (run.report_dir / "ledger").glob("*.jsonl"):  # creates were tried on unknown
        assert open_entries(read_ledger(ledger)) == ([], [])  # ids only, and created nothing


# --- units -------------------------------------------------------------------------------------


def _door(answer: object) -> BoundedTransport:
    """A target answering `answer` (a response, or a function of the request), through the door."""
    respond = answer if callable(answer) else (lambda request: answer)
    return BoundedTransport(httpx.MockTransport(respond), deadline=5, cap=1 << 20)


def _transport(guard: Guard, ledger: Ledger | None, answer: httpx.Response) -> httpx.Client:
    transport = Guarding(guard, lambda: ledger, "main", token=TOKEN).transport(_door(answer))
    headers = {"Authorization": f"Bearer {TOKEN}"}
    return httpx.Client(base_url="http://target.test/base", transport=transport, headers=headers)


def test_read_only_guard_refuses_writes_before_sending() -> None:
    from assistant_conformance.report import redact

    redact.register(TOKEN)
    guard = Guard(read_only=True, request_timeout=1)
    guard.seen.add("11111111-1111-1111-1111-111111111111")
    sent = httpx.Response(200, json={"thread_id": "x"})
    with _transport(guard, None, sent) as client:
        for method, path in [
            ("POST", "/api/ai/threads"),
            ("PUT", "/api/ai/store/items"),
            ("DELETE", "/api/ai/threads/11111111-1111-1111-1111-111111111111"),
        ]:
            with pytest.raises(ReadOnlyRefused, match="read-only mode"):
                client.request(method, path)
        assert client.post("/api/ai/threads/search").status_code == 200
        assert client.get("/api/ai/threads/11111111-1111-1111-1111-111111111111").is_success
        assert client.delete("/api/ai/threads/22222222-2222-2222-2222-222222222222").is_success
        assert client.post("/api/ai/threads", headers={"Authorization": "Bearer x"}).is_success
    assert guard.breaches  # the unknown-id DELETE answered 2xx: reported


def test_creates_are_recorded_with_their_delete(tmp_path: Path) -> None:
    from assistant_conformance.report import redact

    redact.register(TOKEN)  # the run's own credential: its creates are announced
    ledger = Ledger(tmp_path, "http://target.test/base")
    guard = Guard(read_only=False, request_timeout=1)
    answer = httpx.Response(201, json={"id": "a/b"})
    with _transport(guard, ledger, answer) as client:
        client.post("/api/ai/knowledges", json={"name": ledger.run_prefix})
        client.post("/api/ai/v1/kb", json={})
        client.put("/api/ai/store/items", json={"namespace": ["n"], "key": "k", "value": {}})
        client.post("/api/ai/threads/search", json={})  # not a create: not recorded
    deletes = [(e.principal, e.method, e.path, e.json) for e in ledger.entries]
    assert deletes == [
        ("main", "DELETE", "/api/ai/knowledges/a%2Fb", None),
        ("main", "DELETE", "/api/ai/v1/kb/a%2Fb", None),
        ("main", "DELETE", "/api/ai/store/items", {"namespace": ["n"], "key": "k"}),
    ]
    events = [json.loads(line)["event"] for line in ledger.path.read_text().splitlines()]
    assert events == ["run", *["intent", "created"] * 3]


def test_sweep_removes_what_an_ended_run_left_and_leaves_a_live_run_alone(tmp_path: Path) -> None:
    deleted: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        deleted.append(f"{request.method} {request.url.path}")
        return httpx.Response(202)

    target = "http://target.test"
    live = Ledger(tmp_path / LEDGER_DIR, target)
    live.track("DELETE", "/api/ai/threads/t1")
    live.track("DELETE", "/api/ai/threads/t2", principal="alt")
    with httpx.Client(base_url=target, transport=httpx.MockTransport(answer)) as client:
        running = sweep_ledgers(tmp_path, target, {"main": client})
        assert (running.live, running.removed, deleted) == ([live.run_prefix], 0, [])
        live.release()  # the run ended without cleaning up (killed, or --no-cleanup)
        ended = sweep_ledgers(tmp_path, target, {"main": client})
        assert (ended.runs, ended.removed, deleted) == (
            [live.run_prefix],
            1,
            ["DELETE /api/ai/threads/t1"],
        )
        assert ended.left == [
            Leftover("thread", "no token of this principal",
                     "DELETE /api/ai/threads/t2 (alt)", removable=True)
        ]  # fmt: skip
        assert (
            sweep_ledgers(tmp_path, target, {"main": client}).runs == []
        )  # closed: never swept twice
        assert sweep_ledgers(tmp_path, "http://other.test", {"main": client}).runs == []


def test_a_check_can_change_only_what_the_run_created(tmp_path: Path) -> None:
    from assistant_conformance.report import redact

    redact.register(TOKEN)

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/search"):
            return httpx.Response(200, json=[{"thread_id": "theirs"}, {"thread_id": "mine"}])
        return httpx.Response(201 if request.method == "POST" else 202, json={"thread_id": "mine"})

    ledger = Ledger(tmp_path, "http://target.test")
    guarding = Guarding(Guard(read_only=False, request_timeout=1), lambda: ledger, "main", TOKEN)
    transport = guarding.transport(_door(answer))
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url="http://target.test", transport=transport, headers=headers) as c:
        c.post("/api/ai/threads", json={})
        c.post("/api/ai/threads/search", json={})  # the target shows a thread the run did not make
        assert c.patch("/api/ai/threads/mine", json={}).is_success
        assert c.delete("/api/ai/threads/never-shown").is_success  # an unknown id: allowed
        for method in ("PATCH", "DELETE", "POST"):
            path = "/api/ai/threads/theirs" + ("/copy" if method == "POST" else "")
            with pytest.raises(NotOwned, match="owned data only"):
                c.request(method, path, json={})
        assert c.get("/api/ai/threads/theirs").is_success  # reading is fine
        ledger.release()


def test_removals_go_deepest_first_several_at_a_time() -> None:
    """A feedback before its message, a message before its conversation; within one depth the
    removals overlap (across a network they wait on answers, not on each other)."""
    import threading
    import time

    from assistant_conformance.suite.safety.removal import MAIN, Removal, remove_entries

    seen: list[tuple[int, float, float]] = []
    lock = threading.Lock()

    def answer(request: httpx.Request) -> httpx.Response:
        started = time.monotonic()
        time.sleep(0.05)
        with lock:
            seen.append((request.url.path.count("/"), started, time.monotonic()))
        return httpx.Response(204)

    paths = ["/api/ai/conversations/c1", "/api/ai/conversations/c1/messages/m1",
             *(f"/api/ai/conversations/c1/messages/m1/feedbacks/f{n}" for n in range(6)),
             "/api/ai/threads/t1"]  # fmt: skip
    entries = [Removal(n, MAIN, "DELETE", path) for n, path in enumerate(paths)]
    with httpx.Client(base_url="http://target", transport=httpx.MockTransport(answer)) as client:
        left = remove_entries(entries, {MAIN: client}, lambda record: None)
    assert left == [] and len(seen) == len(paths)
    by_start = sorted(seen, key=lambda s: s[1])
    depths = [depth for depth, _, _ in by_start]
    assert depths == sorted(depths, reverse=True)
    deepest = [s for s in seen if s[0] == depths[0]]
    assert max(s[1] for s in deepest) < min(s[2] for s in deepest)  # all six in flight at once


@pytest.mark.parametrize(("delete_status", "exit_status"), [(202, 0), (500, 3)])
def test_a_sweep_says_what_stays_and_fails_only_when_a_removal_failed(
    tmp_path: Path, delete_status: int, exit_status: int
) -> None:
    """A chat-kit session cannot be removed (no delete): said, with its expiry, exit 0; a
    thread whose delete is refused could have been: said, exit 3."""
    from datetime import UTC, datetime, timedelta

    from assistant_conformance.suite.safety.sweep import outcome

    target = "http://target.test"
    killed = Ledger(tmp_path / LEDGER_DIR, target)
    killed.track("DELETE", "/api/ai/threads/t1")
    expires = int((datetime.now(UTC) + timedelta(minutes=10)).timestamp()) // 60 * 60 + 7
    intent = killed.intend_path("POST", "/api/ai/v1/chatkit/sessions")
    assert intent is not None
    killed.created(intent, 201, {"client_secret": "ck_x" * 8, "expires_at": expires})
    killed.release()  # killed: nothing removed, the ledger left open
    answer = httpx.MockTransport(lambda request: httpx.Response(delete_status))
    with httpx.Client(base_url=target, transport=answer) as client:
        said = outcome(sweep_ledgers(tmp_path, target, {"main": client}))
    assert said.exit_status == exit_status, said.lines
    by = datetime.fromtimestamp(expires, UTC)
    assert any(
        line.startswith("left: 1 chat-kit session (the interface has no delete; it expires by ")
        and line.endswith(f"{(by + timedelta(minutes=1)).strftime('%Y-%m-%dT%H:%M')}Z)")
        for line in said.lines
    ), said.lines
    failed = [line for line in said.lines if "its delete answered HTTP 500" in line]
    assert bool(failed) == (exit_status == 3), said.lines
