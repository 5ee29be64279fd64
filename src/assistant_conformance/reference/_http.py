"""Request parsing shared by the threads, runs, assistants and store routes.

Bodies are read by hand (not by FastAPI) because the contract leaves them optional: an absent or
empty body means "no options"; a JSON `null` is a body that is not an object. Anything that is
not a JSON object, or does not fit its model, is a 400 naming the field; nothing is stored
before parsing succeeds.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from fastapi import Request
from pydantic import BaseModel, ConfigDict, ValidationError

from .errors import bad_request

Doc = dict[str, Any]
M = TypeVar("M", bound=BaseModel)


class Options(BaseModel):
    """Base of request bodies: unknown fields are kept, types are not coerced ("5" is no int)."""

    model_config = ConfigDict(extra="allow", strict=True)


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are not JSON; stored, they would break every later JSON answer.
    raise ValueError(f"{name} is not valid JSON")


async def read_json(request: Request) -> Any:
    """The parsed body, or None when it is absent or empty."""
    raw = await request.body()
    if not raw.strip():
        return None
    try:
        data = json.loads(raw, parse_constant=_reject_constant)
        # Lone surrogates parse but cannot be written back as UTF-8.
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except (ValueError, RecursionError, UnicodeError):
        bad_request("body is not valid JSON")
    if data is None:
        bad_request("body must be a JSON object, not null (send no body for no options)")
    if _depth(data) > MAX_DEPTH:
        bad_request(f"body nests deeper than {MAX_DEPTH} levels")
    return data


MAX_DEPTH = 64  # keeps every later recursive walk (filters, JSON encoding) far from the limit


def _depth(data: Any) -> int:
    """Nesting depth of a JSON value, computed without recursion."""
    deepest, pending = 0, [(data, 1)]
    while pending:
        value, level = pending.pop()
        deepest = max(deepest, level)
        if isinstance(value, dict):
            pending.extend((v, level + 1) for v in value.values())
        elif isinstance(value, list):
            pending.extend((v, level + 1) for v in value)
    return deepest


async def parse_body(request: Request, model: type[M]) -> M:
    """The body validated against `model`; absent and empty bodies count as `{}`."""
    data = await read_json(request)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        bad_request("body must be a JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        bad_request(describe(exc))


def describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        field = ".".join(str(p) for p in err["loc"]) or "body"
        parts.append(f"{field}: {err['msg']}")
    return "; ".join(parts)


def query_int(request: Request, name: str, default: int | None = None) -> int:
    """A non-negative integer query parameter; required when there is no default."""
    raw = request.query_params.get(name)
    if raw is None or (raw == "" and default is not None):
        if default is None:
            bad_request(f"query parameter {name} is required")
        return default
    text = raw.strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        bad_request(f"query parameter {name} must be a non-negative integer")
    return int(text)


def query_bool(request: Request, name: str, default: bool) -> bool:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in ("1", "true", "yes"):
        return True
    if value in ("0", "false", "no"):
        return False
    bad_request(f"query parameter {name} must be a boolean")


def query_choice(request: Request, name: str, choices: tuple[str, ...], default: str) -> str:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    if raw not in choices:
        bad_request(f"query parameter {name} must be one of {', '.join(choices)}")
    return raw


def is_subset(expected: Any, actual: Any) -> bool:
    """True when every key of `expected` is in `actual` with a matching value (recursively)."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and is_subset(value, actual[key]) for key, value in expected.items()
        )
    return bool(expected == actual)


def page(items: list[Doc], limit: int, offset: int) -> list[Doc]:
    return items[offset : offset + limit]


def sort_docs(items: list[Doc], sort_by: str | None, sort_order: str | None) -> list[Doc]:
    """Stable sort on one field; missing values sort first."""
    if not sort_by:
        return items
    reverse = sort_order == "desc"
    return sorted(
        items, key=lambda d: (d.get(sort_by) is not None, str(d.get(sort_by))), reverse=reverse
    )
