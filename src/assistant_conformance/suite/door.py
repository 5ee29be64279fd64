"""The bounds every answer the suite receives is read under, whichever client sent the request
(the transport policy puts this door in every client it makes: suite/transport.py):

- a deadline on the whole answer, from sending to its last byte (--request-timeout), not on each
  read: an answer that drips one byte at a time costs one timeout, not forever;
- a cap on its size (--max-response-size): the reading stops there, so memory stays bounded; an
  event stream is passed on as it arrives (its reader keeps its own deadline), capped the same;
- a complete message (RFC 9112 §8): a connection closed before the body's announced end, broken
  chunking or a reset is an incomplete answer, not a response.

A broken bound raises an AnswerFault (suite/observe.py); a JSON body that is not strict JSON
(RFC 8259) is recorded as an observation. Judging either is suite/charges.py's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import httpx
import requests
import urllib3

from assistant_conformance.suite import observe, strictjson
from assistant_conformance.suite.exchange import Exchange
from assistant_conformance.suite.observe import CUT, LARGE, SILENT, SLOW, AnswerFault
from assistant_conformance.suite.openapi import operation_label

SENT_AT = "conformance_sent_at"  # request extension: when its last attempt went out (monotonic)
JSON_VALUE = (
    "conformance_json"  # response extension: its JSON, read once (lenient where not strict)
)
DROPPED = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)


def label_of(request: httpx.Request) -> str:
    return operation_label(request.method, request.url.path)


def evidence(request: httpx.Request, status: int | None, headers: dict[str, str]) -> Exchange:
    """What was sent and the little that came back, for the report and the curl line."""
    try:
        body: bytes | None = request.content
    except httpx.RequestNotRead:
        body = None
    return Exchange(request.method, str(request.url), dict(request.headers), body, status,
                    headers, "")  # fmt: skip


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


def json_of_body(
    content: bytes, content_type: str, label: str, status: int, exchange: Callable[[], Exchange]
) -> Any:
    """A JSON body's value (None when it is not JSON); one that Python reads but RFC 8259 does not
    (NaN, Infinity, another charset) is read leniently and recorded as an observation."""
    if not strictjson.is_json(content_type):
        return None
    value, wrong = strictjson.read(content)
    if wrong is None:
        return value
    what = f"{label}: HTTP {status}; {wrong}"
    observe.seen(observe.Observation(observe.NOT_STRICT_JSON, what, exchange(), key=wrong))
    return strictjson.lenient(content)


class CappedStream(httpx.SyncByteStream):
    """An event stream's body, passed to its reader as it arrives but only up to `cap` bytes:
    past it, a LARGE fault, so memory stays bounded."""

    def __init__(
        self, inner: httpx.SyncByteStream, cap: int, label: str, evidence_of: Callable[[], Exchange]
    ) -> None:
        self.inner, self.cap, self.label, self.evidence_of = inner, cap, label, evidence_of

    def __iter__(self) -> Iterator[bytes]:
        size = 0
        for chunk in self.inner:
            size += len(chunk)
            if size > self.cap:
                what = f"stream larger than {self.cap} bytes (--max-response-size)"
                raise AnswerFault(LARGE, f"{self.label}: {what}", self.evidence_of())
            yield chunk

    def close(self) -> None:
        self.inner.close()


class BoundedTransport(httpx.BaseTransport):
    """httpx's door: every answer read whole under the bounds (an event stream: capped)."""

    def __init__(self, inner: httpx.BaseTransport, deadline: float, cap: int) -> None:
        self.inner, self.deadline, self.cap = inner, deadline, cap

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        label, limit = label_of(request), self.deadline
        try:
            response = self.inner.handle_request(request)
        except httpx.TimeoutException:
            what = f"{label}: no answer within {limit:g} s (--request-timeout)"
            raise AnswerFault(SILENT, what, evidence(request, None, {})) from None
        except DROPPED as exc:
            reason = str(exc) or type(exc).__name__
            what = f"{label}: the connection closed without an answer ({reason})"
            raise AnswerFault(CUT, what, evidence(request, None, {})) from None
        headers = dict(response.headers)
        content_type = response.headers.get("content-type", "")
        if "text/event-stream" in request.headers.get("accept", "") and not strictjson.is_json(
            content_type
        ):  # a stream (a JSON answer to a stream request is an error: read it whole)
            capped = CappedStream(
                response.stream,  # type: ignore[arg-type]
                self.cap,
                label,
                lambda: evidence(request, response.status_code, headers),
            )
            return httpx.Response(
                response.status_code, headers=response.headers, stream=capped,
                extensions=response.extensions,
            )  # fmt: skip
        whole = self._whole(request, response, label, headers)
        whole.request = request  # the client sets it later; evidence needs it now
        whole.extensions = {
            **whole.extensions,
            JSON_VALUE: json_of_body(
                whole.content, content_type, label, whole.status_code, lambda: Exchange.of(whole)
            ),
        }
        return whole

    def _whole(
        self, request: httpx.Request, response: httpx.Response, label: str, headers: dict[str, str]
    ) -> httpx.Response:
        try:
            response.content  # noqa: B018
            return response  # already whole (an in-process transport)
        except httpx.ResponseNotRead:
            pass

        def evidence_of(note: str) -> Exchange:
            found = evidence(request, response.status_code, headers)
            return Exchange(**{**found.__dict__, "response_excerpt": note})

        try:
            raw = read_bounded(
                response.iter_raw(),
                evidence_of,
                label=label,
                started=request.extensions.get(SENT_AT, time.monotonic()),
                deadline=self.deadline,
                cap=self.cap,
            )
        finally:
            response.close()
        whole = httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=httpx.ByteStream(raw),
            extensions=response.extensions,
        )
        whole.read()
        return whole

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


def requests_evidence(request: requests.PreparedRequest, response: requests.Response | None,
                      note: str = "") -> Exchange:  # fmt: skip
    """Evidence of a request sent with requests (schemathesis' stack): with what came back."""
    body = request.body.encode() if isinstance(request.body, str) else request.body
    return Exchange(
        str(request.method),
        str(request.url),
        {k: str(v) for k, v in request.headers.items()},
        body if isinstance(body, bytes) else None,
        response.status_code if response is not None else None,
        dict(response.headers) if response is not None else {},
        note,
    )


def requests_label(request: requests.PreparedRequest) -> str:
    return operation_label(str(request.method), requests.utils.urlparse(str(request.url)).path)


def read_requests_body(
    request: requests.PreparedRequest, response: requests.Response, *, started: float,
    deadline: float, cap: int,
) -> None:  # fmt: skip
    """The requests stack's side of the door: `response` read whole under the bounds (an event
    stream is left to its reader, capped), its JSON checked as httpx answers are."""
    label = requests_label(request)
    content_type = response.headers.get("content-type", "")
    if "text/event-stream" in content_type:
        response.raw = _CappedRaw(response.raw, cap, label, requests_evidence(request, response))
        return
    try:
        response._content = read_bounded(
            _urllib3_chunks(response.raw),
            lambda note: requests_evidence(request, response, note),
            label=label, started=started, deadline=deadline, cap=cap,
        )  # fmt: skip
    finally:
        response.close()
    json_of_body(
        response.content,
        content_type,
        label,
        response.status_code,
        lambda: requests_evidence(request, response, response.text[:600]),
    )


class _CappedRaw:
    """urllib3's raw body of an event stream, read by its reader but at most `cap` bytes."""

    def __init__(self, raw: Any, cap: int, label: str, evidence: Exchange) -> None:
        self._raw, self._cap, self._label, self._evidence, self._size = raw, cap, label, evidence, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)

    def _count(self, chunk: bytes) -> bytes:
        self._size += len(chunk)
        if self._size > self._cap:
            what = f"stream larger than {self._cap} bytes (--max-response-size)"
            raise AnswerFault(LARGE, f"{self._label}: {what}", self._evidence)
        return chunk

    def read(self, *args: Any, **kwargs: Any) -> bytes:
        return self._count(self._raw.read(*args, **kwargs))

    def read1(self, *args: Any, **kwargs: Any) -> bytes:
        return self._count(self._raw.read1(*args, **kwargs))

    def stream(self, *args: Any, **kwargs: Any) -> Iterator[bytes]:
        for chunk in self._raw.stream(*args, **kwargs):
            yield self._count(chunk)
