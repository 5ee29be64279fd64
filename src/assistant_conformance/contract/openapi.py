"""The operations of spec/openapi.yaml as a table, for checks that must cover every operation.

Each row holds what the document declares: method, path template, operationId, tag, success
status, request body (required or not, media type, schema), required path/query/header
parameters, and whether the success answer is an event stream. `Operation.request` turns a row
into the arguments of one well-formed request: path parameters from real ids or placeholders,
required query parameters and headers with plausible values, and a sample body that carries a
marker, so that whatever a request wrongly creates can be found again.
"""

from __future__ import annotations

import base64
import re
import secrets
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache, lru_cache
from typing import Any

from assistant_conformance.contract.files import OPENAPI_PATH, read_yaml
from assistant_conformance.contract.resources import LIFETIME, LIFETIME_FIELD, id_key_at

METHODS = ("get", "put", "post", "delete", "patch")
KB_PREFIXES = r"/api/ai/(?:v1/kb|knowledges)"  # the two prefixes of one knowledge-base API
MARKER_KEY = "conformance_marker"
MARKED_STRINGS = ("name", "title", "content")  # sample bodies set these to the marker
MARKED_OBJECTS = ("metadata", "values")  # and these to {MARKER_KEY: marker}
HEADER_SAMPLES = {"last-event-id": "0"}


def placeholder() -> str:
    """An identifier that names nothing: a random UUID (servers may reject non-UUID ids early)."""
    return str(uuid.uuid4())


def utc_hour(offset_hours: int = 0) -> str:
    """A UTC hour as the deployed servers read `start`/`end`: `yyyy-MM-dd HH`."""
    return (datetime.now(UTC) + timedelta(hours=offset_hours)).strftime("%Y-%m-%d %H")


def basic_credential() -> str:
    return "Basic " + base64.b64encode(b"conformance:not-a-bearer-token").decode()


@dataclass(frozen=True)
class Operation:
    method: str  # upper case
    path: str
    operation_id: str
    tag: str
    success_status: int | None  # None: the document leaves it unspecified (any 2xx)
    body_required: bool
    body_media: str | None  # "application/json", "multipart/form-data", or None: no body
    path_params: tuple[str, ...]
    query_params: tuple[str, ...]  # required ones
    header_params: tuple[str, ...]  # required ones
    streaming: bool
    body_schema: dict[str, Any] | None = field(default=None, compare=False, hash=False, repr=False)
    tags: tuple[str, ...] = ()
    # The body the document mandates: "kb" (Knowledgebase), "bulk" (array of documents),
    # "process" (array of strings); "interpreted" where it leaves the body unspecified; "" none.
    body_kind: str = ""
    # x-requirements: what a finding on it is charged to, by kind (status, deleted, created,
    # query, content-type); suite/judging/schemathesis_charges.py reads them.
    requirements: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    # x-references: the query parameters whose values, and whether the body's strings, name
    # resources (a request follows the document only where they name what the run made)
    query_references: tuple[str, ...] = ()
    body_references: bool = False

    @property
    def status_requirement(self) -> str:
        return self.requirements["status"]

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"

    @property
    def id_kind(self) -> str | None:
        """The resource `{id}` names here (resources.py's `id_key`: kb, context_file, assistant)."""
        return id_key_at(self.path) if "id" in self.path_params else None

    def key(self, param: str) -> str:
        """The key of `param` in an ids mapping (`id` is keyed by the resource it names)."""
        if param == "id" and self.id_kind is not None:
            return self.id_kind
        return param

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(self.key(p) for p in self.path_params)

    @property
    def target(self) -> str | None:
        """The key of the resource the operation acts on: the last path parameter."""
        return self.keys[-1] if self.path_params else None

    def url(self, ids: Mapping[str, str] | None = None) -> str:
        """The path with each parameter taken from `ids` (by `key`), else a placeholder."""
        url = self.path
        for param in self.path_params:
            value = (ids or {}).get(self.key(param)) or placeholder()
            url = url.replace("{" + param + "}", value)
        return url

    def request(
        self,
        ids: Mapping[str, str] | None = None,
        marker: str = "conformance",
        extra: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Keyword arguments of a well-formed request (`send(client, op, **these)`).

        `extra` gives body fields by name (e.g. `assistant_id`, `input`), `item` for the element
        of an array of strings, and query values by parameter name (e.g. `ids`).
        """
        extra = extra or {}
        args: dict[str, Any] = {"url": self.url(ids)}
        if self.query_params:
            args["params"] = {p: str(extra.get(p) or query_sample(p)) for p in self.query_params}
        if self.header_params:
            args["headers"] = {h: HEADER_SAMPLES.get(h, "0") for h in self.header_params}
        if self.body_media == "multipart/form-data":
            args["files"] = {"file": (f"{marker}.txt", f"{marker}\n".encode(), "text/plain")}
        elif self.body_media is not None and self.body_schema is not None:
            args["json"] = sample(self.body_schema, marker, extra)
            if self.body_kind == "kb":  # a server may keep names unique (the deployed one does)
                args["json"]["name"] = f"{marker}-{self.operation_id}-{secrets.token_hex(3)}"
        return args


def query_sample(name: str) -> str:
    samples = {"limit": "10", "offset": "0", "start": utc_hour(-24), "end": utc_hour(1)}
    return samples.get(name) or placeholder()


def sample(schema: Mapping[str, Any], marker: str, extra: Mapping[str, Any]) -> Any:
    """A body of the declared shape, marked (MARKED_STRINGS, MARKED_OBJECTS), a lifetime asked
    short (LIFETIME)."""
    if schema.get("type") == "array":
        items = schema.get("items", {})
        if items.get("type") == "string":
            return [extra.get("item", marker)]
        return [sample(items, marker, extra)]
    body: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        if name in extra:
            body[name] = extra[name]
        elif name in MARKED_STRINGS and prop.get("type") in (None, "string"):
            body[name] = marker
        elif name in MARKED_OBJECTS and prop.get("type") in (None, "object"):
            body[name] = {MARKER_KEY: marker}
        elif name == LIFETIME_FIELD:
            body[name] = LIFETIME
    return body


# --- reading the document ---------------------------------------------------------------------


@cache
def document() -> dict[str, Any]:
    return read_yaml(OPENAPI_PATH)


def resolve(node: Any) -> Any:
    """Follow a local `$ref` (repeatedly) to what it names."""
    doc = document()
    while isinstance(node, dict) and "$ref" in node:
        target: Any = doc
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def _schema(node: Any) -> Any:
    """A schema with `$ref`s resolved at its top, in its properties and in its items."""
    node = resolve(node)
    if not isinstance(node, dict):
        return node
    node = dict(node)
    if "items" in node:
        node["items"] = _schema(node["items"])
    if "properties" in node:
        node["properties"] = {k: resolve(v) for k, v in node["properties"].items()}
    return node


def _params(params: list[Any], location: str, required_only: bool) -> tuple[str, ...]:
    found = [resolve(p) for p in params]
    return tuple(
        p["name"] for p in found if p["in"] == location and (p.get("required") or not required_only)
    )


BODY_KINDS = {"Knowledgebase": "kb", "KnowledgeDocuments": "bulk", "DocumentIds": "process"}


def _body_kind(raw: dict[str, Any]) -> str:
    if "requestBody" not in raw:
        return ""
    ref = raw["requestBody"].get("$ref", "").rsplit("/", 1)[-1]
    return BODY_KINDS.get(ref, "interpreted")


def _operation(path: str, method: str, item: dict[str, Any], raw: dict[str, Any]) -> Operation:
    params = list(item.get("parameters", [])) + list(raw.get("parameters", []))
    body = resolve(raw.get("requestBody")) or {}
    content = body.get("content", {})
    media = next(iter(content), None)
    status = raw.get("x-success-status")
    success = resolve(raw["responses"].get(str(status), raw["responses"].get("2XX", {})))
    return Operation(
        method=method.upper(),
        path=path,
        operation_id=raw["operationId"],
        tag=raw["tags"][0],
        success_status=status if isinstance(status, int) else None,
        body_required=bool(body.get("required")),
        body_media=media,
        path_params=_params(params, "path", required_only=False),
        query_params=_params(params, "query", required_only=True),
        header_params=_params(params, "header", required_only=True),
        streaming="text/event-stream" in success.get("content", {}),
        body_schema=_schema(content[media]["schema"]) if media else None,
        tags=tuple(raw.get("tags", ())),
        body_kind=_body_kind(raw),
        requirements=dict(raw["x-requirements"]),
        query_references=tuple(
            p["name"] for p in map(resolve, params) if p["in"] == "query" and "x-references" in p
        ),
        body_references="x-references" in body,
    )


@cache
def operations() -> tuple[Operation, ...]:
    """Every operation of spec/openapi.yaml, in document order."""
    found = []
    for path, item in document()["paths"].items():
        for method in METHODS:
            if method in item:
                found.append(_operation(path, method, item, item[method]))
    return tuple(found)


@cache
def by_id_table() -> dict[str, Operation]:
    return {op.operation_id: op for op in operations()}


def by_id(operation_id: str) -> Operation:
    return by_id_table()[operation_id]


@cache
def by_label() -> dict[str, Operation]:
    """Operations by `METHOD /path/{template}`, as schemathesis labels them."""
    return {op.label: op for op in operations()}


@cache
def _path_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """The document's paths as patterns, fewest parameters first (literal paths win)."""
    paths = sorted(document()["paths"], key=lambda p: p.count("{"))
    return tuple(
        (p, re.compile(re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(p)) + "$"))
        for p in paths
    )


@lru_cache(maxsize=4096)  # asked twice or more per request sent; the document never changes
def operation_label(method: str, path: str) -> str:
    """`METHOD /path/{template}` of a request (its own path where it is off the document)."""
    found = match_path(path)
    return f"{method} {found[0] if found else path}"


def match_path(path: str) -> tuple[str, dict[str, str]] | None:
    """The path template a request path matches, and its parameters; None outside the document."""
    for template, pattern in _path_patterns():
        match = pattern.search(path)
        if match:
            return template, match.groupdict()
    return None
