"""The run's transport policy: what every request of every layer carries and waits for, built once
from the settings (`Policy.of`). Every client of the target is made from it in clients.py, and
reads its answers through the door (answer_bounds.py: deadline, size cap, completeness):

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
  answer (the door charges it);
- an operation that ran past its deadline twice is not asked again in the run (Overdue: its
  remaining checks are not judged): a target that hangs or drips costs two deadlines per
  operation, not one per test. Counted for the whole run, its pytest-xdist workers included
  (config/run_folder.py); the deadline itself follows what the run measured (observe.Deadlines);
- the suite's own runs in flight on the target, across workers, are bounded (runs_in_flight.py).
"""

from __future__ import annotations

import email.utils
import ssl
import threading
import time
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import httpx
import requests
from requests.adapters import HTTPAdapter

from assistant_conformance.report import redact
from assistant_conformance.suite.config.run_folder import RunFolder, SharedCounts
from assistant_conformance.suite.config.settings import SuiteSettings
from assistant_conformance.suite.http import (
    answer_bounds,
    observe,
    requests_bounds,
    running_test,
    runs_in_flight,
)
from assistant_conformance.suite.http.observe import CUT, SILENT, AnswerFault, Deadlines, NotJudged
from assistant_conformance.suite.http.runs_in_flight import RUN_WAIT, RunLoad

HARMLESS = frozenset(
    {"user-agent", "accept-language", "x-request-id", "x-correlation-id", "traceparent"}
)
RETRIES = 5  # throttled answers waited out per request
LATE_FILE = "late.json"  # the operations that ran past their deadline, by label
LONGEST_WAIT = 60.0  # seconds: a longer Retry-After is cut to this
# Closed before any answer (httpx's spellings, and requests' for schemathesis' session).
CLOSED_EARLY = (
    httpx.RemoteProtocolError,
    httpx.ReadError,
    httpx.WriteError,
    requests.ConnectionError,
)


class Throttled(NotJudged):
    """The target still throttled a request after RETRIES waits: the check is not judged."""


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
    deadline: float = 10.0  # seconds for a whole answer (--request-timeout)
    cap: int = 16 * 1024 * 1024  # bytes of one answer read at most (--max-response-size)
    waits: list[tuple[str, float]] = field(default_factory=list)  # (operation, seconds) waited
    reconnects: list[str] = field(default_factory=list)  # operations sent again after a close
    sent: int = 0  # requests this process sent (each attempt)
    late: Deadlines = field(default_factory=lambda: Deadlines(SharedCounts(None)))
    runs: RunLoad = field(default_factory=lambda: RunLoad(SharedCounts(None)))
    _next: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _tls: ssl.SSLContext | None = field(default=None, repr=False)

    @classmethod
    def of(cls, settings: SuiteSettings, share: int = 1, shared: RunFolder | None = None) -> Policy:
        """The run's policy, from its settings; `share`: the pytest-xdist workers the rate limit
        is shared by; `shared`: the folder where the run's processes share their counts."""
        shared = shared or RunFolder()
        return cls(
            headers=dict(settings.header),
            ca_bundle=str(settings.ca_bundle) if settings.ca_bundle else None,
            insecure=settings.insecure,
            rate=settings.rate_limit,
            share=share,
            deadline=settings.request_timeout,
            cap=settings.max_response_size,
            late=Deadlines(
                shared.counts(LATE_FILE),
                run_wait=settings.process_timeout,
                run_waits=frozenset({RUN_WAIT}),
            ),
            runs=RunLoad(
                shared.counts(runs_in_flight.LOAD_FILE),
                follow_for=settings.process_timeout,
            ),
        )

    def __post_init__(self) -> None:
        for name, value in self.headers.items():
            if name.lower() not in HARMLESS:
                redact.register(value)

    @property
    def verify(self) -> ssl.SSLContext:
        """The TLS context of every httpx client, made once: each new one loads the CA bundle
        again (about 15 ms; a run makes a dozen clients)."""
        if self._tls is None:
            verify: ssl.SSLContext | bool = not self.insecure
            if verify and self.ca_bundle:
                verify = ssl.create_default_context(cafile=self.ca_bundle)
            self._tls = httpx.create_ssl_context(verify=verify)
        return self._tls

    @property
    def requests_verify(self) -> bool | str:
        """The same, as requests (schemathesis' session) spells it."""
        return False if self.insecure else (self.ca_bundle or True)

    def prepare(self, headers: MutableMapping[str, Any]) -> None:
        """Add the extra headers a request lacks, then wait for its turn under the rate limit."""
        for name, value in self.headers.items():
            if name not in headers:
                headers[name] = value
        with self._lock:
            self.sent += 1
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
        except CLOSED_EARLY as exc:
            if isinstance(exc, requests.Timeout):  # a connect timeout: the target is not there
                raise
            with self._lock:
                self.reconnects.append(label)
            return attempt()


class PolicyTransport(httpx.BaseTransport):
    """httpx's side of the policy: headers, rate limit, throttled answers waited out."""

    def __init__(self, policy: Policy, inner: httpx.BaseTransport) -> None:
        self.policy, self.inner = policy, inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        def attempt() -> httpx.Response:
            self.policy.prepare(request.headers)
            request.extensions[answer_bounds.SENT_AT] = (
                time.monotonic()
            )  # the door's deadline starts
            return self.inner.handle_request(request)

        label = f"{request.method} {request.url.path}"
        answer: httpx.Response = self.policy.send(
            label, attempt, lambda r: (r.status_code, r.headers)
        )
        return answer

    def close(self) -> None:
        self.inner.close()


class PolicyAdapter(HTTPAdapter):
    """requests' side of the policy, with the door: every answer that is not an event stream is
    read whole under the same bounds as httpx's (schemathesis asks each as a stream, then reads
    it whole); an event stream is left to its reader, capped."""

    def __init__(self, policy: Policy) -> None:
        super().__init__()
        self.policy = policy

    def send(  # type: ignore[override]
        self, request: requests.PreparedRequest, stream: bool = False, **kwargs: object
    ) -> requests.Response:
        operation, url = requests_bounds.requests_label(request), str(request.url)
        plain = running_test.plain_in_test(request.headers)
        late = self.policy.late
        headers = {k: str(v) for k, v in request.headers.items()}
        place = runs_in_flight.take_place(self.policy.runs, operation, url, headers, self._read)
        limit = late.deadline_of(operation, self.policy.deadline, place.ahead, place.longest_run)
        fault: AnswerFault | None = None
        try:
            held = late.ask(operation, limit, plain)
        except BaseException:
            place.give()  # not sent
            raise
        try:  # as a stream whatever `stream` says (the door)
            return self._send(request, kwargs, limit, place)
        except BaseException as missed:
            place.left_running()  # no whole answer: its run, if one was made, may go on
            if isinstance(missed, AnswerFault):
                fault = place.delayed(missed, operation in late.run_waits)
            raise
        finally:
            if late.done(operation, held, fault, plain) and fault is not None:
                running_test.missed(fault)

    def _read(self, url: str, headers: Mapping[str, str]) -> tuple[int, Any]:
        """GET `url` for a run's follower (runs_in_flight.py), under the plain deadline and no other
        bound of the run: no place, no deadline counted, no trail outside a test."""
        sent = requests.Request("GET", url, headers=dict(headers)).prepare()
        deadline = observe.Deadline(self.policy.deadline)
        answer = self._send(sent, {"timeout": self.policy.deadline}, deadline)
        return answer.status_code, getattr(answer, answer_bounds.JSON_VALUE, None)

    def _send(
        self,
        request: requests.PreparedRequest,
        kwargs: dict[str, object],
        limit: float,
        place: runs_in_flight.RunPlace | None = None,
    ) -> requests.Response:
        started = time.monotonic()
        kwargs["verify"] = self.policy.requests_verify
        if limit > self.policy.deadline:  # a grown deadline: the connection waits for it too
            kwargs["timeout"] = limit

        def attempt() -> requests.Response:
            nonlocal started
            self.policy.prepare(request.headers)
            started = time.monotonic()
            return super(PolicyAdapter, self).send(request, stream=True, **kwargs)  # type: ignore[arg-type]

        label = f"{request.method} {urlsplit(str(request.url)).path}"
        entry = requests_bounds.requests_entry(request)
        try:
            response: requests.Response = self.policy.send(
                label, attempt, lambda r: (r.status_code, r.headers)
            )
        except requests.Timeout:
            entry.fault = SILENT
            what = f"no answer within {observe.said(limit)}"
            label = requests_bounds.requests_label(request)
            evidence = requests_bounds.requests_evidence(request, None)
            raise AnswerFault(SILENT, f"{label}: {what}", evidence) from None
        except requests.ConnectionError as exc:
            entry.fault = CUT
            what = f"the connection closed without an answer ({type(exc).__name__})"
            label = requests_bounds.requests_label(request)
            evidence = requests_bounds.requests_evidence(request, None)
            raise AnswerFault(CUT, f"{label}: {what}", evidence) from None
        requests_bounds.read_requests_body(
            request,
            response,
            started=started,
            deadline=limit,
            cap=self.policy.cap,
            entry=entry,
            place=place or runs_in_flight.RunPlace(None),
        )
        return response
