"""What a generated case is: which rule of the document a negative case broke, and whether a
positive body is one the document lets the suite judge (every field the suite owns, plausible
values only: which fields are required and bounds are "not shown", interface sections 2.1, 8).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from schemathesis.core.mutations import OperatorKind
from schemathesis.generation.case import Case
from schemathesis.generation.meta import CoveragePhaseData, CoverageScenario

from assistant_conformance.suite.flows.knowledge import REFERENCES
from assistant_conformance.suite.openapi import by_id, by_label, document

LAST_EVENT_ID = "last-event-id"


@dataclass(frozen=True)
class Negation:
    location: str  # body, query, header, path, cookie
    name: str  # parameter name, or the body property path ("recall.topK", "[]" = items, "" = whole)
    keyword: str  # type, enum, format, missing, syntax, ...
    null: bool = False

    def describe(self, case: Case | None = None) -> str:
        """`body permission (enum) = 'x'`: where, what was broken, and the value as sent."""
        null = ", null" if self.null else ""
        text = f"{self.location} {self.name or '(whole)'} ({self.keyword}{null})"
        return text if case is None else f"{text} = {sent_value(case, self)}"


def sent_value(case: Case, negation: Negation) -> str:
    """The value a case sent where `negation` broke the document (short), or `absent`."""
    containers: dict[str, Any] = {
        "query": case.query,
        "header": case.headers,
        "path": case.path_parameters,
        "cookie": case.cookies,
    }
    if negation.location == "body":
        names = negation.name.split(".") if negation.name else []
        value = case.body if "[]" in names else _value_at(case.body, names)
    else:
        found = containers.get(negation.location) or {}
        lowered = {str(k).lower(): v for k, v in found.items()}
        value = lowered.get(negation.name.lower(), _MISSING)
    if value is _MISSING:
        return "absent"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


_COVERAGE_KEYWORDS = {
    CoverageScenario.INCORRECT_TYPE: "type",
    CoverageScenario.INVALID_ENUM_VALUE: "enum",
    CoverageScenario.INVALID_FORMAT: "format",
    CoverageScenario.MISSING_PARAMETER: "missing",
    CoverageScenario.OBJECT_MISSING_REQUIRED_PROPERTY: "missing",
}
_MISSING = object()


def _pointer_path(pointer: str) -> list[str]:
    tokens, path = pointer.strip("/").split("/") if pointer else [], []
    for i, token in enumerate(tokens):
        if token == "items":
            path.append("[]")
        elif i > 0 and tokens[i - 1] == "properties":
            path.append(token)
    return path


def _value_at(body: Any, path: list[str]) -> Any:
    for key in path:
        if not isinstance(body, dict) or key not in body:
            return _MISSING
        body = body[key]
    return body


def negations(case: Case) -> list[Negation]:
    meta = case.meta
    if meta is None or not meta.generation.mode.is_negative:
        return []
    data = meta.phase.data
    if isinstance(data, CoveragePhaseData):
        loc = data.parameter_location.value if data.parameter_location else ""
        keyword = _COVERAGE_KEYWORDS.get(data.scenario, data.scenario.value)
        if loc != "body":
            return [Negation(loc, data.parameter or "", keyword)]
        path = _pointer_path(data.location or "")
        null = keyword == "type" and _value_at(case.body, path) is None
        return [Negation(loc, ".".join(path), keyword, null)]
    result = []
    for m in getattr(data, "mutations", ()):
        loc = m.parameter_location.value
        keywords = set(m.keywords)
        if m.operator == OperatorKind.SYNTAX_FUZZING:
            keyword = "syntax"
        elif m.operator == OperatorKind.REMOVE_REQUIRED_PROPERTY or "required" in keywords:
            keyword = "missing"
        elif m.operator == OperatorKind.CHANGE_TYPE or "type" in keywords:
            keyword = "type"
        else:
            keyword = next(
                (k for k in ("enum", "format") if k in keywords), ",".join(sorted(keywords))
            )
        name = ".".join(_pointer_path(m.schema_pointer)) if loc == "body" else (m.parameter or "")
        result.append(Negation(loc, name, keyword, keyword == "type" and m.new_value == "null"))
    location = getattr(data, "parameter_location", None)
    if not result and location is not None:
        result.append(Negation(location.value, data.parameter or "", "unknown"))
    return result


def is_last_event_id(n: Negation) -> bool:
    return n.location == "header" and n.name.lower() == LAST_EVENT_ID


def only_last_event_id(case: Case) -> bool:
    found = negations(case)
    return bool(found) and all(is_last_event_id(n) for n in found)


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


def operation_id(case: Case) -> str:
    return by_label()[case.operation.label].operation_id
