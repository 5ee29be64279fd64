"""Reading and checking request input for the knowledge, files and conversations routes.

Bodies are parsed by hand rather than by pydantic so that every rule is explicit: no silent
coercion ("5" is not a number, true is not a number), a 400 that names the field, and no value
that could make the JSON answer fail later (NaN, infinities, lone surrogates, absurd nesting).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse

from .errors import bad_request

MAX_DEPTH = 64  # deeper JSON is junk here, and deep trees are costly to walk and store

Cleaner = Callable[[Any, str], Any]  # (value, field name) -> cleaned value, or raises a 400

_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")

# A count (limit, offset) the database can hold with another added to it (SQLite: 64 bits).
MAX_COUNT = 2**62


def respond(content: Any, status: int = 200) -> JSONResponse:
    """A JSON answer (json.dumps directly: no recursive re-encoding of stored documents)."""
    return JSONResponse(content, status_code=status)


async def json_body(request: Request, *, required: bool) -> Any:
    """The parsed JSON body. An absent optional body reads as `{}`; `null` is never a body, nor is
    whitespace (not a JSON text, RFC 8259 §2: a body was sent, and it is not JSON)."""
    raw = await request.body()
    if not raw:
        if required:
            bad_request("request body is required")
        return {}
    try:
        value = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except UnicodeDecodeError:
        bad_request("request body is not valid UTF-8")
    except (ValueError, RecursionError):  # also huge integer literals and absurd nesting
        bad_request("request body is not valid JSON")
    _check_tree(value)
    if value is None:
        bad_request("request body must not be null")
    return value


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _check_tree(root: Any) -> None:
    """Reject what JSON parsing lets through but a JSON answer cannot carry back."""
    stack: list[tuple[Any, int]] = [(root, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            bad_request(f"request body is nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, str):
            _check_text(value)
        elif isinstance(value, float) and not math.isfinite(value):
            bad_request("request body holds a number out of range")
        elif isinstance(value, dict):
            for key, item in value.items():
                _check_text(key)
                stack.append((item, depth + 1))
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)


def _check_text(text: str) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            bad_request("request body holds an unpaired UTF-16 surrogate")


# --- field checks ---------------------------------------------------------------------------


def string(value: Any, name: str) -> str:
    if not isinstance(value, str):
        bad_request(f"{name} must be a string")
    return value


def uuid_string(value: Any, name: str) -> str:
    if not isinstance(value, str) or not _UUID.match(value):
        bad_request(f"{name} must be a UUID string")
    return value


def one_of(*allowed: str) -> Cleaner:
    def check(value: Any, name: str) -> str:
        if not isinstance(value, str) or value not in allowed:
            bad_request(f"{name} must be one of {', '.join(allowed)}")
        return str(value)

    return check


def number(value: Any, name: str) -> int | float:
    # bool is an int in Python but not a number in JSON
    if isinstance(value, bool) or not isinstance(value, int | float):
        bad_request(f"{name} must be a number")
    return value


def count(value: Any, name: str) -> int:
    """An integer (2.0 is one too, as in JSON Schema) read as a count; negatives count as 0."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        bad_request(f"{name} must be an integer")
    if value > MAX_COUNT:
        bad_request(f"{name} must be at most {MAX_COUNT}")
    return max(0, value)


def any_object(value: Any, name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        bad_request(f"{name} must be an object")
    return value


def any_json(value: Any, name: str) -> Any:
    return value


def obj(fields: Mapping[str, Cleaner]) -> Cleaner:
    """An object whose known fields are checked; unknown fields are dropped."""

    def check(value: Any, name: str) -> dict[str, Any]:
        return clean(value, fields, name)

    return check


def clean(body: Any, fields: Mapping[str, Cleaner], name: str = "body") -> dict[str, Any]:
    """The known fields of a JSON object, each checked; unknown fields are ignored."""
    if not isinstance(body, dict):
        bad_request(f"{name} must be a JSON object")
    prefix = "" if name == "body" else f"{name}."
    return {key: check(body[key], prefix + key) for key, check in fields.items() if key in body}


def query_number(raw: str, name: str) -> int:
    """A numeric query parameter read as a count (see whole_number)."""
    try:
        value = float(raw.strip())
    except ValueError:
        bad_request(f"{name} must be a number")
    if not math.isfinite(value):
        bad_request(f"{name} must be a finite number")
    if value > MAX_COUNT:
        bad_request(f"{name} must be at most {MAX_COUNT}")
    return max(0, int(value))
