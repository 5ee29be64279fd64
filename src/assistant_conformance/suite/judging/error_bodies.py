"""What an answer is: a result, or an error object under a success status.

Some servers answer an internal fault with a 2xx and a body `{"message": "<error text>"}` (the
deployed system does, seen running). A 2xx is not a success until its body says so: an answer made
of error keys alone, one of them holding text, is an error whatever its status.
"""

from __future__ import annotations

import httpx

from assistant_conformance.suite.http.exchange import describe

# The keys of an error object (NestJS, LangGraph, FastAPI, Express): an answer made of these alone
# with a message in it is an error, whatever its status.
ERROR_KEYS = frozenset({"message", "error", "statusCode", "status_code", "detail", "__error__"})
ERROR_KEYS |= {"code", "errors", "name", "stack", "status", "path", "timestamp"}


def error_in(response: httpx.Response) -> str | None:
    """The message of a 2xx answer that is an error object rather than a result, else None."""
    if not 200 <= response.status_code < 300:
        return None
    try:
        body = response.json()
    except ValueError:
        return None
    return error_message(body)


def error_message(body: object) -> str | None:
    """The message of a JSON body that is an error object (only ERROR_KEYS, one holding text)."""
    if not isinstance(body, dict) or not body or not set(body) <= ERROR_KEYS:
        return None
    for key in ("message", "error", "detail", "__error__"):
        if isinstance(body.get(key), str | dict | list) and body.get(key):
            return describe(body[key])[:300]
    return None
