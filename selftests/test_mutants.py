"""The suite catches every mutant of the reference server, each by the requirement it breaks.

Every mutant of assistant_conformance.mutants runs on its own server against the part of the suite
it needs (mutants.selection: paths, -k on its requirement IDs, options), several at once, through
the same runner as `python -m assistant_conformance.killtable`. The requirements conformance.json
then reports failed or warned must be exactly the registry's IDs (a MUST failed, a SHOULD warned):
named rather than counted, so a check weakened into vacuity shows as the requirement it lost.
The same selections pass against the unchanged reference (selftests/test_variants.py runs the whole
suite against it), so "exactly" means something.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from assistant_conformance import killtable
from assistant_conformance.catalogue import load
from assistant_conformance.mutants import MUTANTS

MINIMUM = 35


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, killtable.Outcome]:
    workdir = tmp_path_factory.mktemp("mutants")
    jobs, started = killtable.default_jobs(), time.monotonic()
    done = killtable.run_all(killtable.cases(kinds=[killtable.MUTANT]), workdir, jobs)
    killtable.write(done, workdir / "reports", time.monotonic() - started, jobs)
    print(f"\n{killtable.text(done)}\n(table in {Path(workdir) / 'reports' / 'killtable.md'})")
    return {o.case.name: o for o in done}


def test_the_catalogue_has_enough_mutants() -> None:
    assert len(MUTANTS) >= MINIMUM


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_docstring_names_the_requirement_it_breaks(name: str) -> None:
    cls, expected = MUTANTS[name]
    catalogue = load()
    assert expected and all(rid in catalogue.requirements for rid in expected)
    assert killtable.summary(cls).startswith(expected[0]), killtable.summary(cls)


def test_every_section_has_a_mutant() -> None:
    catalogue = load()
    broken = {catalogue[rid].section for _, expected in MUTANTS.values() for rid in expected}
    assert set(catalogue.sections) - broken == set()


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_reported_by_its_requirements(
    outcomes: dict[str, killtable.Outcome], name: str
) -> None:
    outcome = outcomes[name]
    assert not outcome.problem, f"{outcome.problem}\n{outcome.log}"
    assert outcome.observed == outcome.case.wanted(), outcome.log
