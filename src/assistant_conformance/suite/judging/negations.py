"""What a negative case is: which rule of the document a generated case broke (its negations, read
from schemathesis' generation metadata), and the value it sent there. The judge charges a failure
by them (suite/judging/schemathesis_charges.py); the property layer describes them in its findings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from schemathesis.core.mutations import OperatorKind
from schemathesis.generation.case import Case
from schemathesis.generation.meta import CoveragePhaseData, CoverageScenario

from assistant_conformance.contract.openapi import by_label

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


def operation_id(case: Case) -> str:
    return by_label()[case.operation.label].operation_id
