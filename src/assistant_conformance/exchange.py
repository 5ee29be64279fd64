"""One HTTP request and its response, as evidence: an excerpt and a curl reproduction, redacted."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass

import httpx

from . import redact

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
