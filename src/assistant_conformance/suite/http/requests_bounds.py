"""The bounds of answers in the requests stack (schemathesis' sessions, through
policy.PolicyAdapter): an answer read whole under the same bounds as httpx's
(suite/http/answer_bounds.py), an event stream passed to its reader capped, every exchange on the
running test's trail."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import requests
import urllib3

from assistant_conformance.contract.openapi import operation_label
from assistant_conformance.suite.http import running_test, runs_in_flight, trail
from assistant_conformance.suite.http.answer_bounds import (
    JSON_VALUE,
    json_of_body,
    observe_answer,
    read_bounded,
)
from assistant_conformance.suite.http.observe import LARGE, AnswerFault


def _urllib3_chunks(raw: urllib3.BaseHTTPResponse) -> Iterator[bytes]:
    """urllib3's body chunks, its read faults spelled as httpx's (one reader for both stacks)."""
    try:
        while chunk := raw.read1(65536, decode_content=True):  # as bytes arrive, not 64 KiB
            yield chunk
    except urllib3.exceptions.ReadTimeoutError as exc:
        raise httpx.ReadTimeout(str(exc)) from None
    except (urllib3.exceptions.ProtocolError, urllib3.exceptions.DecodeError) as exc:
        raise httpx.RemoteProtocolError(str(exc)) from None


def requests_evidence(
    request: requests.PreparedRequest, response: requests.Response | None, note: str = ""
) -> trail.Entry:
    """Evidence of a request sent with requests (schemathesis' stack): with what came back."""
    body = request.body.encode() if isinstance(request.body, str) else request.body
    status = response.status_code if response is not None else None
    headers = {k: str(v) for k, v in request.headers.items()}
    found = trail.Entry(
        str(request.method),
        str(request.url),
        headers,
        body if isinstance(body, bytes) else None,
        status=status,
    )
    found.response_headers = dict(response.headers) if response is not None else {}
    found.note = note
    return found


def requests_label(request: requests.PreparedRequest) -> str:
    return operation_label(str(request.method), requests.utils.urlparse(str(request.url)).path)


def requests_entry(request: requests.PreparedRequest) -> trail.Entry:
    """The trail's entry of a request sent with requests (schemathesis' stack)."""
    body = request.body.encode() if isinstance(request.body, str) else request.body
    headers = {k: str(v) for k, v in request.headers.items()}
    content = body if isinstance(body, bytes) else None
    return running_test.enter(
        trail.Entry(str(request.method), str(request.url), headers, trail.cap(content))
    )


def read_requests_body(
    request: requests.PreparedRequest,
    response: requests.Response,
    *,
    started: float,
    deadline: float,
    cap: int,
    entry: trail.Entry,
    place: runs_in_flight.RunPlace,
) -> None:
    """The requests stack's side of the door: `response` read whole under the bounds (an event
    stream is left to its reader, capped), its JSON checked as httpx answers are; its run's
    `place` told how the answer ended (runs_in_flight.py)."""
    label = requests_label(request)
    content_type = response.headers.get("content-type", "")
    entry.status, entry.response_headers = response.status_code, dict(response.headers)
    if "text/event-stream" in content_type:
        evidence = requests_evidence(request, response)
        response.raw = _CappedRaw(response.raw, cap, label, evidence, entry, place)
        return
    try:
        response._content = read_bounded(
            _urllib3_chunks(response.raw),
            lambda note: requests_evidence(request, response, note),
            label=label,
            started=started,
            deadline=deadline,
            cap=cap,
        )
    except AnswerFault as fault:
        entry.fault = fault.kind
        raise
    finally:
        response.close()
        entry.ended()
    entry.take(response.content)
    place.answered(response.status_code, response.headers, response.content)

    def answered() -> trail.Entry:
        return requests_evidence(request, response, response.text[:600])

    observe_answer(
        label, response.status_code, dict(response.headers), response.content, answered, entry
    )
    value = json_of_body(
        response.content, content_type, label, response.status_code, answered, entry
    )
    setattr(
        response, JSON_VALUE, value
    )  # read once, as httpx's answers carry it (answer_bounds.py)


class _CappedRaw:
    """urllib3's raw body of an event stream, read by its reader but at most `cap` bytes; its end
    (read to it, or closed before) tells its run's place."""

    def __init__(
        self,
        raw: Any,
        cap: int,
        label: str,
        evidence: trail.Entry,
        entry: trail.Entry,
        place: runs_in_flight.RunPlace,
    ) -> None:
        self._raw, self._cap, self._label, self._evidence, self._size = raw, cap, label, evidence, 0
        self._entry, self._place = entry, place

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)

    def _count(self, chunk: bytes, whole: bool = False) -> bytes:
        if whole or not chunk:  # the server's end of the stream
            self._place.closed(True, self._entry.response_headers, None)
        self._size += len(chunk)
        if self._size > self._cap:
            what = f"stream larger than {self._cap} bytes (--max-response-size)"
            self._entry.fault = LARGE
            raise AnswerFault(LARGE, f"{self._label}: {what}", self._evidence)
        self._entry.take(chunk)
        return chunk

    def read(self, amt: int | None = None, *args: Any, **kwargs: Any) -> bytes:
        return self._count(self._raw.read(amt, *args, **kwargs), whole=amt is None)

    def read1(self, *args: Any, **kwargs: Any) -> bytes:
        return self._count(self._raw.read1(*args, **kwargs))

    def stream(self, *args: Any, **kwargs: Any) -> Iterator[bytes]:
        for chunk in self._raw.stream(*args, **kwargs):
            yield self._count(chunk)
        self._count(b"")

    def close(self) -> None:
        self._raw.close()
        self._left()

    def release_conn(self) -> None:
        self._raw.release_conn()
        self._left()

    def _left(self) -> None:
        body = bytes(self._entry.response_body)
        self._place.closed(False, self._entry.response_headers, body)
