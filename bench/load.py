"""Bounded load on the reference server: many concurrent clients through mixed operations.

    python bench/load.py [--clients 32] [--requests 3000] [--time-limit 60]
                         [--crash-after SECONDS] [--json reports/load.json]

Starts the reference on loopback (a fresh database in a temporary folder), then --clients
concurrent clients (asyncio, one connection pool each) loop through mixed operations: create a
thread and read it; start a run and read its event stream to the end; create a conversation and
post messages; create a knowledge base, add documents, process them and poll their status; put a
store item and search; search threads. The load stops by itself after --requests requests or
--time-limit seconds, whichever comes first.

Reported: requests per second, latency percentiles (p50, p95, p99, max) over every request (a
stream counts until its last event) and per operation, the status counts; then every acknowledged
write is read back: each thread, conversation, message, knowledge base, document and store item
a client saw created, and each run's events as the client received them (joining the run's stream
must replay them, same ids and data, in order).

--crash-after S: the server process is killed (SIGKILL) S seconds into the load; the clients stop,
the server is restarted on the same database, and everything acknowledged before the kill (writes
answered, run events received) must be there.

Exit status 0 when there was no 5xx and nothing acknowledged is missing, else 1. The JSON result
goes to --json (default reports/load.json). The tokens are random and never printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from assistant_conformance.reference import embedded

API = "/api/ai"
OPERATIONS = ("thread", "run-stream", "conversation", "knowledge", "store", "search")
STREAM_WORDS = 5
KB_POLLS = 3


@dataclass
class Load:
    """What the clients did and saw, shared by all of them (one event loop: no locks needed)."""

    budget: int
    deadline: float
    sent: int = 0
    stop: bool = False
    latencies: dict[str, list[float]] = field(default_factory=dict)
    statuses: Counter[int] = field(default_factory=Counter)
    transport_errors: Counter[str] = field(default_factory=Counter)
    acked: dict[str, list[Any]] = field(default_factory=dict)  # kind -> what to read back

    def may_send(self) -> bool:
        return not self.stop and self.sent < self.budget and time.monotonic() < self.deadline

    def ack(self, kind: str, item: Any) -> None:
        self.acked.setdefault(kind, []).append(item)


class Stopped(Exception):
    """The budget or the time is used up, or the server went away: this client stops."""


class Client:
    def __init__(self, load: Load, http: httpx.AsyncClient, number: int) -> None:
        self.load, self.http, self.number = load, http, number
        self.thread_id: str | None = None

    async def call(self, op: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
        if not self.load.may_send():
            raise Stopped
        self.load.sent += 1
        started = time.perf_counter()
        try:
            response = await self.http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            self.load.transport_errors[type(exc).__name__] += 1
            raise Stopped from None
        self.load.latencies.setdefault(op, []).append(time.perf_counter() - started)
        self.load.statuses[response.status_code] += 1
        return response

    async def run(self) -> None:
        steps = {
            "thread": self.thread,
            "run-stream": self.run_stream,
            "conversation": self.conversation,
            "knowledge": self.knowledge,
            "store": self.store,
            "search": self.search,
        }
        i = self.number
        try:
            while True:
                await steps[OPERATIONS[i % len(OPERATIONS)]](i)
                i += 1
        except Stopped:
            return

    async def thread(self, i: int) -> None:
        meta = {"load": f"client-{self.number}", "n": i}
        created = await self.call(
            "create thread", "POST", f"{API}/threads", json={"metadata": meta}
        )
        if created.status_code == 201:
            self.thread_id = created.json()["thread_id"]
            self.load.ack("thread", (self.thread_id, meta))
            await self.call("read thread", "GET", f"{API}/threads/{self.thread_id}")

    async def run_stream(self, i: int) -> None:
        if self.thread_id is None:
            return await self.thread(i)
        text = " ".join(f"w{i}-{n}" for n in range(STREAM_WORDS))
        modes = ["values", "messages-tuple", "updates"]  # an event per word, as the suite asks
        body = {"assistant_id": "echo", "input": {"text": text}, "stream_mode": modes}
        url = f"{API}/threads/{self.thread_id}/runs/stream"
        if not self.load.may_send():
            raise Stopped
        self.load.sent += 1
        started, events, location = time.perf_counter(), [], ""
        try:
            async with self.http.stream("POST", url, json=body) as response:
                self.load.statuses[response.status_code] += 1
                location = response.headers.get("content-location", "")
                async for event in sse_events(response):
                    events.append(event)
                    if event[1] == "metadata" and not location:
                        location = f"{API}/threads/{self.thread_id}/runs/{event[2]['run_id']}"
        except httpx.HTTPError as exc:
            self.load.transport_errors[type(exc).__name__] += 1
            raise Stopped from None
        finally:
            if events and location:  # every event received is acknowledged, even on a cut
                self.load.ack("run events", (location, events))
        self.load.latencies.setdefault("run stream", []).append(time.perf_counter() - started)

    async def conversation(self, i: int) -> None:
        title = f"load-{self.number}-{i}"
        created = await self.call(
            "create conversation", "POST", f"{API}/conversations", json={"title": title}
        )
        if created.status_code != 201:
            return
        cid = created.json()["id"]
        self.load.ack("conversation", (cid, title))
        for n in range(2):
            content = f"message {n} of {title}"
            url = f"{API}/conversations/{cid}/messages"
            posted = await self.call("post message", "POST", url, json={"content": content})
            if posted.status_code == 201:
                self.load.ack("message", (cid, posted.json()["id"], content))
        await self.call(
            "list messages",
            "GET",
            f"{API}/conversations/{cid}/messages",
            params={"limit": 10, "offset": 0},
        )

    async def knowledge(self, i: int) -> None:
        prefix = f"{API}/v1/kb" if i % 2 else f"{API}/knowledges"
        created = await self.call(
            "create kb", "POST", prefix, json={"name": f"load-{self.number}-{i}"}
        )
        if created.status_code != 201:
            return
        kb = created.json()["id"]
        self.load.ack("knowledge base", (prefix, kb))
        docs = [{"name": f"d{n}", "content": f"text {n} " * 20} for n in range(2)]
        bulk = await self.call("bulk documents", "POST", f"{prefix}/{kb}/bulk", json=docs)
        if bulk.status_code != 201:
            return
        ids = [d["id"] for d in bulk.json()]
        self.load.ack("documents", (prefix, kb, ids))
        await self.call("process documents", "POST", f"{prefix}/{kb}/process", json=ids)
        for _ in range(KB_POLLS):
            status = await self.call(
                "document status", "GET", f"{prefix}/{kb}/status", params={"ids": ",".join(ids)}
            )
            if status.status_code != 200 or all(d.get("status") == "finish" for d in status.json()):
                break
            await asyncio.sleep(0.05)

    async def store(self, i: int) -> None:
        item = {"namespace": ["load", f"client-{self.number}"], "key": f"k{i}", "value": {"i": i}}
        put = await self.call("put store item", "PUT", f"{API}/store/items", json=item)
        if put.status_code == 204:
            self.load.ack("store item", item)
        search = {"namespace_prefix": ["load", f"client-{self.number}"], "limit": 5}
        await self.call("search store", "POST", f"{API}/store/items/search", json=search)

    async def search(self, i: int) -> None:
        await self.call("search threads", "POST", f"{API}/threads/search", json={"limit": 5})


async def sse_events(response: httpx.Response) -> Any:
    """(id, event, data) of each event of a text/event-stream answer."""
    event_id, name, data = "", "message", []
    async for line in response.aiter_lines():
        if not line:
            if data:
                yield event_id, name, json.loads("\n".join(data))
            name, data = "message", []
        elif line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())


def client_for(base_url: str, token: str, connections: int = 2) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    headers = {"Authorization": f"Bearer {token}"}
    # verify=False: plain http on loopback; skips loading the CA bundle for every client
    return httpx.AsyncClient(
        base_url=base_url, headers=headers, timeout=30, limits=limits, verify=False
    )


async def drive(base_url: str, token: str, load: Load, clients: int) -> float:
    """Run the clients until the load stops; answer the wall seconds it took."""
    https = [client_for(base_url, token) for _ in range(clients)]
    started = time.monotonic()
    try:
        await asyncio.gather(*(Client(load, h, n).run() for n, h in enumerate(https)))
    finally:
        for h in https:
            await h.aclose()
    return time.monotonic() - started


# --- reading back what was acknowledged ---------------------------------------------------------


async def verify(base_url: str, token: str, acked: dict[str, list[Any]]) -> dict[str, Any]:
    """Read back every acknowledged write; answer the counts and what is missing or different."""
    missing: list[str] = []
    checked = Counter[str]()
    async with client_for(base_url, token, connections=8) as http:
        gate = asyncio.Semaphore(8)

        async def check(kind: str, item: Any) -> None:
            async with gate:
                problem = await _read_back(http, kind, item)
            checked[kind] += 1
            if problem:
                missing.append(f"{kind}: {problem}")

        await asyncio.gather(
            *(check(kind, item) for kind, items in acked.items() for item in items)
        )
    return {"checked": dict(checked), "missing": missing[:50], "missing_count": len(missing)}


async def _read_back(http: httpx.AsyncClient, kind: str, item: Any) -> str:
    if kind == "thread":
        thread_id, meta = item
        got = await http.get(f"{API}/threads/{thread_id}")
        ok = got.status_code == 200 and got.json().get("metadata") == meta
        return "" if ok else f"{thread_id}: HTTP {got.status_code}"
    if kind == "conversation":
        cid, title = item
        got = await http.get(f"{API}/conversations/{cid}")
        return "" if got.status_code == 200 and got.json().get("title") == title else cid
    if kind == "message":
        cid, mid, content = item
        got = await http.get(f"{API}/conversations/{cid}/messages/{mid}")
        return "" if got.status_code == 200 and got.json().get("content") == content else mid
    if kind == "knowledge base":
        prefix, kb = item
        got = await http.get(f"{prefix}/{kb}")  # the reference's extension route
        return "" if got.status_code == 200 else f"{kb}: HTTP {got.status_code}"
    if kind == "documents":
        prefix, kb, ids = item
        got = await http.get(f"{prefix}/{kb}/status", params={"ids": ",".join(ids)})
        found = {d.get("id") for d in got.json()} if got.status_code == 200 else set()
        return "" if found == set(ids) else f"{kb}: {sorted(set(ids) - found)}"
    if kind == "store item":
        params = {"namespace": ".".join(item["namespace"]), "key": item["key"]}
        got = await http.get(f"{API}/store/items", params=params)
        ok = got.status_code == 200 and got.json().get("value") == item["value"]
        return "" if ok else f"{params}: HTTP {got.status_code}"
    if kind == "run events":
        location, received = item
        replayed = []
        async with http.stream("GET", f"{location}/stream") as response:
            async for event in sse_events(response):
                replayed.append(event)
        return "" if replayed[: len(received)] == received else f"{location}: events differ"
    return f"unknown kind {kind}"


# --- the run --------------------------------------------------------------------------------------


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 2)

    return {
        "count": len(ordered),
        "p50": at(0.50),
        "p95": at(0.95),
        "p99": at(0.99),
        "max": at(1.0),
    }


def run(
    clients: int = 32,
    requests: int = 3000,
    time_limit: float = 60.0,
    crash_after: float | None = None,
    token_delay_ms: int = 2,
    workdir: Path | None = None,
) -> dict[str, Any]:
    """Start the reference, load it, (crash and restart it,) read everything back: the result."""
    workdir = workdir or Path(tempfile.mkdtemp(prefix="assistant-load-"))
    db = workdir / "reference.db"
    token = secrets.token_urlsafe(24)
    server = embedded.start([token], db, token_delay_ms=token_delay_ms)
    restarted = None
    try:
        load = Load(requests, time.monotonic() + time_limit)
        wall, killed_at = _load_phase(server, token, load, clients, crash_after)
        target = server
        if crash_after is not None:
            restarted = target = embedded.start([token], db, token_delay_ms=token_delay_ms)
        read_back = asyncio.run(verify(target.base_url, token, load.acked))
    finally:
        server.stop()
        if restarted is not None:
            restarted.stop()
    every = [x for values in load.latencies.values() for x in values]
    server_errors = sum(n for status, n in load.statuses.items() if status >= 500)
    return {
        "clients": clients,
        "requests": load.sent,
        "answered": sum(load.statuses.values()),
        "seconds": round(wall, 3),
        "requests_per_second": round(sum(load.statuses.values()) / wall, 1) if wall else 0.0,
        "latency_ms": percentiles(every),
        "by_operation": {op: percentiles(v) for op, v in sorted(load.latencies.items())},
        "statuses": {str(k): v for k, v in sorted(load.statuses.items())},
        "server_errors": server_errors,
        "transport_errors": dict(load.transport_errors),
        "acknowledged": {kind: len(items) for kind, items in load.acked.items()},
        "run_events_acknowledged": sum(len(e) for _, e in load.acked.get("run events", [])),
        "runs_cut": sum(1 for _, e in load.acked.get("run events", []) if e[-1][1] != "end"),
        "read_back": read_back,
        "crash": None if crash_after is None else {"killed_after_seconds": killed_at},
        "ok": server_errors == 0 and read_back["missing_count"] == 0,
    }


def _load_phase(
    server: embedded.RunningServer, token: str, load: Load, clients: int, crash_after: float | None
) -> tuple[float, float | None]:
    async def main() -> tuple[float, float | None]:
        killed_at: float | None = None
        task = asyncio.ensure_future(drive(server.base_url, token, load, clients))
        if crash_after is not None:
            started = time.monotonic()
            done, _ = await asyncio.wait({task}, timeout=crash_after)
            if not done:
                os.kill(server.process.pid, signal.SIGKILL)
                server.process.wait()
                killed_at = round(time.monotonic() - started, 3)
                load.stop = True
        return await task, killed_at

    return asyncio.run(main())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--requests", type=int, default=3000, help="stop after this many requests")
    parser.add_argument("--time-limit", type=float, default=60.0, help="stop after these seconds")
    parser.add_argument("--crash-after", type=float, help="SIGKILL the server after these seconds")
    parser.add_argument("--token-delay-ms", type=int, default=2)
    parser.add_argument("--json", type=Path, default=Path("reports/load.json"))
    args = parser.parse_args(argv)
    result = run(
        args.clients, args.requests, args.time_limit, args.crash_after, args.token_delay_ms
    )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(summary(result))
    return 0 if result["ok"] else 1


def summary(result: dict[str, Any]) -> str:
    lat = result["latency_ms"]
    lines = [
        f"{result['clients']} clients, {result['answered']} requests answered in "
        f"{result['seconds']} s: {result['requests_per_second']} requests/s",
        f"latency ms: p50 {lat.get('p50')}, p95 {lat.get('p95')}, p99 {lat.get('p99')}, "
        f"max {lat.get('max')}",
        f"statuses {result['statuses']}; 5xx: {result['server_errors']}; "
        f"transport errors: {result['transport_errors'] or 'none'}",
        f"acknowledged {result['acknowledged']} "
        f"({result['run_events_acknowledged']} run events received, "
        f"{result['runs_cut']} streams cut before their end)",
        f"read back: {result['read_back']['checked']}; "
        f"missing: {result['read_back']['missing_count']}",
    ]
    if result["crash"]:
        killed = result["crash"]["killed_after_seconds"]
        lines.insert(0, f"server killed (SIGKILL) after {killed} s, restarted on its database")
    lines.append(
        "OK" if result["ok"] else "FAILED: " + "; ".join(result["read_back"]["missing"][:5])
    )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
