"""The test proxy: a loopback reverse proxy in front of a server, for self-tests and bench.

It forwards every request to `upstream` and its answer back (a stream chunk by chunk, as it
comes), counts the requests, and lets a test change what passes: `rewrite(method, path, headers)`
gives the headers sent on (e.g. a credential put in for operations that "skip auth"). One
upstream connection per client connection, kept alive while both ends keep theirs.

It is the plain thing a test needs in front of a server, nothing judged or recorded: the product's
proxy (`assistant-conformance proxy`, audit/proxy.py) records and judges every exchange, which a
test of the suite would pay for and not use. A proxy that breaks the connection itself (resets,
no HTTP) is a socket-level double: safety_support.dropping_proxy.

    with ReverseProxy(upstream_url) as proxy:
        ... proxy.url ... proxy.take()  # requests seen since the last take
"""

from __future__ import annotations

import http.client
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
    }
)
Rewrite = Callable[[str, str, dict[str, str]], dict[str, str]]


def unchanged(method: str, path: str, headers: dict[str, str]) -> dict[str, str]:
    return headers


class ReverseProxy:
    """Started on construction (a thread serving a free loopback port); `stop` ends it."""

    def __init__(self, upstream: str, rewrite: Rewrite = unchanged) -> None:
        parts = urlsplit(upstream)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.rewrite = rewrite
        self.count = 0
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def take(self) -> int:
        """The requests forwarded since the last take."""
        with self.lock:
            count, self.count = self.count, 0
        return count

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> ReverseProxy:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()


def _handler(proxy: ReverseProxy) -> type[BaseHTTPRequestHandler]:
    class Forward(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        upstream: http.client.HTTPConnection | None = None  # one per client connection

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def forward(self) -> None:
            with proxy.lock:
                proxy.count += 1
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            headers = proxy.rewrite(self.command, self.path.split("?", 1)[0], headers)
            for attempt in (1, 2):  # a kept upstream connection may have been closed: once more
                if self.upstream is None:
                    self.upstream = http.client.HTTPConnection(proxy.host, proxy.port, timeout=60)
                try:
                    self.upstream.request(self.command, self.path, body=body, headers=headers)
                    answer = self.upstream.getresponse()
                    break
                except (OSError, http.client.HTTPException):
                    self.drop_upstream()
                    if attempt == 2:
                        self.close_connection = True
                        return
            try:
                self.relay(answer)
                if answer.will_close:
                    self.drop_upstream()
            except (OSError, http.client.HTTPException):  # the client went away mid-answer
                self.drop_upstream()
                self.close_connection = True

        def drop_upstream(self) -> None:
            if self.upstream is not None:
                self.upstream.close()
                self.upstream = None

        def finish(self) -> None:
            self.drop_upstream()
            super().finish()

        def relay(self, answer: http.client.HTTPResponse) -> None:
            self.send_response_only(answer.status, answer.reason)
            length = answer.getheader("Content-Length")
            for name, value in answer.getheaders():
                if name.lower() not in HOP_BY_HOP:
                    self.send_header(name, value)
            bodiless = self.command == "HEAD" or answer.status in (204, 304)
            if length is not None or bodiless:
                self.end_headers()
                content = answer.read()  # read even when empty: the connection is reused
                if not bodiless:
                    self.wfile.write(content)
                return
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            while chunk := answer.read1(65536):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = forward
        do_TRACE = do_CONNECT = forward

    return Forward
