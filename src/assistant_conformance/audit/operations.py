"""Which documented operation an exchange is, and what the document says of its answer.

An exchange is matched by its method and path template (contract/openapi.py): by default wherever
the document's `/api/ai` paths appear in its path; with a base path, the path after it is read as
under `/api/ai` (a server mounted at `/` or behind a gateway prefix). An exchange that matches no
operation is counted, not judged.

The response shapes are the document's own success schemas (spec/openapi.yaml), checked with
jsonschema as schemathesis checks them in a run: extra fields are fine, the identifiers the
document names must be there with their types.
"""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any

import httpx
import jsonschema

from assistant_conformance.contract.openapi import (
    Operation,
    by_label,
    document,
    match_path,
    resolve,
)
from assistant_conformance.suite.http import strictjson, trail
from assistant_conformance.suite.judging import checks

DOCUMENT_PREFIX = "/api/ai"


@lru_cache(maxsize=64)  # an exchange's URL is read by several rules in turn
def url_path(url: str) -> str | None:
    """A URL's path (None: a URL that cannot be read, which no operation is)."""
    try:
        return httpx.URL(url).path
    except (httpx.InvalidURL, TypeError, ValueError):
        return None


def document_path(entry: trail.Entry, base_path: str | None = None) -> str | None:
    """The request's path as the document writes it (None: outside the base path, or none)."""
    path = url_path(entry.url)
    if path is None or base_path is None:
        return path
    base = "/" + base_path.strip("/") if base_path.strip("/") else ""
    if not (path == base or path.startswith(base + "/")):
        return None
    return DOCUMENT_PREFIX + path[len(base) :]


def operation_of(entry: trail.Entry, base_path: str | None = None) -> Operation | None:
    """The documented operation of an exchange (None: off the document)."""
    path = document_path(entry, base_path)
    found = match_path(path) if path is not None else None
    return by_label().get(f"{entry.method.upper()} {found[0]}") if found else None


def path_values(entry: trail.Entry, op: Operation, base_path: str | None = None) -> list[str]:
    """The values of an operation's path parameters in a request, in order."""
    path = document_path(entry, base_path)
    found = match_path(path) if path is not None else None
    return [found[1][name] for name in op.path_params] if found else []


def header_value(headers: dict[str, str], name: str) -> str:
    return {k.lower(): v for k, v in headers.items()}.get(name, "")


def last_event_id(entry: trail.Entry) -> str:
    return header_value(entry.request_headers, "last-event-id").strip()


def run_of(entry: trail.Entry, op: Operation, base_path: str | None = None) -> str | None:
    """The run a stream is of: the join's path, else where the answer says (Content-Location or
    Location, as `.../runs/{run_id}`), else the `run_id` of its first event's data."""
    if "run_id" in op.path_params:
        return path_values(entry, op, base_path)[op.path_params.index("run_id")]
    for name in ("content-location", "location"):
        where = header_value(entry.response_headers, name).split("?")[0].rstrip("/")
        if "/runs/" in where:
            return where.rsplit("/runs/", 1)[1].split("/")[0] or None
    events = checks.events_of(entry)
    data = strictjson.lenient(events[0].data.encode()) if events else None
    value = data.get("run_id") if isinstance(data, dict) else None
    return value if isinstance(value, str) and value else None


# --- the documented response shapes -------------------------------------------------------------


def success_schema(op: Operation, status: int) -> dict[str, Any] | None:
    """The JSON schema the document gives the answer `status` of `op` (None: none given)."""
    raw = document()["paths"][op.path][op.method.lower()]["responses"]
    response = resolve(raw.get(str(status)) or raw.get(f"{status // 100}XX") or {})
    content = (response or {}).get("content", {})
    return content.get("application/json", {}).get("schema")


@cache
def _validator(label: str, status: int) -> jsonschema.Draft202012Validator | None:
    op = by_label()[label]
    schema = success_schema(op, status)
    if schema is None:
        return None
    # The document's components beside the schema: its `#/components/...` references resolve.
    root = {"components": document()["components"], "allOf": [schema]}
    return jsonschema.Draft202012Validator(root)


def shape_problem(op: Operation, status: int, body: Any) -> str | None:
    """Why a JSON answer does not have the documented shape (None: it has it, or none is given)."""
    validator = _validator(op.label, status)
    if validator is None:
        return None
    wrong = jsonschema.exceptions.best_match(validator.iter_errors(body))
    if wrong is None:
        return None
    where = "/".join(str(p) for p in wrong.absolute_path) or "the body"
    return f"at {where}: {wrong.message[:300]}"


def has_shape(op: Operation, status: int) -> bool:
    return _validator(op.label, status) is not None
