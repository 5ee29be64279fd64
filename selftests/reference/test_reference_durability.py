"""Threads, runs and run events survive restarts; concurrent clients lose nothing."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from conftest import TOKEN_A
from test_reference_threads import API, join, new_thread, run_status, start_run, wait_for


def client_for(server) -> httpx.Client:
    headers = {"Authorization": f"Bearer {TOKEN_A}"}
    return httpx.Client(base_url=server.base_url, headers=headers, timeout=10, verify=False)


def test_restart_keeps_threads_runs_events_and_store(start_server, tmp_path):
    db = tmp_path / "durable.db"
    server = start_server(db=db, token_delay_ms=1)
    with client_for(server) as client:
        thread_id = new_thread(client, metadata={"kept": True})
        modes = ["values", "updates", "custom"]  # more than the default (values): more to keep
        body = {"assistant_id": "counter", "stream_mode": modes}
        client.post(f"{API}/threads/{thread_id}/runs/wait", json=body)
        run_id = client.get(f"{API}/threads/{thread_id}/runs?limit=1&offset=0").json()[0]["run_id"]
        events = join(client, thread_id, run_id)
        history = client.post(f"{API}/threads/{thread_id}/history").json()
        item = {"namespace": ["durable"], "key": "k", "value": {"v": 1}}
        assert client.put(f"{API}/store/items", json=item).status_code == 204
    server.stop()

    with client_for(start_server(db=db)) as client:
        thread = client.get(f"{API}/threads/{thread_id}").json()
        assert thread["metadata"] == {"kept": True} and thread["values"] == {"count": 5}
        assert run_status(client, thread_id, run_id) == "success"
        assert join(client, thread_id, run_id) == events
        assert join(client, thread_id, run_id, str(events[1][0])) == events[2:]
        assert client.post(f"{API}/threads/{thread_id}/history").json() == history
        found = client.post(f"{API}/store/items/search", json={"namespace_prefix": ["durable"]})
        assert [i["value"] for i in found.json()["items"]] == [{"v": 1}]


@pytest.mark.parametrize("how", ["terminate", "kill"])
def test_run_cut_by_a_stop_ends_as_error_after_restart(start_server, tmp_path, how):
    db = tmp_path / "cut.db"
    server = start_server(db=db, token_delay_ms=100)
    with client_for(server) as client:
        thread_id = new_thread(client)
        run_id = start_run(client, thread_id, text="slow " * 100)  # about 10 s
        wait_for(lambda: run_status(client, thread_id, run_id) == "running")
    if how == "kill":
        server.process.kill()
        server.process.wait()
    else:
        server.stop()

    with client_for(start_server(db=db)) as client:
        assert run_status(client, thread_id, run_id) == "error"
        events = join(client, thread_id, run_id)  # terminates instead of hanging
        assert events[0][1] == "metadata"
        assert [name for _, name, _ in events[-2:]] == ["error", "end"]
        assert client.get(f"{API}/threads/{thread_id}").json()["status"] == "error"


def test_twenty_concurrent_clients_lose_nothing(reference_server):
    def work(i: int) -> tuple[str, str, list[int]]:
        with client_for(reference_server) as client:
            statuses = []
            created = client.post(f"{API}/threads", json={"metadata": {"worker": i}})
            statuses.append(created.status_code)
            thread_id = created.json()["thread_id"]
            run = client.post(
                f"{API}/threads/{thread_id}/runs",
                json={"assistant_id": "echo", "input": {"text": f"worker {i}"}},
            )
            statuses.append(run.status_code)
            statuses.append(client.get(f"{API}/threads/{thread_id}").status_code)
            return thread_id, run.json()["run_id"], statuses

    with ThreadPoolExecutor(max_workers=20) as pool:
        results = list(pool.map(work, range(20)))
    assert all(code < 500 for _, _, codes in results for code in codes)
    assert all(codes == [201, 201, 200] for _, _, codes in results)
    with client_for(reference_server) as client:
        deadline = time.monotonic() + 60  # a bound on the wait, not a timing
        for thread_id, run_id, _ in results:
            assert client.get(f"{API}/threads/{thread_id}").status_code == 200
            while run_status(client, thread_id, run_id) != "success":
                assert time.monotonic() < deadline
                time.sleep(0.05)
