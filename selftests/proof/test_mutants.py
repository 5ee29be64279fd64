"""The suite catches every mutant of the reference server, each by the requirement it breaks.

Every mutant of assistant_conformance.proof.mutants runs on its own server against the part of the
suite it needs (mutants.selection: paths, -k on its requirement IDs, options), several at once, in
one pool with the variants (killtable_batch.py), through the same runner as
`python -m assistant_conformance.proof.killtable`; the table lands in reports/killtable.md. The
requirements its conformance.json reports failed or warned must be exactly the registry's IDs:
named rather than counted, so a check weakened into vacuity shows as the requirement it lost.
The same selections pass against the unchanged reference (the README's first command runs the whole
suite against it), so "exactly" means something.
"""

from __future__ import annotations

import json

import jsonschema
import pytest
from killtable_batch import outcomes

from assistant_conformance.contract.catalogue import load
from assistant_conformance.proof import killtable
from assistant_conformance.proof.mutants import MUTANTS
from assistant_conformance.report.conformance_json import report_schema

MINIMUM = 35
# Under xdist the table is made once, on one worker, for the variants' tests and these.
pytestmark = pytest.mark.xdist_group("killtable")


def test_the_catalogue_has_enough_mutants() -> None:
    assert len(MUTANTS) >= MINIMUM


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_docstring_names_the_requirement_it_breaks(name: str) -> None:
    cls, expected = MUTANTS[name]
    catalogue = load()
    assert expected and all(rid in catalogue.requirements for rid in expected)
    assert killtable.first_paragraph(cls).startswith(expected[0]), killtable.first_paragraph(cls)


def test_every_requirement_has_a_mutant() -> None:
    """Each requirement is shown to be checkable: some broken server makes the suite report it."""
    broken = {rid for _, expected in MUTANTS.values() for rid in expected}
    assert set(load().requirements) - broken == set()


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_reported_by_its_requirements(name: str) -> None:
    outcome = outcomes()[name]
    assert not outcome.problem, f"{outcome.problem}\n{outcome.log}"
    assert outcome.observed == outcome.case.wanted(), outcome.log
    assert all(v == "pass" for v in outcome.kept.values()), f"{outcome.kept}\n{outcome.log}"
    assert outcome.report is not None
    jsonschema.validate(json.loads(outcome.report.read_text()), report_schema())
