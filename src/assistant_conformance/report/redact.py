"""Secrets never leave the process: every text the suite prints or writes passes through here.

Three nets, each catching what the one before can miss:
- every registered secret (the tokens, each chat-kit client secret) is masked wherever it is,
  also where a cut excerpt ends inside one (its first MIN_SECRET_LENGTH characters or more);
- the credential after any `Authorization:` is masked, registered or not;
- the value of any JSON field named like a credential (`client_secret`, `access_token`, ...) is
  masked, so a secret a target hands out is hidden even before a test registers it.

The registered secrets belong to one run (`Secrets`), made active for it with `scope` or
`activate` (a context variable: two runs in one process never share theirs; a thread the run
starts is given the run's context). Without an active run only the last two nets apply, and
registering a secret is an error: it would be masked nowhere.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from contextvars import ContextVar, Token
from typing import Any
from urllib.parse import quote

MASK = "[REDACTED]"
MIN_SECRET_LENGTH = 8  # a shorter secret could not be masked without masking ordinary text
# A credential after "Authorization:" (not the curl placeholder); stops before quotes and escapes
# so that masking inside serialised JSON keeps it valid.
_AUTH_HEADER = re.compile(
    r"(?i)(authorization\s*[:=]\s*['\"]?)(?!(?:bearer\s+)?\$ASSISTANT_API_(?:ALT_)?TOKEN)"
    r"(bearer\s+|basic\s+)?[^\s'\",}\\]+"
)
# "client_secret": "..." (also escaped inside a JSON string, and cut before its closing quote).
_SECRET_FIELD = re.compile(
    r"(?i)((?:\\?[\"'])(?:client_secret|secret|access_token|refresh_token|id_token|api_key|apikey"
    r"|password)(?:\\?[\"'])\s*:\s*(?:\\?[\"']))((?:[^\"'\\]|\\(?![\"']))+)"
)
_SECRET_KEYS = frozenset(
    ("client_secret", "secret", "access_token", "refresh_token", "id_token", "api_key", "apikey")
)


class Secrets:
    """The secrets of one run: secret -> the environment variable a reproduction reads it from."""

    def __init__(self) -> None:
        self._known: dict[str, str | None] = {}
        self._lock = threading.Lock()

    def register(self, secret: str | None, env_name: str | None = None) -> None:
        """Remember a secret (token, alt token, chat-kit client secret): masked everywhere;
        `env_name` names the variable a reproduction line reads it from instead."""
        if not secret or len(secret) < MIN_SECRET_LENGTH:
            return
        with self._lock:
            for form in dict.fromkeys((secret, quote(secret, safe=""))):  # as sent, as in a URL
                if env_name or form not in self._known:
                    self._known[form] = env_name

    def is_secret(self, value: str) -> bool:
        return value in self._known

    def variable_of(self, value: str) -> str | None:
        """The environment variable a registered secret is read from (None: none, or unknown)."""
        return self._known.get(value)

    def contains(self, value: str) -> bool:
        return any(secret in value for secret in list(self._known))

    def _mask(self, value: str, replace: dict[str, str]) -> str:
        for secret in sorted(replace, key=len, reverse=True):
            if secret in value:
                value = value.replace(secret, replace[secret])
        return self._mask_cut_tail(value)

    def _mask_cut_tail(self, value: str) -> str:
        """A text cut short (an excerpt) may end with the beginning of a secret: mask that too."""
        for secret in list(self._known):
            head = secret[:MIN_SECRET_LENGTH]
            start = value.find(head, max(0, len(value) - len(secret) + 1))
            while start != -1:
                if secret.startswith(value[start:]):
                    return value[:start] + MASK
                start = value.find(head, start + 1)
        return value

    def as_variable(self, value: str) -> str:
        """The value with each secret written as its `$VARIABLE`, or masked without one."""
        known = dict(self._known)
        return self._mask(value, {s: (f"${env}" if env else MASK) for s, env in known.items()})

    def text(self, value: str) -> str:
        """The value with every secret, Authorization credential and secret field masked."""
        if len(value) >= MIN_SECRET_LENGTH:  # shorter, it holds no secret nor the head of one
            value = self._mask(value, dict.fromkeys(list(self._known), MASK))
        value = _AUTH_HEADER.sub(lambda m: f"{m.group(1)}{m.group(2) or ''}{MASK}", value)
        return _SECRET_FIELD.sub(lambda m: f"{m.group(1)}{MASK}", value)


class _NoRun(Secrets):
    """Outside a run: nothing registered, and nothing may be (it would be masked nowhere)."""

    def register(self, secret: str | None, env_name: str | None = None) -> None:
        if secret and len(secret) >= MIN_SECRET_LENGTH:
            raise RuntimeError("a secret registered outside a run's redaction scope")


_NO_RUN = _NoRun()
_ACTIVE: ContextVar[Secrets | None] = ContextVar("assistant_conformance_secrets", default=None)


def active_secrets() -> Secrets:
    return _ACTIVE.get() or _NO_RUN


def activate(secrets: Secrets) -> Token[Secrets | None]:
    """Make `secrets` the run's, in this context (undo with `deactivate`)."""
    return _ACTIVE.set(secrets)


def deactivate(token: Token[Secrets | None]) -> None:
    _ACTIVE.reset(token)


@contextlib.contextmanager
def scope(secrets: Secrets | None = None) -> Iterator[Secrets]:
    """A block with its own secrets (a new set unless given)."""
    token = activate(secrets or Secrets())
    try:
        yield _ACTIVE.get() or _NO_RUN
    finally:
        deactivate(token)


def register(secret: str | None, env_name: str | None = None) -> None:
    active_secrets().register(secret, env_name)


def is_secret(value: str) -> bool:
    """Whether `value` is a registered secret (a credential the run holds)."""
    return active_secrets().is_secret(value)


def variable_of(value: str) -> str | None:
    return active_secrets().variable_of(value)


def contains_secret(value: str) -> bool:
    return active_secrets().contains(value)


def as_variable(value: str) -> str:
    return active_secrets().as_variable(value)


def text(value: str) -> str:
    return active_secrets().text(value)


def redacted(value: Any) -> Any:
    """The value with `text` applied to every string in it (a document, a record)."""
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        return {k: redacted(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redacted(v) for v in value]
    return value


def headers(values: dict[str, str]) -> dict[str, str]:
    return {k: (MASK if k.lower() == "authorization" else text(v)) for k, v in values.items()}


def exception(exc: BaseException) -> None:
    """Mask secrets in an exception's message in place (its args), e.g. before a report shows it."""
    if not contains_secret(str(exc)) and not any(
        isinstance(a, str) and contains_secret(a) for a in exc.args
    ):
        return
    with contextlib.suppress(AttributeError, TypeError):  # exotic exception types
        exc.args = tuple(text(a) if isinstance(a, str) else a for a in exc.args)
        if isinstance(getattr(exc, "msg", None), str):  # pytest's outcomes (skip, fail, exit)
            exc.msg = text(exc.msg)  # type: ignore[attr-defined]


def register_fields(value: object) -> None:
    """Register the string value of every credential-named field of a JSON answer as a secret."""
    pending, seen = [value], 0
    while pending and seen < 10_000:  # an answer is walked once, without recursion
        item = pending.pop()
        seen += 1
        if isinstance(item, dict):
            for key, field in item.items():
                if isinstance(field, str) and str(key).lower() in _SECRET_KEYS:
                    register(field)
                elif isinstance(field, dict | list):
                    pending.append(field)
        elif isinstance(item, list):
            pending.extend(item)
