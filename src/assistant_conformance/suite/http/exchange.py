"""One HTTP request and its response, as evidence: an excerpt and a curl reproduction, redacted."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Any

import httpx
import requests
from schemathesis.core.transport import Response

from assistant_conformance.report import redact

EXCERPT = 600


@dataclass(frozen=True)
class Exchange:
    method: str
    url: str
    request_headers: dict[str, str]
    request_body: bytes | None
    status: int | None
    response_headers: dict[str, str]
    response_excerpt: str

    @classmethod
    def of(cls, response: httpx.Response, body_text: str | None = None) -> Exchange:
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
        return cls(
            method=request.method,
            url=str(request.url),
            request_headers=dict(request.headers),
            request_body=content,
            status=response.status_code,
            response_headers=dict(response.headers),
            response_excerpt=body_text[:EXCERPT],
        )

    def curl(self) -> str:
        """A one-line reproduction; a real credential is read from the environment, never shown."""
        parts = ["curl", "-sS", "-X", self.method, redact.text(shlex.quote(self.url))]
        for name, value in self.request_headers.items():
            lower = name.lower()
            if lower == "authorization":
                # As sent, so a wrong or Basic credential reproduces its rejection; a registered
                # secret becomes the variable it is read from.
                parts += ["-H", '"' + redact.as_variable(f"Authorization: {value}") + '"']
            elif lower in ("last-event-id", "content-type", "accept"):
                parts += ["-H", redact.text(shlex.quote(f"{name}: {value}"))]
        if self.request_body:
            body = self.request_body.decode("utf-8", "replace")[:2000]
            parts += ["--data-binary", redact.text(shlex.quote(body))]
        return " ".join(parts)

    def as_dict(self) -> dict[str, object]:
        return {
            "request": {
                "method": self.method,
                "url": redact.text(self.url),
                "headers": redact.headers(self.request_headers),
                "body": redact.text(
                    (self.request_body or b"").decode("utf-8", "replace")[:EXCERPT]
                ),
            },
            "response": {
                "status": self.status,
                "headers": redact.headers(self.response_headers),
                "body": redact.text(self.response_excerpt),
            },
            "curl": self.curl(),
        }


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
    request: httpx.Request, status: int | None, headers: dict[str, str]
) -> Exchange:
    """What was sent and the little that came back, for the report and the curl line."""
    try:
        body: bytes | None = request.content
    except httpx.RequestNotRead:
        body = None
    return Exchange(request.method, str(request.url), dict(request.headers), body, status,
                    headers, "")  # fmt: skip


# --- evidence of requests sent by the property layer (schemathesis uses requests) ---------------


def from_schemathesis(response: Response, drop_auth: bool = False) -> Exchange:
    """The suite's evidence (redacted excerpt and curl) from a schemathesis response."""
    request = response.request
    headers = {
        k: v
        for k, v in _text_headers(request.headers).items()
        if not (drop_auth and k.lower() == "authorization")
    }
    body = request.body.encode() if isinstance(request.body, str) else request.body
    return Exchange(
        method=str(request.method),
        url=str(request.url),
        request_headers=headers,
        request_body=body if isinstance(body, bytes) else None,
        status=response.status_code,
        response_headers={k: ", ".join(v) for k, v in response.headers.items()},
        response_excerpt=response.content[:EXCERPT].decode("utf-8", "replace"),
    )


def _text_headers(headers: Any) -> dict[str, str]:
    return {k: v.decode("latin-1") if isinstance(v, bytes) else str(v) for k, v in headers.items()}


def from_requests(sent: requests.PreparedRequest | requests.Response) -> Exchange:
    """Evidence of a request sent with requests: with its answer, or alone (none came)."""
    response = sent if isinstance(sent, requests.Response) else None
    request = sent.request if isinstance(sent, requests.Response) else sent
    body = request.body.encode() if isinstance(request.body, str) else request.body
    return Exchange(
        method=str(request.method),
        url=str(request.url),
        request_headers=_text_headers(request.headers),
        request_body=body if isinstance(body, bytes) else None,
        status=response.status_code if response is not None else None,
        response_headers=dict(response.headers) if response is not None else {},
        response_excerpt=response.text[:EXCERPT] if response is not None else "",
    )
