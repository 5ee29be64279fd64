"""The requirement catalogue is well formed, and the suite's tests and the catalogue agree."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
import yaml

from assistant_conformance.contract.catalogue import LEVELS, load
from assistant_conformance.contract.files import CATALOGUE_PATH, OPENAPI_PATH
from assistant_conformance.contract.openapi import document, operations
from assistant_conformance.suite.judging import schemathesis_charges

ROOT = Path(__file__).resolve().parents[2]
CHECKS = {
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
    "positive_data_acceptance",
    "missing_required_header",
    "unsupported_method",
    "allow_header_conformance",
    "use_after_free",
    "ensure_resource_availability",
    "ignored_auth",
    "object_level_authorization",
}
RAW = yaml.safe_load(CATALOGUE_PATH.read_text(encoding="utf-8"))


@cache
def operation_ids() -> set[str]:
    spec = yaml.safe_load(OPENAPI_PATH.read_text(encoding="utf-8"))
    return {
        op["operationId"]
        for item in spec["paths"].values()
        for op in item.values()
        if isinstance(op, dict) and "operationId" in op
    }


def test_ids_are_unique_and_readable():
    ids = [entry["id"] for entry in RAW["requirements"]]
    assert len(ids) == len(set(ids)), "duplicate requirement IDs"
    for rid in ids:
        assert re.fullmatch(r"[A-Z]+(-[A-Z0-9]+)+", rid), rid
        assert rid.split("-")[0] in RAW["sections"], f"{rid}: unknown section"


@pytest.mark.parametrize("entry", RAW["requirements"], ids=lambda e: e["id"])
def test_entry_is_complete(entry):
    assert entry["level"] in LEVELS
    assert entry["source"].strip()
    statement = entry["statement"]
    assert statement.endswith("."), "a statement is one sentence"
    # Statements state the behaviour as a fact; the level carries the obligation.
    assert not re.search(r"\b(should|must|shall)\b", statement, re.I), statement


def test_the_charge_tables_name_known_checks_and_requirements():
    charged = schemathesis_charges
    assert set(charged.PER_OPERATION) | set(charged.EVERY_OPERATION) <= CHECKS
    named = {r for rs in charged.EVERY_OPERATION.values() for r in rs} | charged.CONTROLLED
    assert named <= set(load().requirements), named - set(load().requirements)


@pytest.mark.parametrize("op", operations(), ids=lambda op: op.operation_id)
def test_every_operation_names_its_requirements(op):
    """x-requirements: a success status requirement (a MUST of the catalogue) for every
    operation, and known requirements for what else a finding on it is charged to."""
    known = set(schemathesis_charges.PER_OPERATION.values()) | {"query", "no-body"}
    assert set(op.requirements) <= known
    described = document()["paths"][op.path][op.method.lower()]["description"]
    assert ("no-body" in op.requirements) == ("no body sent" in described), described
    assert all(rid in load() for rid in op.requirements.values()), op.requirements
    assert load()[op.status_requirement].level == "MUST"
    assert ("query" in op.requirements) == bool(op.query_params), op.requirements


INTERFACE = re.sub(
    r"\s+", " ", (CATALOGUE_PATH.parent / "interface.md").read_text(encoding="utf-8")
)


@pytest.mark.parametrize(
    "req", [r for r in RAW["requirements"] if r["level"] == "MUST"], ids=lambda r: r["id"]
)
def test_every_must_quotes_the_document_verbatim(req):
    """A MUST rests on what the document states: its quote is found, word for word, in it."""
    assert req.get("quote"), "a MUST names the sentence or table row it rests on"
    for words in req["quote"]:
        assert re.sub(r"\s+", " ", words) in INTERFACE, words


def test_rejecting_bad_input_is_should():
    """The document shows no error behaviour (section 7): no rejection is a MUST."""
    for req in load().requirements.values():
        if "with a 4xx" in req.statement or req.statement.startswith(
            ("Bulk rejects", "Process rejects")
        ):
            assert req.level == "SHOULD", req.id


def test_interpretations_are_not_must():
    """A requirement the suite only interprets cannot be a MUST: the document does not state it."""
    for req in load().requirements.values():
        if req.source == "interpretation":
            assert req.level == "SHOULD", req.id


@pytest.fixture(scope="module")
def inventory(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    out = tmp_path_factory.mktemp("inventory") / "inventory.json"
    env = {
        **os.environ,
        "REQUIREMENT_INVENTORY": str(out),
        "PYTHONPATH": str(ROOT / "selftests" / "support"),
    }
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "tests",
            "--collect-only",
            "-q",
            "-p",
            "requirement_inventory",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return json.loads(out.read_text())


def test_every_test_names_requirements(inventory):
    unnamed = [nodeid for nodeid, ids in inventory.items() if not ids]
    assert not unnamed, f"tests without @pytest.mark.req: {unnamed[:10]}"


def test_every_named_requirement_exists(inventory):
    catalogue = load()
    unknown = {rid for ids in inventory.values() for rid in ids if rid not in catalogue}
    assert not unknown


def test_every_requirement_has_a_test_or_is_pending(inventory):
    tested = {rid for ids in inventory.values() for rid in ids}
    for req in load().requirements.values():
        if req.pending:
            assert req.id not in tested, f"{req.id} is tested: drop its pending status"
        else:
            assert req.id in tested, (
                f"{req.id} has no test (mark it `status: pending` until it has)"
            )
