"""The requirement catalogue (spec/requirements.yaml): IDs, levels, sources and statements."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from assistant_conformance.contract.files import CATALOGUE_PATH, OPENAPI_PATH, read_yaml

LEVELS = ("MUST", "SHOULD")
# x-requirements keys (spec/openapi.yaml) whose requirement names every operation it is put on: it
# passes only where each of them was exercised and kept it.
NAMING = ("status", "no-body")


@dataclass(frozen=True)
class Requirement:
    id: str
    level: str
    source: str
    statement: str
    section: str
    pending: bool = False
    quote: tuple[str, ...] = ()  # for a MUST: the document's words it rests on


@dataclass(frozen=True)
class Catalogue:
    sections: dict[str, str]  # section key -> title
    requirements: dict[str, Requirement]
    section_groups: dict[str, str] = field(default_factory=dict)  # section key -> optional group
    # requirement -> the operations (`METHOD /path`) it names, each of which its pass rests on
    operations: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def groups(self) -> tuple[str, ...]:
        """The optional capability groups, in the order of their first section."""
        return tuple(dict.fromkeys(self.section_groups.values()))

    def group_of_section(self, section: str) -> str | None:
        return self.section_groups.get(section)

    def __getitem__(self, req_id: str) -> Requirement:
        try:
            return self.requirements[req_id]
        except KeyError:
            raise KeyError(
                f"unknown requirement ID {req_id!r} (not in {CATALOGUE_PATH.name})"
            ) from None

    def __contains__(self, req_id: object) -> bool:
        return req_id in self.requirements


def parse(data: dict) -> Catalogue:
    sections = {key: value["title"] for key, value in data["sections"].items()}
    groups = {key: value["group"] for key, value in data["sections"].items() if "group" in value}
    requirements: dict[str, Requirement] = {}
    for entry in data["requirements"]:
        req = Requirement(
            id=entry["id"],
            level=entry["level"],
            source=entry["source"],
            statement=entry["statement"],
            section=entry["id"].split("-", 1)[0],
            pending=entry.get("status") == "pending",
            quote=tuple(entry.get("quote", ())),
        )
        if req.id in requirements:
            raise ValueError(f"duplicate requirement ID {req.id}")
        requirements[req.id] = req
    return Catalogue(sections=sections, requirements=requirements, section_groups=groups)


def named_operations(document: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """Each requirement an operation of the OpenAPI document names (NAMING) -> those operations."""
    found: dict[str, list[str]] = {}
    for path, item in document["paths"].items():
        for method, raw in item.items():
            named = raw.get("x-requirements", {}) if isinstance(raw, dict) else {}
            for key in NAMING:
                if key in named:
                    found.setdefault(named[key], []).append(f"{method.upper()} {path}")
    return {rid: tuple(ops) for rid, ops in found.items()}


@cache
def load(path: Path = CATALOGUE_PATH) -> Catalogue:
    return replace(parse(read_yaml(path)), operations=named_operations(read_yaml(OPENAPI_PATH)))
