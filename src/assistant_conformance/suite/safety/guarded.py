"""The run's guard and ledger around the clients of one principal, in both stacks: what the
http room's clients.py puts between a client and the door (`Guarding` is its `Around`).

Before a request goes out: refused when it would touch what the run did not create (NotOwned) or
write under --read-only (ReadOnlyRefused); a create is written to the ledger (intent). After its
answer: the identifiers it shows are kept and its credential-named fields registered as secrets,
the create's delete request recorded, and the answer counted toward a stop (the token refused
again and again, requests unanswered on operation after operation). No other module calls the
guard or the ledger around a request (selftests/tree/test_one_client.py). A create that ends
without an answer leaves its intent open (it may have made something), unless it never went out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import requests
from requests.adapters import HTTPAdapter

from assistant_conformance.report import redact
from assistant_conformance.suite.http.answer_bounds import JSON_VALUE
from assistant_conformance.suite.http.observe import SILENT, SLOW, AnswerFault, Overdue
from assistant_conformance.suite.http.policy import Throttled
from assistant_conformance.suite.safety.guard import (
    Guard,
    NotOwned,
    ReadOnlyRefused,
    bearer_token,
)
from assistant_conformance.suite.safety.ledger import MAIN, Intent, Ledger

# Ended before the request could make anything: not asked (its operation late twice), throttled
# to the end, no connection made.
NOT_SENT = (Overdue, Throttled, httpx.ConnectError, requests.ConnectTimeout)


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

    def faulted(self, request: httpx.Request, fault: AnswerFault, intent: Intent | None) -> None:
        """No whole answer came: what the create may have made stays unknown (its intent open)."""
        self.unanswered(intent, sent=True)
        if fault.kind in (SLOW, SILENT):
            self.guard.timed_out(request)

    def unanswered(self, intent: Intent | None, sent: bool) -> None:
        """The request ended without an answer (`sent`: it may have reached the target)."""
        ledger = self.ledger()
        if intent is not None and ledger is not None:
            ledger.unanswered(intent, sent)

    def after(
        self,
        request: httpx.Request,
        status: int,
        body: Any,
        intent: Intent | None,
        response: Any = None,
    ) -> None:
        """What the answer (`body`: its JSON, None when it has none; `response`: as the client
        gives it) shows and made."""
        if body is not None:
            redact.register_fields(body)  # e.g. a chat-kit client secret, before anyone shows it
            self.guard.remember(body)
        ledger = self.ledger()
        if intent is not None and ledger is not None:
            ledger.created(intent, status, body, response)
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
            self.guarding.faulted(request, fault, intent)
            raise
        except BaseException as stopped:
            self.guarding.unanswered(intent, sent=not isinstance(stopped, NOT_SENT))
            raise
        body = response.extensions.get(JSON_VALUE)
        self.guarding.after(request, response.status_code, body, intent, response)
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
        return guarded_send(self.guarding, self.inner, request, stream, kwargs)

    def close(self) -> None:
        self.inner.close()
        super().close()


class ProbesAdapter(HTTPAdapter):
    """schemathesis' own probes (its auth check sends a case again without the credential,
    property/compat.py): the door's adapter, with the run's guarding around it once the run's
    safety session is open (`guarding()`; None before: nothing to guard yet)."""

    def __init__(self, inner: HTTPAdapter, guarding: Callable[[], Guarding | None]) -> None:
        super().__init__()
        self.guarding, self.inner = guarding, inner

    def send(  # type: ignore[override]
        self, request: requests.PreparedRequest, stream: bool = False, **kwargs: Any
    ) -> requests.Response:
        guarding = self.guarding()
        if guarding is None:
            return self.inner.send(request, stream=stream, **kwargs)
        return guarded_send(guarding, self.inner, request, stream, kwargs)

    def close(self) -> None:
        self.inner.close()
        super().close()


def guarded_send(
    guarding: Guarding,
    inner: HTTPAdapter,
    request: requests.PreparedRequest,
    stream: bool,
    kwargs: dict[str, Any],
) -> requests.Response:
    """One request sent with requests, the guarding around it."""
    seen = as_httpx(request)
    intent = guarding.before(seen)
    try:
        response = inner.send(request, stream=stream, **kwargs)
    except AnswerFault as fault:
        guarding.faulted(seen, fault, intent)
        raise
    except BaseException as stopped:
        guarding.unanswered(intent, sent=not isinstance(stopped, NOT_SENT))
        raise
    body = getattr(response, JSON_VALUE, None)
    guarding.after(seen, response.status_code, body, intent, response)
    return response


def as_httpx(request: requests.PreparedRequest) -> httpx.Request:
    """A request sent with requests, as the guard and the ledger read one (method, URL,
    headers, body)."""
    body = request.body.encode() if isinstance(request.body, str) else request.body
    headers = {
        k: v.decode("latin-1") if isinstance(v, bytes) else str(v)
        for k, v in request.headers.items()
    }
    content = body if isinstance(body, bytes) else None
    return httpx.Request(str(request.method), str(request.url), headers=headers, content=content)
