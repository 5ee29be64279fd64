"""Whether a generated positive body is one the document lets the suite judge (every field the
suite owns, plausible values only: which fields are required and bounds are "not shown", interface
sections 2.1, 8). Which rule a negative case broke is suite/judging/negations.py's.
"""

from __future__ import annotations

import uuid
from typing import Any

from schemathesis.generation.case import Case

from assistant_conformance.contract.openapi import by_id, document
from assistant_conformance.suite.flows.knowledge import REFERENCES
from assistant_conformance.suite.judging.negations import operation_id


def judges_positive(case: Case, linked_body: bool) -> bool:
    kind = by_id(operation_id(case)).body_kind
    if kind == "kb":
        return plausible_kb_body(case.body) and complete_kb_body(case.body)
    if kind == "bulk":
        return case.body == []
    return kind == "process" and linked_body


def plausible_kb_body(body: Any) -> bool:
    """Declared fields only, non-empty printable strings, uuids, and numbers a server cannot refuse
    as out of bounds (bounds are "not shown", interface section 8)."""
    if not isinstance(body, dict):
        return False
    schema = _kb_schema()
    return _plausible(body, schema) and _plausible_overlap(body.get("parserConfig"))


def complete_kb_body(body: Any) -> bool:
    """Every field of interface 2.1, nested ones included, but those naming another resource
    (the suite leaves them out unless the user gave one): which fields are required is "not
    shown", so only a whole body is one the document shows valid."""
    return isinstance(body, dict) and _complete(body, _kb_schema(), "")


def _complete(body: dict, schema: dict, path: str) -> bool:
    for key, spec in schema.get("properties", {}).items():
        where = f"{path}.{key}" if path else key
        if where in REFERENCES:
            continue
        if key not in body:
            return False
        value = body[key]
        if spec.get("type") == "object" and not (
            isinstance(value, dict) and _complete(value, spec, where)
        ):
            return False
    return True


def _kb_schema() -> dict:
    return document()["components"]["schemas"]["CreateKnowledgebaseDTO"]


def _plausible(body: dict, schema: dict) -> bool:
    declared = schema.get("properties", {})
    for key, value in body.items():
        spec = declared.get(key)
        if spec is None:
            return False
        kind = spec.get("type")
        if kind == "object" and not (isinstance(value, dict) and _plausible(value, spec)):
            return False
        if kind == "string" and not _plausible_string(value, spec):
            return False
        if kind == "number" and not _plausible_number(key, value):
            return False
    return True


def _plausible_string(value: Any, spec: dict) -> bool:
    if not isinstance(value, str) or not 0 < len(value) <= 200 or not value.isprintable():
        return False
    if spec.get("format") == "uuid":
        try:
            return str(uuid.UUID(value)) == value.lower()
        except ValueError:
            return False
    return value in spec.get("enum", [value])


def _plausible_number(key: str, value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if key == "score":
        return 0 <= value <= 1
    low = 0 if key == "chunkOverlap" else 1
    return float(value).is_integer() and low <= value <= 1000


def _plausible_overlap(config: Any) -> bool:
    if not isinstance(config, dict) or not {"chunkSize", "chunkOverlap"} <= config.keys():
        return True
    return config["chunkOverlap"] < config["chunkSize"]
