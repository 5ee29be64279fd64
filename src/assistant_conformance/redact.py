"""Secrets never leave the process: every text the suite prints or writes passes through here."""

from __future__ import annotations

import re

MASK = "[REDACTED]"
_secrets: dict[str, str | None] = {}  # secret -> environment variable a reproduction reads it from
# A credential after "Authorization:" (not the curl placeholder); stops before quotes and escapes
# so that masking inside serialised JSON keeps it valid.
_AUTH_HEADER = re.compile(
    r"(?i)(authorization\s*[:=]\s*['\"]?)(?!(?:bearer\s+)?\$ASSISTANT_API_TOKEN)"
    r"(bearer\s+|basic\s+)?[^\s'\",}\\]+"
)
MIN_SECRET_LENGTH = 8


def register(secret: str | None, env_name: str | None = None) -> None:
    """Remember a secret (token, alt token, chat-kit client secret) so it is masked everywhere.

    `env_name` names the variable a reproduction line reads the secret from instead.
    """
    if secret and len(secret) >= MIN_SECRET_LENGTH:
        _secrets[secret] = env_name


def as_variable(value: str) -> str:
    """The value with each registered secret written as its `$VARIABLE`, or masked without one."""
    for secret, env_name in sorted(_secrets.items(), key=lambda kv: len(kv[0]), reverse=True):
        value = value.replace(secret, f"${env_name}" if env_name else MASK)
    return value


def text(value: str) -> str:
    """The value with every registered secret and every Authorization credential masked."""
    for secret in sorted(_secrets, key=len, reverse=True):
        value = value.replace(secret, MASK)
    return _AUTH_HEADER.sub(lambda m: f"{m.group(1)}{m.group(2) or ''}{MASK}", value)


def headers(values: dict[str, str]) -> dict[str, str]:
    return {k: (MASK if k.lower() == "authorization" else text(v)) for k, v in values.items()}
