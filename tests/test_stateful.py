"""Property tests, stateful: schemathesis follows the links of spec/openapi.yaml.

The state machine chains create -> use -> delete for knowledge bases and their documents, threads
and runs (streams included, cut at the request timeout), conversations and messages, and context
files, with every stateless check plus use_after_free (a deleted thread still readable fails
THR-DELETE-GONE) and ensure_resource_availability (a created message not readable fails
MSG-GET-CREATED). It deletes only what it created through the links; what it leaves is tracked in
the ledger and removed at the end of the session.
"""

from __future__ import annotations

import pytest
import requests

from assistant_conformance import property as prop

STEPS = 8  # per scenario; scenarios: 2 x --examples


@pytest.mark.req(*prop.stateful_requirements())
def test_state_machine(target, suite_settings, ledger) -> None:
    with requests.Session() as session:
        runner = prop.Runner(
            base_url=target.base_url,
            token=target.token,
            timeout=suite_settings.request_timeout,
            session=session,
            examples=suite_settings.examples,
            ledger=ledger,
        )
        scenarios = prop.run_state_machine(
            runner, suite_settings.seed, suite_settings.examples, STEPS
        )
        print(f"stateful: {scenarios} scenarios, {runner.sent} requests")
