"""conformance.json's one typed model (report/conformance_json.py): the JSON Schema shipped with
the package is the one the model generates (a field added to the model alone is seen), and a file
that is not a conformance.json of this format is refused in one line. That real documents are
written from the model, read back into it unchanged and valid against the shipped schema:
test_reports.py (the tiny suite's runs), proof/test_mutants.py (each mutant's run) and
suite/property/test_property_layer.py (the reference's)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from assistant_conformance.report import conformance_json
from assistant_conformance.report.conformance_json import (
    Document,
    DocumentError,
    load_document,
    report_schema,
    schema_text,
)

REGENERATE = (
    "the shipped schema is not the model's: write it again with "
    "`python -c 'from assistant_conformance.report.conformance_json import write_schema_file; "
    "write_schema_file()'`"
)


def shipped_text() -> str:
    shipped = resources.files("assistant_conformance.report").joinpath(conformance_json.SCHEMA_FILE)
    return shipped.read_text(encoding="utf-8")


def test_the_shipped_schema_is_the_one_the_model_generates() -> None:
    assert shipped_text() == schema_text(), REGENERATE
    jsonschema.Draft202012Validator.check_schema(report_schema())


def test_a_field_added_to_the_model_alone_is_seen() -> None:
    class Grown(Document):
        added: str = ""

    assert shipped_text() != schema_text(Grown)
    assert "added" in json.loads(schema_text(Grown))["properties"]


def test_a_file_of_another_format_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "conformance.json"
    path.write_text(json.dumps({"format": "assistant-conformance-report/2", "requirements": []}))
    with pytest.raises(DocumentError) as refused:
        load_document(path)
    said = str(refused.value)
    assert said == f"{path}: not an assistant-conformance-report/1 document (format " + (
        "'assistant-conformance-report/2')"
    )


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("{not json", "not JSON"),
        ("[]", "not an assistant-conformance-report/1 document (format None)"),
        (
            json.dumps({"format": "assistant-conformance-report/1", "seed": 0}),
            "not a valid assistant-conformance-report/1 document: suite_version: Field required",
        ),
    ],
)
def test_a_file_that_is_not_a_document_is_refused_in_one_line(
    tmp_path: Path, content: str, said: str
) -> None:
    path = tmp_path / "conformance.json"
    path.write_text(content)
    with pytest.raises(DocumentError) as refused:
        load_document(path)
    assert str(refused.value).startswith(f"{path}: {said}")
    assert "\n" not in str(refused.value)
