"""Property tests, stateless: schemathesis exercises every operation of spec/openapi.yaml.

One pytest item per operation, `test_operation[POST /api/ai/threads]`. Select one by node id
(`"tests/property/test_property.py::test_operation[POST /api/ai/threads]"`) or by operationId
(`-k createThread`); pytest's -k grammar cannot take "POST /api/ai/threads" as one word
(`-k "POST and /api/ai/threads"` works, matching every POST under that path). Each item sends the
coverage cases (N // 10 per scenario and field at depth N = --examples) and N fuzzed cases, valid
and invalid, seeded from --seed: the same seed and node id send the same cases again. Every check
failure is a finding against its requirement (suite/judging/schemathesis_charges.py says which).
A server violating a mandated rule fails here: e.g. answering POST /api/ai/threads with 200,
accepting `permission: "x"` on a knowledge base, or a request without Authorization.
"""

from __future__ import annotations

import pytest

from assistant_conformance.contract.openapi import by_label
from assistant_conformance.suite.property import compat, generation
from assistant_conformance.suite.property.runner import Runner
from assistant_conformance.suite.property.scope import requirements

schema = (
    generation.schema()
)  # seeded from --seed and as deep as --examples (property/generation.py)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Per operation (schemathesis builds one test each): its requirements and keyword."""
    operation = compat.api_operation_of(metafunc.function)
    if operation is None:
        return
    op = by_label()[operation.label]
    marks = list(getattr(metafunc.function, "pytestmark", []))
    metafunc.function.pytestmark = [
        *marks,
        pytest.mark.req(*requirements(op.operation_id)).mark,
    ]
    setattr(metafunc.function, op.operation_id, True)  # `-k createThread` selects the operation


@pytest.fixture
def runner(request, target, suite_settings, api_session, run_safety) -> Runner:
    compat.without_schemathesis_reports(request.node)  # the suite reports through its findings
    compat.ensure_coverage(request.function)  # its coverage cases, made now (not at collection)
    return Runner.for_run(target, suite_settings, api_session, run_safety)


@schema.parametrize()
def test_operation(case, runner: Runner) -> None:
    runner.run(case)
