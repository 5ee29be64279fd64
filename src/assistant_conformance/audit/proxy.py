"""The live proxy: a reverse proxy (an ASGI app, served by uvicorn on loopback) that passes every
exchange to the upstream and back unchanged (method, path, query, headers but the hop-by-hop
ones, body; the answer's status, headers and bytes as they come, a stream chunk by chunk, each
sent on as it arrives), records it (audit/recorder.py), judges it as `audit` does once it ends
(audit/rules.py: with what came before it) and prints each finding not held as it is seen.
`finish` writes the recording as HAR (recorded.har, redacted) and the reports.

Its bounds: nothing is buffered beyond one chunk (a flood passes at the pace of its reader), the
recording is capped (recorder.py), an exchange lasts at most its deadline (then both sides are
cut), and past MAX_EXCHANGES exchanges are passed on but no longer recorded (counted).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from assistant_conformance.audit import outcome
from assistant_conformance.audit.capture import (
    BEARER_CREDENTIAL,
    NO_CREDENTIAL,
    Capture,
    credential_of,
)
from assistant_conformance.audit.judge import finding_line
from assistant_conformance.audit.recorder import (
    CLIENT_GONE,
    DEADLINE,
    UPSTREAM_DROPPED,
    Budget,
    Recording,
)
from assistant_conformance.audit.rules import Judging
from assistant_conformance.report import redact
from assistant_conformance.report.model import PASS, Run
from assistant_conformance.suite.evidence import har
from assistant_conformance.suite.http import trail

HAR_FILE = "recorded.har"
BUDGET = 256 * 1024 * 1024  # bytes of bodies a session keeps, all together
MAX_EXCHANGES = 100_000
DEFAULT_DEADLINE = 300.0  # seconds an exchange may last, a stream included
HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
     "transfer-encoding", "upgrade", "host"}
)  # fmt: skip


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
    ) -> None:
        self.upstream = httpx.URL(upstream.rstrip("/"))
        self.mount = self.upstream.path.rstrip("/").encode()  # the upstream's own path prefix
        self.report_dir, self.deadline, self.say = report_dir, deadline, say
        self.budget = Budget(budget)
        self.judging = Judging(Capture(str(report_dir / HAR_FILE)))
        self.principals: list[str] = []  # each recorded exchange's credential, by label
        self.sizes: list[int] = []  # each recorded answer's whole size
        self.labels: dict[str, str] = {}
        self.unrecorded = 0
        self.started = time.monotonic()
        self.client: httpx.AsyncClient | None = None
        self.secrets = secrets or redact.Secrets()  # the tokens it sees, masked in all it writes

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            if self.client is not None:
                await self.client.aclose()
            await send({"type": "lifespan.shutdown.complete"})
        elif scope["type"] == "http":
            await self.exchange(scope, receive, send)

    # --- one exchange ---------------------------------------------------------------------------

    async def exchange(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        with redact.scope(self.secrets):
            await self._exchange(scope, receive, send)

    async def _exchange(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if self.client is None:  # made in the server's loop
            timeout = httpx.Timeout(self.deadline, connect=min(self.deadline, 10.0))
            self.client = httpx.AsyncClient(timeout=timeout, follow_redirects=False)
        query = scope.get("query_string", b"").decode("latin-1")
        path = scope.get("raw_path") or scope["path"].encode()
        url = self.upstream.copy_with(raw_path=self.mount + path)
        url = url.copy_with(query=query.encode("latin-1")) if query else url
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        sent = [(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP]
        entry = trail.Entry(scope["method"], str(url), dict(headers), None)
        recording = Recording(entry, self.budget)
        try:
            await asyncio.wait_for(self._pass(recording, sent, receive, send), self.deadline)
        except TimeoutError:
            if recording.entry.status is None:  # nothing passed on yet: say why there is none
                await self._no_answer(recording, httpx.TimeoutException(DEADLINE), send)
                return
            self._done(recording, False, DEADLINE)
            raise _Cut(DEADLINE) from None
        except _Cut as cut:
            self._done(recording, False, str(cut))
            if str(cut) != CLIENT_GONE:
                raise  # the client sees the cut the upstream made

    async def _pass(self, recording: Recording, headers: list[tuple[str, str]], receive: Any,
                    send: Any) -> None:  # fmt: skip
        entry = recording.entry
        first = await receive()
        if first.get("more_body"):
            content: Any = self._body(first, receive, recording)
        else:
            content = first.get("body", b"")
            recording.request_chunk(content)
        assert self.client is not None
        request = self.client.build_request(entry.method, entry.url, headers=headers,
                                            content=content)  # fmt: skip
        try:
            response = await self.client.send(request, stream=True)
        except httpx.HTTPError as exc:
            await self._no_answer(recording, exc, send)
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
        raw = [(k, v) for k, v in response.headers.raw
               if k.decode("latin-1").lower() not in HOP_BY_HOP]  # fmt: skip
        recording.response_start(response.status_code, dict(response.headers))
        await send({"type": "http.response.start", "status": response.status_code,
                    "headers": raw})  # fmt: skip
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
        self._done(recording, cut in (None, UPSTREAM_DROPPED), cut)
        if cut == UPSTREAM_DROPPED:
            raise _Cut(cut)

    async def _no_answer(self, recording: Recording, exc: httpx.HTTPError, send: Any) -> None:
        """No answer from the upstream: the client gets 502 (504: none in time), said here."""
        status = 504 if isinstance(exc, httpx.TimeoutException) else 502
        recording.entry.fault = "silent" if status == 504 else "cut"
        self._done(recording, False, None)
        text = f"proxy: no answer from {self.upstream}: {type(exc).__name__}\n".encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8")]})  # fmt: skip
        await send({"type": "http.response.body", "body": text, "more_body": False})
        self.say(redact.text(f"no answer: {recording.entry.method} {recording.entry.url}: {exc}"))

    # --- judging and the end ------------------------------------------------------------------

    def _done(self, recording: Recording, closed_by_upstream: bool, cut: str | None) -> None:
        """The exchange is over (once): recorded, then judged with what came before it."""
        if recording.done:
            return
        recording.finish(closed_by_upstream, cut)
        capture = self.judging.capture
        if len(capture.entries) >= MAX_EXCHANGES:
            self.unrecorded += 1
            return
        entry = recording.entry
        if recording.entry.status is None:
            entry.fault = entry.fault or "cut"
        credential = credential_of(entry.request_headers)
        capture.add(entry, credential, recording.whole)
        self.principals.append(self._label(credential.kind, credential.identity))
        self.sizes.append(recording.response_size)
        try:
            found = self.judging.next()
        except Exception as exc:  # the traffic passes whatever its judging does
            self.say(redact.text(f"not judged: {entry.method} {entry.url}: {exc!r}"))
            return
        for finding in found:
            if finding.verdict != PASS:
                self.say(redact.text(finding_line(finding)))

    def _label(self, kind: str, identity: str | None) -> str:
        if kind != BEARER_CREDENTIAL or identity is None:
            return NO_CREDENTIAL if kind == NO_CREDENTIAL else "invalid"
        return self.labels.setdefault(identity, f"credential-{len(self.labels) + 1}")

    def finish(self) -> Run:
        """Write the recording (HAR, redacted) and the reports; the session's verdicts."""
        with redact.scope(self.secrets):
            return self._finish()

    def _finish(self) -> Run:
        self.report_dir.mkdir(parents=True, exist_ok=True)
        capture = self.judging.capture
        document = har.log_of(capture.entries)
        for raw, label, whole, size in zip(document["log"]["entries"], self.principals,
                                           capture.whole, self.sizes, strict=True):  # fmt: skip
            raw["_principal"] = label
            if not whole:  # its size is the whole answer's, as sent
                raw["_truncated"] = True
                raw["response"]["content"]["size"] = size
        text = redact.text(json.dumps(document, indent=1, ensure_ascii=False))
        Path(capture.name).write_text(text + "\n", encoding="utf-8")
        run = outcome.run_of_findings([self.judging], invocation="assistant-conformance proxy",
                             report_dir=self.report_dir, started=self.started,
                             deadline=self.deadline)  # fmt: skip
        run.info["audit"]["unrecorded"] = self.unrecorded
        outcome.write_reports(run, self.report_dir)
        return run


async def _disconnected(receive: Any) -> None:
    """Returns once the client has gone (the request's body was read before)."""
    while (await receive())["type"] != "http.disconnect":
        pass
