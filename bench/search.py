"""The reference's searches at scale: 100,000 threads, conversations and store items.

    python bench/search.py [--count 100000] [--json reports/search.json]

Fills a fresh database directly (one principal owns everything, one in ten records carries the
searched metadata), starts the reference on it, then for each search measures its latency over
HTTP (median and worst of --repeat requests, limit 10) and, while the same searches run back to
back on a second connection, the latency of a thread read (GET /threads/{id}): a search that
blocked the event loop would show there. The tokens are random and never printed.
"""

from __future__ import annotations

import argparse
import json
import secrets
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx

from assistant_conformance.reference._records import new_thread
from assistant_conformance.reference.connectors import ReferenceConnector
from assistant_conformance.reference.db import Database

ROOT = Path(__file__).resolve().parent.parent
OWNER = "principal-0"  # the reference names the first --token's principal so

THREADS, CONVERSATIONS, ITEMS = (
    "/api/ai/threads/search", "/api/ai/conversations/search", "/api/ai/store/items/search"
)  # fmt: skip
SEARCHES = {
    "threads, by metadata": (THREADS, {"metadata": {"batch": "b7"}, "limit": 10}),
    "threads, newest": (THREADS, {"limit": 10}),
    "threads, by status": (THREADS, {"status": "idle", "limit": 10, "offset": 500}),
    "conversations, by title": (CONVERSATIONS, {"title": "topic 7", "limit": 10}),
    "store, by namespace": (ITEMS, {"namespace_prefix": ["b7"], "limit": 10}),
}


def fill(path: Path, count: int) -> str:
    """`count` threads, conversations and store items; answers one thread's id."""
    db = Database(path)
    db._conn.execute("PRAGMA synchronous=OFF")  # a fill, not a durability test
    thread_id = ""
    for i in range(count):
        thread_id = str(uuid.uuid4())
        db.put("thread", thread_id, OWNER, new_thread(OWNER, thread_id, {"batch": f"b{i % 10}"}))
        conversation = {"id": str(uuid.uuid4()), "title": f"topic {i % 10}", "metadata": {}}
        db.put("conversation", conversation["id"], OWNER, conversation)
        namespace, key, now = [f"b{i % 10}"], f"k{i}", "2026-11-23T00:00:00+00:00"
        item = {"namespace": namespace, "key": key, "value": {"n": i}, "created_at": now,
                "updated_at": now}  # fmt: skip
        db.put("store_item", f"{OWNER}\x00{json.dumps([namespace, key])}", OWNER, item)
    db.close()
    return thread_id


def timed(client: httpx.Client, path: str, body: dict) -> float:
    started = time.perf_counter()
    client.post(path, json=body).raise_for_status()
    return (time.perf_counter() - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--json", type=Path, default=ROOT / "reports" / "search.json")
    args = parser.parse_args()
    token = secrets.token_hex(16)
    with tempfile.TemporaryDirectory() as workdir:
        db_path = Path(workdir) / "reference.db"
        started = time.monotonic()
        thread_id = fill(db_path, args.count)
        print(f"filled {args.count} of each in {time.monotonic() - started:.0f} s", flush=True)
        server = ReferenceConnector(token_delay_ms=0, tokens=(token,)).start(Path(workdir))
        headers = {"Authorization": f"Bearer {token}"}
        rows = []
        try:
            with httpx.Client(base_url=server.base_url, headers=headers, timeout=60) as client:
                for name, (path, body) in SEARCHES.items():
                    times = [timed(client, path, body) for _ in range(args.repeat)]
                    reads = read_latency_during(server.base_url, headers, path, body, thread_id)
                    rows.append({
                        "search": name,
                        "median_ms": round(statistics.median(times), 1),
                        "max_ms": round(max(times), 1),
                        "read_during_median_ms": round(statistics.median(reads), 1),
                        "read_during_max_ms": round(max(reads), 1),
                    })  # fmt: skip
                    print(json.dumps(rows[-1]), flush=True)
        finally:
            server.stop()
    args.json.parent.mkdir(parents=True, exist_ok=True)
    document = {"count": args.count, "searches": rows}
    args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return 0


def read_latency_during(
    base_url: str, headers: dict[str, str], path: str, body: dict, thread_id: str
) -> list[float]:
    """GET /threads/{id} latencies (ms) while the search runs back to back on another client."""
    stop = threading.Event()

    def searching() -> None:
        with httpx.Client(base_url=base_url, headers=headers, timeout=60) as other:
            while not stop.is_set():
                other.post(path, json=body)

    worker = threading.Thread(target=searching)
    worker.start()
    reads = []
    try:
        with httpx.Client(base_url=base_url, headers=headers, timeout=60) as client:
            time.sleep(0.2)
            for _ in range(30):
                started = time.perf_counter()
                client.get(f"/api/ai/threads/{thread_id}").raise_for_status()
                reads.append((time.perf_counter() - started) * 1000)
    finally:
        stop.set()
        worker.join()
    return reads


if __name__ == "__main__":
    sys.exit(main())
