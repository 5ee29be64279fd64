"""Request parsing shared by the threads, runs, assistants and store routes.

Bodies are read by hand (not by FastAPI) because the contract leaves them optional: an absent or
empty body means "no options"; a JSON `null` is a body that is not an object. Anything that is
not a JSON object, or does not fit its model, is a 400 naming the field; nothing is stored
before parsing succeeds.
"""

from __future__ import annotations

from typing import Any, TypeVar

from fastapi import Request
from pydantic import BaseModel, ConfigDict, ValidationError

from ._input import json_body
from .db import Doc
from .errors import bad_request

M = TypeVar("M", bound=BaseModel)


class Options(BaseModel):
    """Base of request bodies: unknown fields are kept, types are not coerced ("5" is no int)."""

    model_config = ConfigDict(extra="allow", strict=True)


async def parse_body(request: Request, model: type[M]) -> M:
    """The body validated against `model`; absent and empty bodies count as `{}`. Parsed by the
    one reader of request bodies (`_input.json_body`: strict JSON, finite numbers only)."""
    data = await json_body(request, required=False)
    if not isinstance(data, dict):
        bad_request("body must be a JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        bad_request(describe_validation(exc))


def describe_validation(exc: ValidationError) -> str:
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
