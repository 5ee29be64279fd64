"""Helpers of the safety self-tests: run the suite in a subprocess (proof/suiterun.py's
`run_suite`, from this checkout), serve the reference app (or a misbehaving variant of it) in a
thread on loopback, and raw sockets that misbehave."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
import sqlite3
import struct
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send

from assistant_conformance.proof import suiterun
from assistant_conformance.proof.mutants.hostile import endless_events
from assistant_conformance.proof.suiterun import SuiteOptions, SuiteResult
from assistant_conformance.reference.app import create_app
from assistant_conformance.reference.connectors import Endpoint
from assistant_conformance.reference.context import Settings

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "tok-Leak-Main-3b9f1c7e5a2d"
ALT_TOKEN = "tok-Leak-Alt-8e4a6d2c9f1b"


Done = SuiteResult  # what a self-test's suite run gives


def run_suite(
    report_dir: Path,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 300,
    cwd: Path = ROOT,
    target: Endpoint | None = None,
) -> SuiteResult:
    """`pytest <args>` from the project root (its conftest loads the plugin), bounded, against
    `target` where given (else as `args` say); its stdout and stderr apart. Past `timeout`:
    subprocess.TimeoutExpired, with what it said."""
    options = SuiteOptions(
        report_dir, args, errors_apart=True, timeout=timeout, env=env or {}, checkout=cwd
    )
    done = suiterun.run_suite(target, options)
    if done.returncode is None:
        raise subprocess.TimeoutExpired(["pytest", *args], timeout, done.stdout, done.stderr)
    return done


def reference_app(workdir: Path, tokens: tuple[str, ...] = (TOKEN, ALT_TOKEN)) -> ASGIApp:
    settings = Settings(
        tokens={t: f"principal-{i}" for i, t in enumerate(tokens)},
        db_path=workdir / "reference.db",
        files_dir=workdir / "files",
        token_delay_ms=2,
    )
    return create_app(settings)


@contextmanager
def serve(app: ASGIApp, tls: tuple[str, str] | None = None) -> Iterator[str]:
    """Serve an ASGI app with uvicorn in a thread on a free loopback port; answer its base URL.
    `tls`: (certificate file, key file) to serve HTTPS."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    certfile, keyfile = tls or (None, None)
    config = uvicorn.Config(
        app, log_level="critical", access_log=False, timeout_graceful_shutdown=1,
        ssl_certfile=certfile, ssl_keyfile=keyfile,
    )  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "server did not start"
        time.sleep(0.02)
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def _accepting(
    listener: socket.socket, on_accept: Callable[[socket.socket], None]
) -> tuple[threading.Event, threading.Thread]:
    """A thread handing each connection `listener` accepts to `on_accept`, until the event is set
    (the listener's timeout lets it look)."""
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            on_accept(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    return stop, thread


@contextmanager
def raw_server(answer: bytes | None, accepted: list[int] | None = None) -> Iterator[int]:
    """A TCP server on loopback: accepts and sends `answer` (None: never anything); its port.
    `accepted`: a list it appends 1 to per connection accepted (how often a client tried)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    held: list[socket.socket] = []

    def keep(conn: socket.socket) -> None:
        held.append(conn)
        if accepted is not None:
            accepted.append(1)
        if answer is not None:
            conn.sendall(answer)

    stop, thread = _accepting(listener, keep)
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(timeout=2)
        for conn in held:
            conn.close()
        listener.close()


@contextmanager
def dropping_proxy(upstream: str, every: int = 10) -> Iterator[str]:
    """A TCP proxy on loopback in front of `upstream` (a base URL) that resets every `every`th
    connection as its first request arrives, unanswered (what a keep-alive race looks like to a
    client); the rest are passed through both ways. Answers the proxy's base URL."""
    host, port = upstream.removeprefix("http://").split(":")
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    count = iter(range(1, 1 << 30))

    def pipe(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def handle(client: socket.socket) -> None:
        if next(count) % every == 0:
            client.recv(65536)
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            client.close()  # a reset, no answer
            return
        with client, socket.create_connection((host, int(port))) as server:
            for end in (client, server):  # no Nagle stalls: each answer passes as it comes
                end.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            back = threading.Thread(target=pipe, args=(server, client), daemon=True)
            back.start()
            pipe(client, server)
            back.join()

    def in_thread(client: socket.socket) -> None:
        threading.Thread(target=handle, args=(client,), daemon=True).start()

    stop, thread = _accepting(listener, in_thread)
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(timeout=2)
        listener.close()


class Misbehave:
    """Around the reference app: requests whose "METHOD /path" matches `hang` never get an answer;
    `endless` ones get an event stream that never ends; `running` (a KB status query) always
    answers every document still running; `echo_auth` reflects the credential in every answer
    (and answers 200 instead of 201 to `status_200`). Hostile answers are mutants
    (proof/mutants/hostile.py)."""

    def __init__(
        self,
        app: ASGIApp,
        hang: str = "$^",
        endless: str = "$^",
        running: str = "$^",
        echo_auth: bool = False,
        status_200: str = "$^",
    ) -> None:
        self.app = app
        patterns = (hang, endless, running, status_200)
        self.hang, self.endless, self.running, self.status_200 = map(re.compile, patterns)
        self.echo_auth = echo_auth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        key = f"{scope['method']} {scope['path']}"
        try:
            if self.hang.fullmatch(key):
                await asyncio.sleep(3600)
            elif self.endless.fullmatch(key):
                await endless_events(send, pause=0.1)
            else:
                await self._other(key, scope, receive, send)
        except asyncio.CancelledError:  # the server stops: nothing to say
            return

    async def _other(self, key: str, scope: Scope, receive: Receive, send: Send) -> None:
        if self.running.fullmatch(key):
            await _still_running(scope, send)
        elif self.echo_auth:
            await self.app(
                scope, receive, _echoing(scope, send, bool(self.status_200.fullmatch(key)))
            )
        else:
            await self.app(scope, receive, send)


async def _still_running(scope: Scope, send: Send) -> None:
    ids = parse_qs(scope.get("query_string", b"").decode()).get("ids", [""])[0]
    body = [
        {"id": i, "status": "running", "progress": 50, "processMsg": None} for i in ids.split(",")
    ]
    content = json.dumps([d for d in body if d["id"]]).encode()
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": content})


def _echoing(scope: Scope, send: Send, as_200: bool) -> Send:
    """Reflect the request's Authorization header in a response header and in JSON bodies."""
    credential = dict(scope["headers"]).get(b"authorization", b"")

    async def echo(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            headers = [(k, v) for k, v in message["headers"] if k != b"content-length"]
            message = {**message, "headers": [*headers, (b"x-echo-authorization", credential)]}
            if as_200 and message["status"] == 201:
                message["status"] = 200
        elif message["type"] == "http.response.body" and message.get("body", b"").startswith(b"{"):
            body = message["body"]
            message = {**message, "body": body[:-1] + b', "seen": "' + credential + b'"}'}
        await send(message)

    return echo


def table_counts(db: Path) -> dict[str, int]:
    """Rows per resource kind, and log entries, of a reference database (read-only)."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        kinds = conn.execute("SELECT kind, count(*) FROM resources GROUP BY kind").fetchall()
        logs = conn.execute("SELECT count(*) FROM logs").fetchone()[0]
    return {**dict(kinds), "logs": logs}


def dump(db: Path) -> list[tuple[Any, ...]]:
    """Every row of every table of a reference database, sorted: equal dumps, equal data."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        rows = [(t, *row) for t in tables for row in conn.execute(f"SELECT * FROM {t}")]
    return sorted(rows, key=repr)
