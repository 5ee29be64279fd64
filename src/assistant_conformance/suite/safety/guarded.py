"""The run's guard and ledger around the clients of one principal, in both stacks: what the
http room's clients.py puts between a client and the door (`Guarding` is its `Around`).

Before a request goes out: refused when it would touch what the run did not create (NotOwned) or
write under --read-only (ReadOnlyRefused); a create is written to the ledger (intent). After its
answer: the identifiers it shows are kept and its credential-named fields registered as secrets,
the create's delete request recorded, and the answer counted toward a stop (the token refused
again and again, requests unanswered on operation after operation). No other module calls the
guard or the ledger around a request (selftests/tree/test_one_client.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import requests
from requests.adapters import HTTPAdapter

from assistant_conformance.report import redact
from assistant_conformance.suite.http.door import JSON_VALUE
from assistant_conformance.suite.http.observe import SILENT, SLOW, AnswerFault
from assistant_conformance.suite.safety.guard import (
    Guard,
    NotOwned,
    ReadOnlyRefused,
    bearer_token,
)
from assistant_conformance.suite.safety.ledger import MAIN, Intent, Ledger


@dataclass
class Guarding:
    """The guard and the ledger of one principal's requests (`token`: its own, whose refusal
    counts toward a stop; `ledger` is asked for on each request: none, nothing recorded)."""

    guard: Guard
    ledger: Callable[[], Ledger | None]
    principal: str = MAIN
    token: str | None = None

    def transport(self, inner: httpx.BaseTransport) -> httpx.BaseTransport:
        return GuardedTransport(self, inner)

    def adapter(self, inner: HTTPAdapter) -> HTTPAdapter:
        return GuardedAdapter(self, inner)

    def before(self, request: httpx.Request) -> Intent | None:
        """Refuse the request, or write down what it may create (its intent)."""
        ledger = self.ledger()
        owned = ledger.owned if ledger is not None else set()
        if self.guard.active and (reason := self.guard.refusal(request, owned)) is not None:
            if self.guard.read_only:
                raise ReadOnlyRefused(reason)
            raise NotOwned(reason)
        own = redact.is_secret(bearer_token(request))  # a credential of the run: it may create
        return ledger.intend(request, self.principal, own) if ledger is not None else None

    def faulted(self, request: httpx.Request, fault: AnswerFault) -> None:
        if fault.kind in (SLOW, SILENT):
            self.guard.timed_out(request)

    def after(self, request: httpx.Request, status: int, body: Any, intent: Intent | None) -> None:
        """What the answer (`body`: its JSON, None when it has none) shows and made."""
        if body is not None:
            redact.register_fields(body)  # e.g. a chat-kit client secret, before anyone shows it
            self.guard.remember(body)
        ledger = self.ledger()
        if intent is not None and ledger is not None:
            ledger.created(intent, status, body)
        mine = bool(self.token) and bearer_token(request) == self.token
        self.guard.observe(request, status, mine)


class GuardedTransport(httpx.BaseTransport):
    """httpx's side: the guarding around the door (`inner`, clients.transport)."""

    def __init__(self, guarding: Guarding, inner: httpx.BaseTransport) -> None:
        self.guarding, self.inner = guarding, inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        intent = self.guarding.before(request)
        try:
            response = self.inner.handle_request(request)
        except AnswerFault as fault:
            self.guarding.faulted(request, fault)
            raise
        body = response.extensions.get(JSON_VALUE)
        self.guarding.after(request, response.status_code, body, intent)
        return response

    def close(self) -> None:
        self.inner.close()


class GuardedAdapter(HTTPAdapter):
    """requests' side (schemathesis' cases): the guarding around the door's adapter."""

    def __init__(self, guarding: Guarding, inner: HTTPAdapter) -> None:
        super().__init__()
        self.guarding, self.inner = guarding, inner

    def send(  # type: ignore[override]
        self, request: requests.PreparedRequest, stream: bool = False, **kwargs: Any
    ) -> requests.Response:
        seen = as_httpx(request)
        intent = self.guarding.before(seen)
        try:
            response = self.inner.send(request, stream=stream, **kwargs)
        except AnswerFault as fault:
            self.guarding.faulted(seen, fault)
            raise
        self.guarding.after(seen, response.status_code, getattr(response, JSON_VALUE, None), intent)
        return response

    def close(self) -> None:
        self.inner.close()
        super().close()


def as_httpx(request: requests.PreparedRequest) -> httpx.Request:
    """A request sent with requests, as the guard and the ledger read one (method, URL,
    headers, body)."""
    body = request.body.encode() if isinstance(request.body, str) else request.body
    headers = {k: v.decode("latin-1") if isinstance(v, bytes) else str(v)
               for k, v in request.headers.items()}  # fmt: skip
    content = body if isinstance(body, bytes) else None
    return httpx.Request(str(request.method), str(request.url), headers=headers, content=content)
