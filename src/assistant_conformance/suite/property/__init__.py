"""The property layer: schemathesis over spec/openapi.yaml, stateless and stateful.

- generation.py: the document loaded once; seed and depth per generated test;
- coverage.py: each operation's coverage cases made when its test runs, not at collection;
- runner.py: sends cases and turns check failures into findings;
- scope.py: what the suite may demand, and which requirement a failure is charged to;
- mapping.py: the check -> requirement table, as data;
- stateful.py: the links as state machines.

Used by tests/test_property.py (one pytest item per operation) and tests/test_stateful.py.
"""

from assistant_conformance.suite.openapi import by_label
from assistant_conformance.suite.property.coverage import ensure as ensure_coverage
from assistant_conformance.suite.property.generation import configure, schema
from assistant_conformance.suite.property.runner import Runner, Withheld
from assistant_conformance.suite.property.scope import requirements, stateful_requirements
from assistant_conformance.suite.property.stateful import AREAS, run_state_machine

__all__ = [
    "AREAS",
    "Runner",
    "Withheld",
    "by_label",
    "configure",
    "ensure_coverage",
    "requirements",
    "run_state_machine",
    "schema",
    "stateful_requirements",
]
