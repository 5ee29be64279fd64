"""The target under test: a given deployment, or the embedded reference server."""

from __future__ import annotations

import secrets
import socket
import ssl
from dataclasses import dataclass
from pathlib import Path

import httpx

from assistant_conformance.reference import embedded
from assistant_conformance.report import redact
from assistant_conformance.suite.observe import SILENT, AnswerFault
from assistant_conformance.suite.settings import SuiteSettings
from assistant_conformance.suite.transport import Policy


class HarnessError(RuntimeError):
    """The suite cannot run against this target; not a conformance finding. One readable line."""


@dataclass
class Target:
    base_url: str
    token: str
    alt_token: str | None
    server: embedded.RunningServer | None = None  # set when the suite started the reference

    @property
    def embedded(self) -> bool:
        return self.server is not None

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()


def remote(settings: SuiteSettings) -> Target:
    """The target --base-url names (the options were checked: a token comes with it)."""
    assert settings.base_url and settings.token is not None
    return Target(settings.base_url.rstrip("/"), settings.token, settings.alt_token)


def open_target(settings: SuiteSettings, workdir: Path, policy: Policy) -> Target:
    if settings.base_url:
        target = remote(settings)
    else:
        token, alt = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        try:
            server = embedded.start([token, alt], workdir / "reference.db")
        except embedded.ServerStartError as exc:
            raise HarnessError(str(exc)) from None
        target = Target(server.base_url, token, alt, server)
    redact.register(target.token, "ASSISTANT_API_TOKEN")
    redact.register(target.alt_token, "ASSISTANT_API_ALT_TOKEN")
    try:
        preflight(target, policy)
    except HarnessError:
        target.stop()
        raise
    return target


def probe(target: Target, policy: Policy) -> httpx.Response:
    """The one read every run starts with, and asks again when its token keeps being refused."""
    with policy.client(target.base_url, target.token) as client:
        return client.post("/api/ai/threads/search", json={"limit": 1})


def preflight(target: Target, policy: Policy) -> None:
    """Reach the target once with the token, so a bad setup stops the run with one line."""
    timeout = policy.deadline
    try:
        response = probe(target, policy)
    except httpx.HTTPError as exc:
        raise HarnessError(_unreachable(target.base_url, exc)) from None
    except AnswerFault as fault:  # the door's bounds: no (whole) answer within them
        if isinstance(fault.__context__, httpx.ConnectTimeout):
            raise HarnessError(f"no connection to {target.base_url} within {timeout:g} s") from None
        if fault.kind == SILENT:
            raise HarnessError(
                f"target {target.base_url} accepted the connection but did not answer within "
                f"{timeout:g} s (--request-timeout)"
            ) from None
        raise HarnessError(
            f"target {target.base_url} gave no usable answer to POST /api/ai/threads/search: "
            f"{fault.what.partition(': ')[2]}"
        ) from None
    if response.status_code in (401, 403):
        raise HarnessError(
            f"target {target.base_url} rejects the token (HTTP {response.status_code}): "
            "check --token"
        )
    if response.status_code in (404, 405):
        raise HarnessError(
            f"target {target.base_url} answers HTTP {response.status_code} to POST "
            "/api/ai/threads/search: is --base-url the root of the API (without /api/ai)?"
        )


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
