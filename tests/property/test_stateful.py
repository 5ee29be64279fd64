"""Property tests, stateful: schemathesis follows the links of spec/openapi.yaml.

One state machine per chain of links, run in parts (`test_state_machine[threads and runs 1]`, ...,
each its share of the scenarios, seeded apart, so that workers run them side by side): create -> use
-> delete for knowledge bases and their documents, threads and runs (streams included, cut at
max-stream-events or the request timeout), conversations and messages, and context files. Every
stateless check runs on each step, plus use_after_free and a GET after each DELETE (a deleted
thread still readable warns THR-DELETE-GONE), ensure_resource_availability (a created message not
readable warns MSG-GET-CREATED), and the required query parameters probed on live resources (a
status query answering without `ids` fails KB-STATUS-IDS-REQUIRED). It deletes only what it created
through the links; what it leaves is in the ledger and removed at the end of the session.
"""

from __future__ import annotations

import pytest

from assistant_conformance.suite.property.runner import Runner
from assistant_conformance.suite.property.scope import stateful_requirements
from assistant_conformance.suite.property.stateful import AREAS, parts, run_state_machine

STEPS = 10  # per scenario; scenarios: about 4 x --examples in all (shares in AREAS)
CHAINS = [
    pytest.param(
        area, part, marks=pytest.mark.req(*stateful_requirements(tags)), id=f"{area} {part + 1}"
    )
    for area, (tags, _) in AREAS.items()
    for part in range(parts(area))
]


@pytest.mark.writes  # every chain starts with a create
@pytest.mark.parametrize(("area", "part"), CHAINS)
def test_state_machine(
    area: str, part: int, target, suite_settings, api_session, run_safety, agent
) -> None:
    runner = Runner.for_run(target, suite_settings, api_session, run_safety)
    seed, examples = suite_settings.seed, suite_settings.examples
    scenarios = run_state_machine(runner, area, seed, examples, STEPS, agent, part)
    withheld = f", {len(runner.withheld)} steps withheld (owned data only)"
    print(f"{area}: {scenarios} scenarios, {runner.sent} requests" + withheld)
