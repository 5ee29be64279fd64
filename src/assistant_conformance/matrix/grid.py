"""matrix.json: requirements by targets, as data; the page and the Markdown render from it.

Its shape is schemas/matrix.schema.json beside this module. Rows are the catalogue's requirements
(or the plan's selection) grouped by section; each cell is the verdict the target's own report
gave, `error` throughout for a target that could not be run. A row `agrees` when the targets that
completed gave it one verdict.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from assistant_conformance import __version__
from assistant_conformance.contract.catalogue import Catalogue
from assistant_conformance.contract.files import spec_hashes
from assistant_conformance.matrix.runner import COMPLETED, NOT_RUN, Column
from assistant_conformance.matrix.targets import Plan
from assistant_conformance.report import redact
from assistant_conformance.report.model import UNTESTED, VERDICTS
from assistant_conformance.suite.run.identity import suite_sha256

MATRIX_FORMAT = "assistant-conformance-matrix/1"


def matrix_schema() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("schemas/matrix.schema.json").read_text("utf-8")
    return dict(json.loads(text))


def build_matrix(
    plan: Plan, columns: list[Column], catalogue: Catalogue, command: str
) -> dict[str, Any]:
    rows = _rows(plan, columns, catalogue)
    sections = dict.fromkeys(row["section"] for row in rows)
    targets = [_target(column) for column in columns]
    for target in targets:  # what the grid shows of it (the report's totals count every test run)
        shown = Counter(row["verdicts"][target["name"]] for row in rows)
        target["grid_totals"] = {v: shown[v] for v in VERDICTS if shown[v]}
    return {
        "format": MATRIX_FORMAT,
        "generated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": redact.text(command),
        "suite_version": __version__,
        "suite_sha256": suite_sha256(),
        "spec": spec_hashes(),
        "seed": plan.seed,
        "examples": plan.examples,
        "selection": list(plan.requirements),
        "targets": targets,
        "sections": [{"key": key, "title": catalogue.sections.get(key, key)} for key in sections],
        "requirements": rows,
        "disagreements": sum(not row["agree"] for row in rows),
    }


def _rows(plan: Plan, columns: list[Column], catalogue: Catalogue) -> list[dict[str, Any]]:
    wanted = set(plan.requirements) or set(catalogue.requirements)
    verdicts = {c.target.name: _verdicts(c) for c in columns}
    rows = []
    for rid, req in catalogue.requirements.items():
        if rid not in wanted:
            continue
        cells = {
            name: got.get(rid, UNTESTED) if got is not None else NOT_RUN
            for name, got in verdicts.items()
        }
        judged = {cells[c.target.name] for c in columns if c.status == COMPLETED}
        rows.append(
            {
                "id": rid,
                "section": req.section,
                "level": req.level,
                "statement": req.statement,
                "source": req.source,
                "verdicts": cells,
                "agree": len(judged) <= 1,
            }
        )
    order = list(catalogue.sections)
    return sorted(rows, key=lambda r: order.index(r["section"]) if r["section"] in order else 99)


def _verdicts(column: Column) -> dict[str, str] | None:
    """Requirement ID -> verdict; None for a target that could not be run (`error` throughout)."""
    if column.status == NOT_RUN or column.document is None:
        return None
    return column.document.verdicts()


def _target(column: Column) -> dict[str, Any]:
    doc = column.document
    summary: dict[str, Any] = {
        "name": column.target.name,
        "kind": column.target.kind,
        "what": column.target.what,
        "versions": column.versions,
        "status": column.status,
        "reason": column.reason,
        "exit_status": column.exit_status,
        "seconds": round(column.seconds, 1),
        "report": f"{column.folder}/conformance.html" if doc is not None else None,
        "log": f"{column.folder}/suite.log",
        "options": list(column.target.options),
        "unsupported": list(column.target.unsupported),
    }
    if doc is not None:
        summary |= {
            "outcome": doc.result.outcome,
            "certification": doc.certification.level,
            "totals": doc.totals,
            "suite_sha256": doc.suite_sha256 or None,
            "spec": doc.spec.model_dump(),
        }
    return summary


def write_matrix(matrix: dict[str, Any], path: Path) -> None:
    """matrix.json, checked against its schema first (a writer bug must not ship a bad file)."""
    jsonschema.validate(matrix, matrix_schema())
    path.write_text(json.dumps(matrix, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
