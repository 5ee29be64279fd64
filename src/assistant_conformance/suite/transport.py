"""The run's transport policy: what every request of every layer carries and waits for, built once
from the options (one-door design: nothing else makes a client of the target).

- extra headers (--header 'Name: value'), added where the request has none of that name; their
  values are secrets in every output unless the name is harmless (HARMLESS);
- TLS: --ca-bundle FILE to trust a private CA, --insecure to verify nothing (loud in the header
  and the report);
- a rate limit (--rate-limit N/s), one budget for the run: under pytest-xdist each worker takes
  its share;
- throttling is not a finding: a 429, or a 503 with Retry-After, is waited out (Retry-After, else
  a backoff) and sent again, at most RETRIES times, and counted for the report; a request still
  throttled after that is "not judged", never charged to a requirement;
- a connection closed before any answer is sent on once more, on a new connection: a reused
  connection the target closed just as the request went out (the keep-alive race, RFC 9112
  §9.3.1) is retried so by any client. Counted for the report; a second close is the target's
  answer (the door charges it).
"""

from __future__ import annotations

import email.utils
import ssl
import threading
import time
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import httpx
import pytest
import requests

from assistant_conformance.report import redact

if TYPE_CHECKING:
    from assistant_conformance.suite.settings import SuiteSettings

HARMLESS = frozenset(
    {"user-agent", "accept-language", "x-request-id", "x-correlation-id", "traceparent"}
)
RETRIES = 5  # throttled answers waited out per request
LONGEST_WAIT = 60.0  # seconds: a longer Retry-After is cut to this
# Closed before any answer (httpx's spellings, and requests' for schemathesis' session).
DROPPED = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError, requests.ConnectionError)


class Throttled(pytest.skip.Exception):  # type: ignore[name-defined]
    """The target still throttled a request after RETRIES waits: the check is not judged."""


def parse_header(raw: str) -> tuple[str, str]:
    """'Name: value' -> (name, value); ValueError with one readable line otherwise."""
    name, colon, value = raw.partition(":")
    name, value = name.strip(), value.strip()
    if not colon or not name or any(c in name for c in ' \t()<>@,;="/[]?{}'):
        raise ValueError(f"--header expects 'Name: value', got {redact.text(raw)!r}")
    if name.lower() in ("authorization", "host", "content-length"):
        raise ValueError(f"--header cannot set {name} (the suite sets it)")
    return name, value


def parse_rate(raw: str) -> float:
    """'N/s', 'N/m' or a bare number of requests per second."""
    number, _, unit = raw.strip().partition("/")
    per = {"": 1.0, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0}.get(unit.strip().lower())
    try:
        rate = float(number) / per if per else -1.0
    except ValueError:
        rate = -1.0
    if rate <= 0:
        raise ValueError(f"--rate-limit expects N/s (e.g. 20/s), got {raw!r}")
    return rate


def retry_after(status: int, headers: Mapping[str, str], attempt: int) -> float | None:
    """Seconds to wait before sending again, or None when the answer is not throttling."""
    value = headers.get("retry-after", "").strip()
    if status != 429 and not (status == 503 and value):
        return None
    seconds: float | None = None
    if value.isdigit():
        seconds = float(value)
    elif value:
        try:
            when = email.utils.parsedate_to_datetime(value)
            seconds = (when - datetime.now(UTC)).total_seconds()
        except (TypeError, ValueError):
            seconds = None
    if seconds is None:
        seconds = 0.5 * 2**attempt  # no (readable) Retry-After: back off
    return min(max(seconds, 0.0), LONGEST_WAIT)


@dataclass
class Policy:
    headers: dict[str, str] = field(default_factory=dict)
    ca_bundle: str | None = None
    insecure: bool = False
    rate: float | None = None  # requests per second for the whole run
    share: int = 1  # pytest-xdist workers the rate is shared by (each takes 1/share of it)
    waits: list[tuple[str, float]] = field(default_factory=list)  # (operation, seconds) waited
    reconnects: list[str] = field(default_factory=list)  # operations sent again after a close
    _next: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def from_settings(cls, settings: SuiteSettings) -> Policy:
        return cls(
            headers=dict(settings.header),
            ca_bundle=str(settings.ca_bundle) if settings.ca_bundle else None,
            insecure=settings.insecure,
            rate=settings.rate_limit,
        )

    def __post_init__(self) -> None:
        for name, value in self.headers.items():
            if name.lower() not in HARMLESS:
                redact.register(value)

    @property
    def verify(self) -> ssl.SSLContext | bool:
        if self.insecure:
            return False
        if self.ca_bundle:
            return ssl.create_default_context(cafile=self.ca_bundle)
        return True

    @property
    def requests_verify(self) -> bool | str:
        """The same, as requests (schemathesis' session) spells it."""
        return False if self.insecure else (self.ca_bundle or True)

    def prepare(self, headers: MutableMapping[str, Any]) -> None:
        """Add the extra headers a request lacks, then wait for its turn under the rate limit."""
        for name, value in self.headers.items():
            if name not in headers:
                headers[name] = value
        if self.rate is None:
            return
        with self._lock:
            now = time.monotonic()
            turn = max(now, self._next)
            self._next = turn + self.share / self.rate
        if turn > now:
            time.sleep(turn - now)

    def send(
        self, label: str, attempt: Callable[[], Any], status_of: Callable[[Any], tuple[int, Any]]
    ) -> Any:
        """`attempt()` until its answer is not throttling (at most RETRIES waits)."""
        for tries in range(RETRIES + 1):
            answer = self._answered(label, attempt)
            status, headers = status_of(answer)
            wait = retry_after(status, headers, tries)
            if wait is None:
                return answer
            if tries == RETRIES:
                break
            answer.close()
            with self._lock:
                self.waits.append((label, wait))
            time.sleep(wait)
        raise Throttled(
            f"not judged: the target still throttled {label} (HTTP {status}) after "
            f"{RETRIES} waits; lower --rate-limit"
        )

    def _answered(self, label: str, attempt: Callable[[], Any]) -> Any:
        try:
            return attempt()
        except DROPPED as exc:
            if isinstance(exc, requests.Timeout):  # a connect timeout: the target is not there
                raise
            with self._lock:
                self.reconnects.append(label)
            return attempt()

    def client(self, base_url: str, token: str | None, timeout: float) -> httpx.Client:
        """A plain client of the target (no guard): pre-flight, clean-up, sweep, probes."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(
            base_url=base_url, headers=headers, timeout=timeout, transport=self.transport()
        )

    def transport(self) -> httpx.BaseTransport:
        return PolicyTransport(self, httpx.HTTPTransport(verify=self.verify))


class PolicyTransport(httpx.BaseTransport):
    """httpx's side of the policy: headers, rate limit, throttled answers waited out."""

    def __init__(self, policy: Policy, inner: httpx.BaseTransport) -> None:
        self.policy, self.inner = policy, inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        def attempt() -> httpx.Response:
            self.policy.prepare(request.headers)
            return self.inner.handle_request(request)

        label = f"{request.method} {request.url.path}"
        answer: httpx.Response = self.policy.send(
            label, attempt, lambda r: (r.status_code, r.headers)
        )
        return answer

    def close(self) -> None:
        self.inner.close()


_current = Policy()


def current() -> Policy:
    """This process's policy (set from the options when the plugin configures the run)."""
    return _current


def use(policy: Policy) -> None:
    global _current
    _current = policy


def summary(
    settings: SuiteSettings, throttled: list[dict[str, Any]], reconnects: list[dict[str, Any]]
) -> dict[str, Any]:
    """How the run reached the target, for the report (header names only: values are secret)."""
    tls = "NOT verified (--insecure)" if settings.insecure else "verified"
    if settings.ca_bundle:
        tls = f"verified against {settings.ca_bundle} (--ca-bundle)"
    return {
        "tls": tls,
        "headers": [name for name, _ in settings.header],
        "rate_limit": settings.rate_limit,
        "throttled": {
            "requests": len(throttled),
            "seconds": round(sum(t["seconds"] for t in throttled), 1),
        },
        "resent_after_close": len(reconnects),
    }
