"""The bounds every answer the suite receives is read under, whichever client sent the request
(the transport policy puts this door in every client it makes: suite/http/policy.py):

- a deadline on the whole answer, from sending to its last byte (--request-timeout), not on each
  read: an answer that drips one byte at a time costs one timeout, not forever;
- a cap on its size (--max-response-size): the reading stops there, so memory stays bounded; an
  event stream is passed on as it arrives (its reader keeps its own deadline), capped the same;
- a complete message (RFC 9112 §8): a connection closed before the body's announced end, broken
  chunking or a reset is an incomplete answer, not a response.

A broken bound raises an AnswerFault (suite/http/observe.py); a JSON body that is not strict JSON
(RFC 8259) is recorded as an observation. Judging either is suite/judging/answer_charges.py's.
Every exchange goes on the running test's trail (suite/http/trail.py), its fault included.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import httpx

from assistant_conformance.contract.openapi import operation_label
from assistant_conformance.suite.http import (
    observe,
    running_test,
    runs_in_flight,
    strictjson,
    trail,
)
from assistant_conformance.suite.http.exchange import of_response, request_content, request_evidence
from assistant_conformance.suite.http.observe import CUT, LARGE, SILENT, SLOW, AnswerFault

SENT_AT = "conformance_sent_at"  # request extension: when its last attempt went out (monotonic)
# An answer's JSON, read once (lenient where not strict): httpx's response extension, and the
# attribute of a requests response.
JSON_VALUE = "conformance_json"
DROPPED = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)


def label_of(request: httpx.Request) -> str:
    return operation_label(request.method, request.url.path)


def read_bounded(
    chunks: Iterable[bytes],
    evidence_of: Callable[[str], trail.Entry],
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
                raise fault(SLOW, f"answer not complete within {observe.said(deadline)}")
            received.append(chunk)
    except httpx.TimeoutException:
        raise fault(SLOW, f"answer stalled: no byte within {observe.said(deadline)}") from None
    except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
        reason = str(exc) or type(exc).__name__
        raise fault(CUT, f"incomplete answer (RFC 9112 §8): {reason}") from None
    return b"".join(received)


def json_of_body(
    content: bytes,
    content_type: str,
    label: str,
    status: int,
    exchange: Callable[[], trail.Entry],
    entry: trail.Entry | None = None,
) -> Any:
    """A JSON body's value (None when it is not JSON); one that Python reads but RFC 8259 does not
    (NaN, Infinity, another charset) is read leniently and recorded as an observation."""
    if not strictjson.is_json(content_type):
        return None
    value, wrong = strictjson.read(content)
    if wrong is None:
        return value
    what = f"{label}: HTTP {status}; {wrong}"
    key = f"{label}|{wrong}"
    running_test.seen(observe.Observation(observe.NOT_STRICT_JSON, what, exchange(), key, entry))
    return strictjson.lenient(content)


BEARER = re.compile(r"(^|,)\s*bearer(\s|,|$)", re.IGNORECASE)


def observe_answer(
    label: str,
    status: int,
    headers: dict[str, str],
    content: bytes,
    exchange: Callable[[], trail.Entry],
    entry: trail.Entry | None = None,
) -> None:
    """Record what every answer of its kind must keep: a 2xx JSON object or array declared JSON,
    a 401 naming the Bearer scheme in WWW-Authenticate."""
    lower = {k.lower(): v for k, v in headers.items()}
    content_type = lower.get("content-type", "")
    if 200 <= status < 300 and not strictjson.is_json(content_type):
        head = content.lstrip()[:1]
        if head in (b"{", b"[") and strictjson.read(content)[0] is not None:
            declared = f"declared {content_type}" if content_type else "with no Content-Type"
            what = f"{label}: HTTP {status}; a JSON body {declared}"
            seen = observe.Observation(observe.JSON_UNDECLARED, what, exchange(), label, entry)
            running_test.seen(seen)
    if status == 401:
        challenge = lower.get("www-authenticate", "")
        kind = observe.CHALLENGED if BEARER.search(challenge) else observe.NOT_CHALLENGED
        what = (
            f"{label}: HTTP 401 with WWW-Authenticate {challenge!r}"
            if challenge
            else (f"{label}: HTTP 401 without a WWW-Authenticate header")
        )
        running_test.seen(observe.Observation(kind, what, exchange(), label, entry))


class CappedStream(httpx.SyncByteStream):
    """An event stream's body, passed to its reader as it arrives but only up to `cap` bytes:
    past it, a LARGE fault, so memory stays bounded. Its end tells its run's place
    (runs_in_flight.py)."""

    def __init__(
        self,
        inner: httpx.SyncByteStream,
        cap: int,
        label: str,
        evidence_of: Callable[[], trail.Entry],
        entry: trail.Entry,
        place: runs_in_flight.RunPlace,
    ) -> None:
        self.inner, self.cap, self.label, self.evidence_of = inner, cap, label, evidence_of
        self.entry, self.place = entry, place
        entry.open = True

    def __iter__(self) -> Iterator[bytes]:
        size = 0
        for chunk in self.inner:
            size += len(chunk)
            if size > self.cap:
                what = f"stream larger than {self.cap} bytes (--max-response-size)"
                self.entry.fault = LARGE
                raise AnswerFault(LARGE, f"{self.label}: {what}", self.evidence_of())
            self.entry.take(chunk)
            yield chunk
        self.place.closed(True, self.entry.response_headers, None)

    def close(self) -> None:
        if self.entry.open:
            self.entry.ended()
        self.inner.close()
        self.place.closed(False, self.entry.response_headers, bytes(self.entry.response_body))


class BoundedTransport(httpx.BaseTransport):
    """httpx's door: every answer read whole under the bounds (an event stream: capped)."""

    def __init__(
        self,
        inner: httpx.BaseTransport,
        deadline: float,
        cap: int,
        late: observe.Deadlines | None = None,
        runs: runs_in_flight.RunLoad | None = None,
    ) -> None:
        """`late`: the run's deadlines (the policy's), asked before each request and told how its
        answer came; `runs`: the suite's runs in flight (a request that makes one takes a place)."""
        self.inner, self.deadline, self.cap, self.late, self.runs = inner, deadline, cap, late, runs

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self.late is None:
            return self._bounded(request, observe.Deadline(self.deadline))
        operation, url = label_of(request), str(request.url)
        plain = running_test.plain_in_test(request.headers)
        place = runs_in_flight.take_place(self.runs, operation, url, request.headers, self._read)
        limit = self.late.deadline_of(operation, self.deadline, place.ahead, place.longest_run)
        if limit > self.deadline:  # grown: the connection waits for it too
            request.extensions["timeout"] = {**request.extensions.get("timeout", {}), "read": limit}
        fault: AnswerFault | None = None
        try:
            held = self.late.ask(operation, limit, plain)
        except BaseException:
            place.give()  # not sent
            raise
        try:
            answer = self._bounded(request, limit, place)
        except BaseException as missed:
            place.left_running()  # no whole answer: its run, if one was made, may go on
            if isinstance(missed, AnswerFault):
                fault = place.delayed(missed, operation in self.late.run_waits)
            raise
        finally:
            if self.late.done(operation, held, fault, plain) and fault is not None:
                running_test.missed(fault)
        if not isinstance(answer.stream, CappedStream):  # a whole answer: its time counts
            self.late.took(operation, time.monotonic() - request.extensions[SENT_AT], self.deadline)
        return answer

    def _read(self, url: str, headers: Mapping[str, str]) -> tuple[int, Any]:
        """GET `url` for a run's follower (runs_in_flight.py), under the plain deadline and no other
        bound of the run: no place, no deadline counted, no trail outside a test."""
        timeout = dict.fromkeys(("connect", "read", "write", "pool"), self.deadline)
        request = httpx.Request("GET", url, headers=headers, extensions={"timeout": timeout})
        answer = self._bounded(request, observe.Deadline(self.deadline))
        return answer.status_code, answer.extensions.get(JSON_VALUE)

    def _bounded(
        self, request: httpx.Request, limit: float, place: runs_in_flight.RunPlace | None = None
    ) -> httpx.Response:
        label = label_of(request)
        sent = trail.Entry(
            request.method,
            str(request.url),
            dict(request.headers),
            trail.cap(request_content(request)),
        )
        entry = running_test.enter(sent)
        try:
            response = self.inner.handle_request(request)
        except httpx.TimeoutException:
            entry.fault = SILENT
            entry.ended()
            what = f"{label}: no answer within {observe.said(limit)}"
            raise AnswerFault(SILENT, what, request_evidence(request, None, {})) from None
        except DROPPED as exc:
            entry.fault = CUT
            entry.ended()
            reason = str(exc) or type(exc).__name__
            what = f"{label}: the connection closed without an answer ({reason})"
            raise AnswerFault(CUT, what, request_evidence(request, None, {})) from None
        headers = dict(response.headers)
        entry.status, entry.response_headers = response.status_code, headers
        content_type = response.headers.get("content-type", "")
        if "text/event-stream" in request.headers.get("accept", "") and not strictjson.is_json(
            content_type
        ):  # a stream (a JSON answer to a stream request is an error: read it whole)
            capped = CappedStream(
                response.stream,  # type: ignore[arg-type]
                self.cap,
                label,
                lambda: request_evidence(request, response.status_code, headers),
                entry,
                place or runs_in_flight.RunPlace(None),
            )
            return httpx.Response(
                response.status_code,
                headers=response.headers,
                stream=capped,
                extensions={**response.extensions, trail.ENTRY: entry},
            )
        try:
            whole = self._whole(request, response, label, headers, limit)
        except AnswerFault as fault:
            entry.fault = fault.kind
            entry.ended()
            raise
        entry.take(whole.content)
        entry.ended()
        if place is not None:
            place.answered(whole.status_code, headers, whole.content)
        whole.request = request  # the client sets it later; evidence needs it now
        observe_answer(
            label, whole.status_code, headers, whole.content, lambda: of_response(whole), entry
        )
        whole.extensions = {
            **whole.extensions,
            trail.ENTRY: entry,
            JSON_VALUE: json_of_body(
                whole.content,
                content_type,
                label,
                whole.status_code,
                lambda: of_response(whole),
                entry,
            ),
        }
        return whole

    def _whole(
        self,
        request: httpx.Request,
        response: httpx.Response,
        label: str,
        headers: dict[str, str],
        limit: float,
    ) -> httpx.Response:
        try:
            response.content  # noqa: B018
            return response  # already whole (an in-process transport)
        except httpx.ResponseNotRead:
            pass

        def evidence_of(note: str) -> trail.Entry:
            return request_evidence(request, response.status_code, headers, note)

        try:
            raw = read_bounded(
                response.iter_raw(),
                evidence_of,
                label=label,
                started=request.extensions.get(SENT_AT, time.monotonic()),
                deadline=limit,
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
