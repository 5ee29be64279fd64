"""The target under test: a given deployment, or the embedded reference server."""

from __future__ import annotations

import socket
import ssl
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from assistant_conformance.contract.resources import Ask, preflight_reads
from assistant_conformance.reference.connectors import ConnectError, Endpoint, ReferenceConnector
from assistant_conformance.report import redact
from assistant_conformance.suite.config.settings import SuiteSettings
from assistant_conformance.suite.http import absent, clients, strictjson
from assistant_conformance.suite.http.observe import SILENT, AnswerFault
from assistant_conformance.suite.http.policy import Policy

# The embedded reference's pause before each streamed token: what the run checks need and no more
# (a cancel lands after the 3rd of 200 tokens, 1 s of run left; a join follows a drop at most at
# token 60 of 80, 100 ms left). Every millisecond is waited for, run after run.
EMBEDDED_TOKEN_MS = 5


def embedded_reference(principals: int = 2, wait: bool = True) -> ReferenceConnector:
    """The suite's own target when none is given: the reference, on loopback, with random tokens
    of `principals` principals (`wait=False`: launched, not waited for; shared_reference.py)."""
    return ReferenceConnector(EMBEDDED_TOKEN_MS, principals, wait, prefix="embedded")


class HarnessError(RuntimeError):
    """The suite cannot run against this target; not a conformance finding. One readable line."""


@dataclass
class Target:
    base_url: str
    token: str
    alt_token: str | None
    server: Endpoint | None = None  # set when this process started the reference
    embedded: bool = False  # the suite's own reference (this process's, or the spread run's)
    # The read the pre-flight found answered (method, path, JSON body or None), and the
    # operations it found absent on the way (suite/http/absent.py).
    first_read: tuple[str, str, Any] = field(default_factory=lambda: as_sent(preflight_reads()[0]))
    lacking: list[absent.Absence] = field(default_factory=list)

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()


def remote(settings: SuiteSettings) -> Target:
    """The target --base-url names (the options were checked: a token comes with it)."""
    assert settings.base_url and settings.token is not None
    return Target(settings.base_url.rstrip("/"), settings.token, settings.alt_token)


def open_target(
    settings: SuiteSettings,
    workdir: Path,
    policy: Policy,
    shared: tuple[str, str, str] | None = None,
) -> Target:
    """The target; `shared`: the reference a spread run's controller launched (its URL, tokens)."""
    if settings.base_url:
        target = remote(settings)
    elif shared is not None:
        target = Target(*shared, embedded=True)
    else:
        try:
            server = embedded_reference().start(workdir)
        except ConnectError as exc:
            raise HarnessError(str(exc)) from None
        target = Target(server.base_url, server.token, server.alt_token, server, embedded=True)
    redact.register(target.token, "ASSISTANT_API_TOKEN")
    redact.register(target.alt_token, "ASSISTANT_API_ALT_TOKEN")
    try:
        preflight(target, policy)
    except HarnessError:
        target.stop()
        raise
    return target


GATEWAY_STATUSES = (502, 503, 504)  # a proxy's answers: nothing behind it answered


def probe(target: Target, policy: Policy, token: str | None = None) -> httpx.Response:
    """The one read every run starts with (the first of the pre-flight's reads the target
    answers as this API does), and asks again when its token keeps being refused; with `token`
    in the run's stead, a read any principal may make."""
    method, path, body = target.first_read
    with clients.client(policy, target.base_url, token or target.token) as client:
        return _send(client, method, path, body)


def as_sent(read: Ask) -> tuple[str, str, Any]:
    """A read as the pre-flight sends it: method, path, JSON body (None: none)."""
    return read.route.method, read.route.path, read.body


def _send(client: httpx.Client, method: str, path: str, body: Any) -> httpx.Response:
    return client.request(method, path) if body is None else client.request(method, path, json=body)


def preflight(target: Target, policy: Policy) -> None:
    """Reach the target with the token, so a bad setup stops the run with one line: no answer at
    all, the token refused, or no read answered as this API does (a wrong address). Operations
    absent on a target that does answer are findings of the run (`target.lacking`). It sends the
    reads without path parameters and without effect of contract/resources.py, in order, until
    one answers as this API does (on a complete server, the first alone). A body the document
    leaves unspecified is the least the suite reads into it; none: no body (as the reference
    calls)."""
    seen: list[tuple[str, httpx.Response]] = []
    with clients.client(policy, target.base_url, target.token) as client:
        for read in preflight_reads():
            method, path, body = as_sent(read)
            label = read.route.label
            try:
                response = _send(client, method, path, body)
            except (httpx.HTTPError, AnswerFault) as exc:
                if not seen:  # the first read got no answer: no use asking more
                    raise HarnessError(_no_answer(target.base_url, label, exc, policy)) from None
                continue  # this operation's fault is for its tests to find
            if answers_as_the_api(response):
                target.first_read = (method, path, body)
                target.lacking = [a for label, r in seen if (a := _absence(label, r))]
                return
            seen.append((label, response))
    refused = [r.status_code for _, r in seen if r.status_code in (401, 403)]
    if refused:
        raise HarnessError(
            f"target {target.base_url} rejects the token (HTTP {refused[0]}): check --token"
        )
    answered = ", ".join(f"{label} -> {r.status_code}" for label, r in seen)
    raise HarnessError(
        f"target {target.base_url} answers none of the API's reads as the API does ({answered}): "
        "is --base-url the root of the API (without /api/ai)?"
    )


def round_trip(target: Target, policy: Policy, samples: int = 2) -> float:
    """Seconds one request takes on a kept connection: the pre-flight's read (found by
    `preflight`) sent `samples` times on one client, the fastest counted (the first pays the
    connection and its TLS handshake)."""
    method, path, body = target.first_read
    with clients.client(policy, target.base_url, target.token) as client:
        times = []
        for _ in range(samples):
            started = time.monotonic()
            _send(client, method, path, body)
            times.append(time.monotonic() - started)
    return min(times)


def answers_as_the_api(response: httpx.Response) -> bool:
    """An answer of this API's: JSON, neither a refused token nor an operation absent (suite/
    absent.py), nor a gateway's (nothing behind it answered)."""
    status = response.status_code
    if status in (401, 403, *GATEWAY_STATUSES) or absent.unimplemented(response):
        return False
    return bool(response.content) and strictjson.read(response.content)[0] is not None


def _absence(label: str, response: httpx.Response) -> absent.Absence | None:
    why = absent.unimplemented(response)
    op = absent.operation(*label.split(" ", 1))
    if why is None or op is None:
        return None
    return absent.Absence(op.label, op.status_requirement, why, absent.PREFLIGHT)


def _no_answer(base_url: str, label: str, exc: Exception, policy: Policy) -> str:
    """One line for the first read getting no (whole) answer."""
    timeout = policy.deadline
    if isinstance(exc, httpx.HTTPError):
        return _unreachable(base_url, exc)
    assert isinstance(exc, AnswerFault)  # the door's bounds: no (whole) answer within them
    if isinstance(exc.__context__, httpx.ConnectTimeout):
        return f"no connection to {base_url} within {timeout:g} s"
    if exc.kind == SILENT:
        return (
            f"target {base_url} accepted the connection but did not answer within "
            f"{timeout:g} s (--request-timeout)"
        )
    return f"target {base_url} gave no usable answer to {label}: {exc.what.partition(': ')[2]}"


def _unreachable(base_url: str, exc: httpx.HTTPError) -> str:
    """One line for a request that got no HTTP answer: DNS, refused connection, TLS, or other."""
    host = httpx.URL(base_url).host
    for cause in _chain(exc):
        if isinstance(cause, socket.gaierror):
            return f"cannot resolve the host name {host!r} of {base_url} (DNS): {cause.strerror}"
        if isinstance(cause, ConnectionRefusedError):
            return f"cannot reach target {base_url}: connection refused (nothing listens there)"
        if isinstance(cause, ssl.SSLError):
            reason = getattr(cause, "reason", None) or type(cause).__name__
            return (
                f"TLS with {base_url} failed ({reason}): the port may not speak https, "
                "or its certificate is not trusted"
            )
    reason = redact.text(str(exc) or type(exc).__name__)
    return f"cannot reach target {base_url}: {reason}"


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen
