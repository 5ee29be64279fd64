"""Secrets never leave the process: every text the suite prints or writes passes through here."""

from __future__ import annotations

import re

MASK = "[REDACTED]"
_secrets: set[str] = set()
# A credential after "Authorization:" (not the curl placeholder); stops before quotes and escapes
# so that masking inside serialised JSON keeps it valid.
_AUTH_HEADER = re.compile(
    r"(?i)(authorization\s*[:=]\s*['\"]?)(?!(?:bearer\s+)?\$ASSISTANT_API_TOKEN)"
    r"(bearer\s+|basic\s+)?[^\s'\",}\\]+"
)
MIN_SECRET_LENGTH = 8


def register(secret: str | None) -> None:
    """Remember a secret (token, alt token, chat-kit client secret) so it is masked everywhere."""
    if secret and len(secret) >= MIN_SECRET_LENGTH:
        _secrets.add(secret)


def text(value: str) -> str:
    """The value with every registered secret and every Authorization credential masked."""
    for secret in sorted(_secrets, key=len, reverse=True):
        value = value.replace(secret, MASK)
    return _AUTH_HEADER.sub(lambda m: f"{m.group(1)}{m.group(2) or ''}{MASK}", value)


def headers(values: dict[str, str]) -> dict[str, str]:
    return {k: (MASK if k.lower() == "authorization" else text(v)) for k, v in values.items()}
