"""The targets file of a matrix run: which implementations, and how the suite runs against each.

    seed: 0                    # optional; the same for every target
    examples: 10               # optional; property-layer depth, the same for every target
    jobs: 2                    # optional; targets run at once
    requirements: [AUTH-MISSING-REJECTED, KB-V1-STATUS]   # optional; default: all
    targets:
      - {name: reference, kind: reference}
      - {name: no-validation, kind: variant, variant: no-validation}
      - {name: langgraph, kind: langgraph}
      - name: staging
        kind: url
        url: https://staging.example.com
        token_env: STAGING_TOKEN          # the variable's name, never the token
        alt_token_env: STAGING_ALT_TOKEN
        unsupported: [chatkit]
        options: ["--rate-limit=20/s"]
        version: "backend 2.3.1"

Its shape is schemas/targets.schema.json; a file that breaks it is refused in one line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from assistant_conformance.contract import catalogue
from assistant_conformance.proof.connectors import NAMED, connector
from assistant_conformance.proof.foreign import LANGGRAPH_ABSENT
from assistant_conformance.reference.connectors import Connector

SET_BY_MATRIX = ("--base-url", "--token", "--alt-token", "--report-dir", "--seed", "--examples")
DEFAULT_JOBS = 2
DEFAULT_TIMEOUT = 1800.0


class PlanError(ValueError):
    """The targets file is unusable; the message says where and why in one line."""


@dataclass(frozen=True)
class MatrixTarget:
    name: str
    kind: str
    url: str = ""
    token_env: str = ""
    alt_token_env: str = ""
    served: str = ""  # the variant's or mutant's name
    unsupported: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    version: str = ""

    def connector(self) -> Connector:
        """How the column's target is started or reached (proof/connectors.py's table of kinds)."""
        entry = {
            "kind": self.kind,
            "url": self.url,
            "token_env": self.token_env,
            "alt_token_env": self.alt_token_env,
            "version": self.version,
        }
        named = {self.kind: self.served} if self.kind in NAMED else {}  # its mutant or variant
        return connector({**entry, **named})

    @property
    def what(self) -> str:
        """What the column is, in words (no credentials: a URL's user part is dropped)."""
        return self.connector().what


@dataclass(frozen=True)
class Plan:
    targets: tuple[MatrixTarget, ...]
    seed: int = 0
    examples: int | None = None  # None: the suite's default
    jobs: int = DEFAULT_JOBS
    timeout: float = DEFAULT_TIMEOUT
    requirements: tuple[str, ...] = field(default=())  # empty: all


def targets_schema() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("schemas/targets.schema.json").read_text("utf-8")
    return dict(json.loads(text))


def load_plan(path: Path) -> Plan:
    """The plan in `path`, checked against the schema, the catalogue and the proof's registries."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise PlanError(f"{path}: cannot read it: {str(exc).splitlines()[0]}") from None
    return parse_plan(data, str(path))


def parse_plan(data: Any, where: str = "targets file") -> Plan:
    if isinstance(data, dict):
        for index, entry in enumerate(data.get("targets") or []):
            if isinstance(entry, dict) and ({"token", "alt_token"} & entry.keys()):
                raise PlanError(
                    f"{where}: targets[{index}]: a token is never written in the file; "
                    "name the environment variable that holds it (token_env, alt_token_env)"
                )
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(targets_schema()).iter_errors(data)
    )
    if error is not None:
        place = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        raise PlanError(f"{where}: {place.lstrip('.') or 'top level'}: {error.message}")
    targets = tuple(_target(entry) for entry in data["targets"])
    plan = Plan(
        targets,
        seed=data.get("seed", 0),
        examples=data.get("examples"),
        jobs=data.get("jobs", DEFAULT_JOBS),
        timeout=float(data.get("timeout", DEFAULT_TIMEOUT)),
        requirements=tuple(data.get("requirements", ())),
    )
    _check(plan, where)
    return plan


def _target(entry: dict[str, Any]) -> MatrixTarget:
    kind = entry["kind"]
    unsupported = entry.get("unsupported", LANGGRAPH_ABSENT if kind == "langgraph" else ())
    return MatrixTarget(
        name=entry["name"],
        kind=kind,
        url=entry.get("url", "").rstrip("/"),
        token_env=entry.get("token_env", ""),
        alt_token_env=entry.get("alt_token_env", ""),
        served=entry.get(kind, "") if kind in NAMED else "",
        unsupported=tuple(unsupported),
        options=tuple(entry.get("options", ())),
        version=entry.get("version", ""),
    )


def _check(plan: Plan, where: str) -> None:
    """What the schema cannot say: names unique and known, options the matrix does not set."""
    names = [t.name for t in plan.targets]
    if doubled := sorted({n for n in names if names.count(n) > 1}):
        raise PlanError(f"{where}: target names must differ: {', '.join(doubled)}")
    unknown = sorted(set(plan.requirements) - set(catalogue.load().requirements))
    if unknown:
        raise PlanError(f"{where}: requirements: not in the catalogue: {', '.join(unknown)}")
    for target in plan.targets:
        known = list(NAMED.get(target.kind, {}))
        if target.served and target.served not in known:
            raise PlanError(
                f"{where}: target {target.name}: no {target.kind} named {target.served!r}; "
                f"known: {', '.join(sorted(known))}"
            )
        for option in target.options:
            if option.split("=")[0] in SET_BY_MATRIX:
                raise PlanError(
                    f"{where}: target {target.name}: {option.split('=')[0]} is set by the matrix "
                    "(tokens by token_env, seed and depth once for all targets)"
                )
