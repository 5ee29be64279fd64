"""One HTTP request and its response as evidence (the trail's Entry, suite/http/trail.py: one
exchange type for the doors, the trail, the reports and HAR): made from an answer of httpx,
requests or schemathesis, shown as an excerpt and a curl reproduction, redacted."""

from __future__ import annotations

import json
import shlex
from typing import Any

import httpx
import requests
from schemathesis.core.transport import Response

from assistant_conformance.report import redact
from assistant_conformance.report.exchange_record import (
    ExchangeRecord,
    RequestRecord,
    ResponseRecord,
)
from assistant_conformance.suite.http.trail import Entry

EXCERPT = 600


def of_response(response: httpx.Response, body_text: str | None = None) -> Entry:
    """An httpx answer as evidence: the request, and the start of the answer (`body_text`: the
    answer as read elsewhere, a stream's text)."""
    request = response.request
    try:
        content: bytes | None = request.content
    except httpx.RequestNotRead:
        content = None
    if body_text is None:
        try:
            body_text = response.text
        except httpx.ResponseNotRead:
            body_text = ""
    return _evidence(
        request.method,
        str(request.url),
        dict(request.headers),
        content,
        response.status_code,
        dict(response.headers),
        body_text,
    )


def _evidence(
    method: str,
    url: str,
    request_headers: dict[str, str],
    request_body: bytes | None,
    status: int | None,
    response_headers: dict[str, str],
    excerpt: str,
) -> Entry:
    """An exchange kept as evidence only: its answer's first EXCERPT characters."""
    entry = Entry(method, url, request_headers, request_body, status=status)
    entry.response_headers = response_headers
    entry.response_body = bytearray(excerpt[:EXCERPT].encode("utf-8", "surrogatepass"))
    return entry


def curl(exchange: Entry) -> str:
    """A one-line reproduction; a real credential is read from the environment, never shown."""
    parts = ["curl", "-sS", "-X", exchange.method, redact.text(shlex.quote(exchange.url))]
    for name, value in exchange.request_headers.items():
        lower = name.lower()
        if lower == "authorization":
            # As sent, so a wrong or Basic credential reproduces its rejection; a registered
            # secret becomes the variable it is read from.
            parts += ["-H", '"' + redact.as_variable(f"Authorization: {value}") + '"']
        elif lower in ("last-event-id", "content-type", "accept"):
            parts += ["-H", redact.text(shlex.quote(f"{name}: {value}"))]
    if exchange.request_body:
        body = exchange.request_body.decode("utf-8", "replace")[:2000]
        parts += ["--data-binary", redact.text(shlex.quote(body))]
    return " ".join(parts)


def excerpt(exchange: Entry) -> str:
    """What a report shows of the answer: its note, or the first EXCERPT characters."""
    if exchange.note:
        return exchange.note
    return bytes(exchange.response_body[: 4 * EXCERPT]).decode("utf-8", "replace")[:EXCERPT]


def evidence_record(exchange: Entry, *, har: str = "", entry: int | None = None) -> ExchangeRecord:
    """A finding's exchange as the reports keep it, redacted; an audit's names its HAR file and
    its index there (`har`, `entry`: only then in the JSON)."""
    sent = (exchange.request_body or b"").decode("utf-8", "replace")[:EXCERPT]
    request = RequestRecord(
        method=exchange.method,
        url=redact.text(exchange.url),
        headers=redact.headers(exchange.request_headers),
        body=redact.text(sent),
    )
    response = ResponseRecord(
        status=exchange.status,
        headers=redact.headers(exchange.response_headers),
        body=redact.text(excerpt(exchange)),
    )
    if entry is None:
        return ExchangeRecord(request=request, response=response, curl=curl(exchange))
    return ExchangeRecord(
        request=request, response=response, curl=curl(exchange), har=har, entry=entry
    )


def describe(value: object) -> str:
    """A short, redacted rendering of an actual value for failure text."""
    if isinstance(value, httpx.Response):
        return f"HTTP {value.status_code} {redact.text(_short(value))}"
    if isinstance(value, str):
        return redact.text(value)
    try:
        return redact.text(json.dumps(value, default=str)[:EXCERPT])
    except (TypeError, ValueError):
        return redact.text(repr(value)[:EXCERPT])


def _short(response: httpx.Response) -> str:
    try:
        return response.text[:200]
    except httpx.ResponseNotRead:
        return "(streamed body)"


def request_content(request: httpx.Request) -> bytes | None:
    """The request's body, read now if it was a stream (a multipart upload), for the trail."""
    try:
        return request.content
    except httpx.RequestNotRead:
        try:
            return request.read()
        except (httpx.StreamConsumed, RuntimeError):
            return None


def request_evidence(
    request: httpx.Request, status: int | None, headers: dict[str, str], note: str = ""
) -> Entry:
    """What was sent and the little that came back (`note`: what the report says of the answer
    instead of its body), for the report and the curl line."""
    try:
        body: bytes | None = request.content
    except httpx.RequestNotRead:
        body = None
    entry = _evidence(
        request.method, str(request.url), dict(request.headers), body, status, headers, ""
    )
    entry.note = note
    return entry


# --- evidence of requests sent by the property layer (schemathesis uses requests) ---------------


def from_schemathesis(response: Response, drop_auth: bool = False) -> Entry:
    """The suite's evidence (redacted excerpt and curl) from a schemathesis response."""
    request = response.request
    headers = {
        k: v
        for k, v in _text_headers(request.headers).items()
        if not (drop_auth and k.lower() == "authorization")
    }
    body = request.body.encode() if isinstance(request.body, str) else request.body
    return _evidence(
        str(request.method),
        str(request.url),
        headers,
        body if isinstance(body, bytes) else None,
        response.status_code,
        {k: ", ".join(v) for k, v in response.headers.items()},
        response.content[:EXCERPT].decode("utf-8", "replace"),
    )


def _text_headers(headers: Any) -> dict[str, str]:
    return {k: v.decode("latin-1") if isinstance(v, bytes) else str(v) for k, v in headers.items()}


def from_requests(sent: requests.PreparedRequest | requests.Response) -> Entry:
    """Evidence of a request sent with requests: with its answer, or alone (none came)."""
    response = sent if isinstance(sent, requests.Response) else None
    request = sent.request if isinstance(sent, requests.Response) else sent
    body = request.body.encode() if isinstance(request.body, str) else request.body
    return _evidence(
        str(request.method),
        str(request.url),
        _text_headers(request.headers),
        body if isinstance(body, bytes) else None,
        response.status_code if response is not None else None,
        dict(response.headers) if response is not None else {},
        response.text[:EXCERPT] if response is not None else "",
    )
