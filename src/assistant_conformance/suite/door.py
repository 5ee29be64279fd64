"""The bounds every answer that is not a stream is read under (the scenario layer's door is
guard.GuardedTransport; the property layer's, property/runner.Runner.send).

- a deadline on the whole answer, from sending to its last byte (--request-timeout), not on each
  read: an answer that drips one byte at a time costs one timeout, not forever;
- a cap on its size (--max-response-size): the reading stops there, so memory stays bounded;
- a complete message (RFC 9112 §8): a connection closed before the body's announced end, broken
  chunking or a reset is an incomplete answer, not a response.

Each fault is an AnswerFault, which the plugin turns into one finding against the operation and a
"not judged" for the rest of the test. The operation's success status is a MUST only for requests
that follow the document: a fault in answer to input sent to break it (inside `breaking_input`)
is charged to the requirement judged of such input instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import httpx
import requests
import urllib3
from requests.adapters import HTTPAdapter

from assistant_conformance.suite import strictjson, transport
from assistant_conformance.suite.exchange import Exchange
from assistant_conformance.suite.openapi import operation_label

SLOW, LARGE, CUT, SILENT = "slow", "large", "cut", "silent"
EXPECTED = {
    LARGE: "an answer the suite can read whole",
    SLOW: "a whole answer within --request-timeout",
    SILENT: "an answer within --request-timeout",
    CUT: "a complete answer (RFC 9112 §8)",
}


def requirement_for(status_requirement: str | None) -> str:
    """The requirement a fault is charged to: the operation's STATUS requirement (MUST). No
    answer, a late one, an incomplete one (RFC 9112 §8: no response) or one past the cap: no
    answer of the document's was received within the bounds the run was given. The bounds are
    the suite's, so each fault's line names its option (raise it where an answer is meant to be
    that slow or that large). Outside the contract's operations: ROBUST-RESPONSE-SHAPE."""
    return status_requirement or strictjson.REQUIREMENT


class AnswerFault(Exception):
    """The target's answer broke a bound of the door; `what` is one readable line."""

    def __init__(self, kind: str, what: str, evidence: Exchange) -> None:
        super().__init__(what)
        self.kind = kind
        self.what = what
        self.evidence = evidence
        self.charged_to: str | None = None  # set by breaking_input


@contextmanager
def breaking_input(requirement: str) -> Iterator[None]:
    """Input that breaks the document is being sent: a fault of its answer goes to `requirement`."""
    try:
        yield
    except AnswerFault as fault:
        fault.charged_to = fault.charged_to or requirement
        raise


def evidence(
    request: httpx.Request, status: int | None, headers: dict[str, str], note: str
) -> Exchange:
    """What was sent and the little that came back, for the report and the curl line."""
    try:
        body: bytes | None = request.content
    except httpx.RequestNotRead:
        body = None
    return Exchange(request.method, str(request.url), dict(request.headers), body, status,
                    headers, note)  # fmt: skip


def read_bounded(
    chunks: Iterable[bytes],
    evidence_of: Callable[[str], Exchange],
    *,
    label: str,
    started: float,
    deadline: float,
    cap: int,
) -> bytes:
    """The whole body, within `deadline` seconds of `started` and at most `cap` bytes; `label`
    names the operation in a fault's line, `evidence_of(note)` what was sent."""
    received: list[bytes] = []
    size = 0

    def fault(kind: str, what: str) -> AnswerFault:
        note = f"({size} bytes received: {what})"
        return AnswerFault(kind, f"{label}: {what}", evidence_of(note))

    try:
        for chunk in chunks:
            size += len(chunk)
            if size > cap:
                raise fault(LARGE, f"answer larger than {cap} bytes (--max-response-size)")
            if time.monotonic() - started > deadline:
                raise fault(SLOW, f"answer not complete within {deadline:g} s (--request-timeout)")
            received.append(chunk)
    except httpx.TimeoutException:
        raise fault(SLOW, f"answer stalled: no byte within {deadline:g} s") from None
    except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
        reason = str(exc) or type(exc).__name__
        raise fault(CUT, f"incomplete answer (RFC 9112 §8): {reason}") from None
    return b"".join(received)


class CappedStream(httpx.SyncByteStream):
    """An event stream's body, passed to its reader as it arrives (the reader keeps its own
    deadline) but only up to `cap` bytes: past it, a LARGE fault, so memory stays bounded."""

    def __init__(
        self,
        inner: httpx.SyncByteStream,
        cap: int,
        label: str,
        evidence_of: Callable[[str], Exchange],
    ) -> None:
        self.inner, self.cap, self.label, self.evidence_of = inner, cap, label, evidence_of

    def __iter__(self) -> Iterator[bytes]:
        size = 0
        for chunk in self.inner:
            size += len(chunk)
            if size > self.cap:
                what = f"stream larger than {self.cap} bytes (--max-response-size)"
                raise AnswerFault(LARGE, f"{self.label}: {what}", self.evidence_of(f"({what})"))
            yield chunk

    def close(self) -> None:
        self.inner.close()


def _urllib3_chunks(raw: urllib3.BaseHTTPResponse) -> Iterator[bytes]:
    """urllib3's body chunks, its read faults spelled as httpx's (one reader for both stacks)."""
    try:
        while chunk := raw.read1(65536, decode_content=True):  # as bytes arrive, not 64 KiB
            yield chunk
    except urllib3.exceptions.ReadTimeoutError as exc:
        raise httpx.ReadTimeout(str(exc)) from None
    except (urllib3.exceptions.ProtocolError, urllib3.exceptions.DecodeError) as exc:
        raise httpx.RemoteProtocolError(str(exc)) from None


class BoundedAdapter(HTTPAdapter):
    """The property layer's door: requests' adapter reading every answer that is not an event
    stream under the same bounds as the scenario layer's."""

    def __init__(self, deadline: float, cap: int, policy: transport.Policy) -> None:
        super().__init__()
        self.deadline, self.cap, self.policy = deadline, cap, policy

    def send(  # type: ignore[override]
        self, request: requests.PreparedRequest, stream: bool = False, **kwargs: object
    ) -> requests.Response:
        started = time.monotonic()
        kwargs["verify"] = self.policy.requests_verify

        def attempt() -> requests.Response:
            nonlocal started
            self.policy.prepare(request.headers)
            started = time.monotonic()
            return super(BoundedAdapter, self).send(request, stream=True, **kwargs)  # type: ignore[arg-type]

        label = f"{request.method} {urlsplit(str(request.url)).path}"
        response: requests.Response = self.policy.send(
            label, attempt, lambda r: (r.status_code, r.headers)
        )
        # schemathesis asks every answer as a stream and then reads it whole: only an event
        # stream (read under its own bound) is left to the caller.
        if "text/event-stream" in response.headers.get("content-type", ""):
            return response

        def evidence_of(note: str) -> Exchange:
            body = request.body.encode() if isinstance(request.body, str) else request.body
            sent = {k: str(v) for k, v in request.headers.items()}
            return Exchange(str(request.method), str(request.url), sent,
                            body if isinstance(body, bytes) else None, response.status_code,
                            dict(response.headers), note)  # fmt: skip

        label = operation_label(str(request.method), urlsplit(str(request.url)).path)
        try:
            response._content = read_bounded(
                _urllib3_chunks(response.raw), evidence_of, label=label,
                started=started, deadline=self.deadline, cap=self.cap,
            )  # fmt: skip
        finally:
            response.close()
        return response
