"""The requirement catalogue (spec/requirements.yaml): IDs, levels, sources and statements."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

SPEC_DIR = Path(__file__).resolve().parents[2] / "spec"
CATALOGUE_PATH = SPEC_DIR / "requirements.yaml"
OPENAPI_PATH = SPEC_DIR / "openapi.yaml"
LEVELS = ("MUST", "SHOULD")


@dataclass(frozen=True)
class Requirement:
    id: str
    level: str
    source: str
    statement: str
    section: str
    checks: tuple[str, ...] = ()
    operations: tuple[str, ...] = ()
    pending: bool = False

    def covers(self, check: str, operation_id: str) -> bool:
        return check in self.checks and ("*" in self.operations or operation_id in self.operations)


@dataclass(frozen=True)
class Catalogue:
    sections: dict[str, str]  # section key -> title
    requirements: dict[str, Requirement]

    def __getitem__(self, req_id: str) -> Requirement:
        try:
            return self.requirements[req_id]
        except KeyError:
            raise KeyError(
                f"unknown requirement ID {req_id!r} (not in {CATALOGUE_PATH.name})"
            ) from None

    def __contains__(self, req_id: object) -> bool:
        return req_id in self.requirements

    def for_check(self, check: str, operation_id: str) -> Requirement | None:
        """The requirement a schemathesis check failing on an operation is a finding against."""
        return next((r for r in self.requirements.values() if r.covers(check, operation_id)), None)


def parse(data: dict) -> Catalogue:
    sections = {key: value["title"] for key, value in data["sections"].items()}
    requirements: dict[str, Requirement] = {}
    for entry in data["requirements"]:
        req = Requirement(
            id=entry["id"],
            level=entry["level"],
            source=entry["source"],
            statement=entry["statement"],
            section=entry["id"].split("-", 1)[0],
            checks=tuple(entry.get("checks", ())),
            operations=tuple(entry.get("operations", ())),
            pending=entry.get("status") == "pending",
        )
        if req.id in requirements:
            raise ValueError(f"duplicate requirement ID {req.id}")
        requirements[req.id] = req
    return Catalogue(sections=sections, requirements=requirements)


@cache
def load(path: Path = CATALOGUE_PATH) -> Catalogue:
    return parse(yaml.safe_load(path.read_text(encoding="utf-8")))
