"""The live proxy: a reverse proxy (an ASGI app, served by uvicorn on loopback) that passes every
exchange to the upstream and back unchanged (method, path, query, headers as their bytes came but
the hop-by-hop ones, body; the answer's status, headers and bytes as they come, a stream chunk by
chunk, each sent on as it arrives), records it (audit/recorder.py) and hands it, once over, to
its session (audit/session.py), which judges it off this loop as `audit` does.

A header value's leading and trailing whitespace is not passed on: HTTP says it is no part of the
value (RFC 9110 §5.5), and the upstream would drop it (`Bearer ` reaches it as `Bearer`); the
recording keeps the value as it came. What the proxy cannot pass on (a header value its HTTP
client refuses), or gets no answer to, it answers itself, saying so: 502 (504: no answer in time)
with a JSON body naming the proxy and a `Proxy-Status` header (RFC 9209); the recording keeps the
request, without an answer, and the proxy's (`_proxy`).

Its bounds: nothing is buffered beyond one chunk (a flood passes at the pace of its reader), the
recording is capped (recorder.py, session.py), and an exchange lasts at most its deadline (then
both sides are cut).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from assistant_conformance.audit.capture import credential_of
from assistant_conformance.audit.recorder import (
    CLIENT_GONE,
    DEADLINE,
    UPSTREAM_DROPPED,
    Budget,
    Recording,
)
from assistant_conformance.audit.session import Session
from assistant_conformance.report import redact
from assistant_conformance.report.model import Run
from assistant_conformance.suite.evidence import har
from assistant_conformance.suite.http import trail

BUDGET = 256 * 1024 * 1024  # bytes of bodies a session keeps, all together
DEFAULT_DEADLINE = 300.0  # seconds an exchange may last, a stream included
NAME = "assistant-conformance-proxy"  # how its own answers name it
HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
        b"host",
    }
)
OWS = b" \t"


class _Cut(Exception):
    """The answer could not be passed on whole: the client's connection is closed as it was."""


class Proxy:
    def __init__(
        self,
        upstream: str,
        report_dir: Path,
        deadline: float = DEFAULT_DEADLINE,
        budget: int = BUDGET,
        say: Callable[[str], None] = print,
        secrets: redact.Secrets | None = None,
        base_path: str | None = None,
    ) -> None:
        self.upstream = httpx.URL(upstream.rstrip("/"))
        self.mount = self.upstream.path.rstrip("/").encode()  # the upstream's own path prefix
        self.deadline, self.say = deadline, say
        self.budget = Budget(budget)
        self.client: httpx.AsyncClient | None = None
        self.secrets = secrets or redact.Secrets()  # the tokens it sees, masked in all it writes
        self.session = Session(report_dir, base_path, say, self.secrets)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            if self.client is not None:
                await self.client.aclose()
            await send({"type": "lifespan.shutdown.complete"})
        elif scope["type"] == "http":
            with redact.scope(self.secrets):
                await self._exchange(scope, receive, send)

    # --- one exchange ---------------------------------------------------------------------------

    async def _exchange(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if self.client is None:  # made in the server's loop
            timeout = httpx.Timeout(self.deadline, connect=min(self.deadline, 10.0))
            self.client = httpx.AsyncClient(timeout=timeout, follow_redirects=False)
        query = scope.get("query_string", b"")
        path = scope.get("raw_path") or scope["path"].encode()
        url = self.upstream.copy_with(raw_path=self.mount + path + (b"?" + query if query else b""))
        received = scope["headers"]
        sent = [(k, v.strip(OWS)) for k, v in received if k.lower() not in HOP_BY_HOP]
        entry = trail.Entry(
            scope["method"], str(url), {_text(k): _text(v) for k, v in received}, None
        )
        recording = Recording(entry, self.budget)
        self.session.begin(recording)
        try:
            await asyncio.wait_for(self._pass(recording, sent, receive, send), self.deadline)
        except TimeoutError:
            if recording.entry.status is None:  # nothing passed on yet: say why there is none
                await self._own_answer(recording, httpx.TimeoutException(DEADLINE), send)
                return
            self._done(recording, False, DEADLINE)
            raise _Cut(DEADLINE) from None
        except _Cut as cut:
            self._done(recording, False, str(cut))
            if str(cut) != CLIENT_GONE:
                raise  # the client sees the cut the upstream made
        except Exception as exc:  # the proxy's own failure: said, recorded, never a silent 500
            if recording.entry.status is not None:
                self._done(recording, False, f"the proxy failed: {type(exc).__name__}")
                raise
            await self._own_answer(recording, exc, send)

    async def _pass(
        self, recording: Recording, headers: list[tuple[bytes, bytes]], receive: Any, send: Any
    ) -> None:
        entry = recording.entry
        first = await receive()
        if first.get("more_body"):
            content: Any = self._body(first, receive, recording)
        else:
            content = first.get("body", b"")
            recording.request_chunk(content)
        assert self.client is not None
        try:
            request = self.client.build_request(
                entry.method, entry.url, headers=headers, content=content
            )
            response = await self.client.send(request, stream=True)
        except (httpx.HTTPError, ValueError) as exc:  # not sent, or no answer came
            await self._own_answer(recording, exc, send)
            return
        try:
            await self._answer(recording, response, receive, send)
        finally:
            await response.aclose()

    async def _body(self, first: dict[str, Any], receive: Any, recording: Recording) -> Any:
        message = first
        while True:
            chunk = message.get("body", b"")
            recording.request_chunk(chunk)
            if chunk:
                yield chunk
            if not message.get("more_body"):
                return
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Cut(CLIENT_GONE)

    async def _answer(
        self, recording: Recording, response: httpx.Response, receive: Any, send: Any
    ) -> None:
        raw = [(k, v) for k, v in response.headers.raw if k.lower() not in HOP_BY_HOP]
        recording.response_start(response.status_code, dict(response.headers))
        await send({"type": "http.response.start", "status": response.status_code, "headers": raw})
        gone = asyncio.ensure_future(_disconnected(receive))
        chunks = response.aiter_raw().__aiter__()
        cut: str | None = None
        step: asyncio.Future[bytes] | None = None
        try:
            while True:
                step = asyncio.ensure_future(chunks.__anext__())
                await asyncio.wait({step, gone}, return_when=asyncio.FIRST_COMPLETED)
                if not step.done():
                    step.cancel()
                    cut = CLIENT_GONE
                    break
                try:
                    chunk = step.result()
                except StopAsyncIteration:
                    break
                except httpx.HTTPError:
                    cut = UPSTREAM_DROPPED
                    break
                recording.response_chunk(chunk)
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        finally:
            for waiting in (gone, step):
                if waiting is not None and not waiting.done():
                    waiting.cancel()
        if cut is None:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        self._done(recording, cut is None, cut)  # a drop mid-body is no end the server made
        if cut == UPSTREAM_DROPPED:
            raise _Cut(cut)

    async def _own_answer(self, recording: Recording, exc: BaseException, send: Any) -> None:
        """The proxy answers itself, and says so (RFC 9209 Proxy-Status): 502 for a request it
        could not pass on or got no answer to, 504 for none in time."""
        status, error = _proxy_status(exc)
        details = redact.text(f"{type(exc).__name__}: {exc}")[:300]
        recording.own_answer = har.ProxyAnswer(status, error, details)
        recording.entry.fault = "silent" if status == 504 else "cut"
        self._done(recording, False, None)
        body = {
            "proxy": NAME,
            "error": error,
            "details": details,
            "upstream": redact.text(str(self.upstream)),
        }
        said = f"{NAME}; error={error}; details={json.dumps(details, ensure_ascii=True)}"
        headers = [(b"content-type", b"application/json"), (b"proxy-status", said.encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send(
            {
                "type": "http.response.body",
                "body": json.dumps(body).encode() + b"\n",
                "more_body": False,
            }
        )
        entry = recording.entry
        self.say(
            redact.text(f"proxy answered {status} ({error}): {entry.method} {entry.url}: {details}")
        )

    def _done(self, recording: Recording, closed_by_upstream: bool, cut: str | None) -> None:
        """The exchange is over (once): to the session, which records and judges it."""
        if recording.done:
            return
        recording.finish(closed_by_upstream, cut)
        if recording.entry.status is None:
            recording.entry.fault = recording.entry.fault or "cut"
        recording.credential = credential_of(recording.entry.request_headers)
        self.session.hand_over(recording)

    def finish(self) -> Run:
        """Write the recording (HAR, redacted) and the reports; the session's verdicts."""
        return self.session.finish(self.deadline)


def _proxy_status(exc: BaseException) -> tuple[int, str]:
    """The status of the proxy's own answer and its Proxy-Status error type (RFC 9209 §2.3)."""
    if isinstance(exc, httpx.TimeoutException):
        if isinstance(exc, httpx.ConnectTimeout):
            return 504, "connection_timeout"
        return 504, "http_response_timeout"
    if isinstance(exc, httpx.ConnectError):
        return 502, "destination_unavailable"
    if isinstance(exc, httpx.LocalProtocolError | httpx.UnsupportedProtocol | ValueError):
        return 502, "http_request_error"  # the proxy's client would not send it as it came
    if isinstance(exc, httpx.HTTPError):
        return 502, "http_response_incomplete"
    return 502, "proxy_internal_error"


def _text(value: bytes) -> str:
    """A header's bytes as the recording keeps them: UTF-8 where they are, else Latin-1."""
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return value.decode("latin-1")


async def _disconnected(receive: Any) -> None:
    """Returns once the client has gone (the request's body was read before)."""
    while (await receive())["type"] != "http.disconnect":
        pass
