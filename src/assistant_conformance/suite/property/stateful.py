"""Stateful: one state machine per chain of the document's links (create -> use -> delete), each
step sent and judged by the runner as a stateless case is, plus the stateful checks.
"""

from __future__ import annotations

import math
from typing import Any

import hypothesis
from schemathesis.core.transport import Response
from schemathesis.generation import derive_operation_seed
from schemathesis.generation.case import Case

from assistant_conformance.suite.flows.agent import Agent
from assistant_conformance.suite.judging.findings import Blocked
from assistant_conformance.suite.judging.negations import operation_id
from assistant_conformance.suite.property import compat
from assistant_conformance.suite.property.generation import hypothesis_settings, schema
from assistant_conformance.suite.property.runner import Runner, TransportBroken, Withheld
from assistant_conformance.suite.property.scope import area_operations

RUN_CREATE_OPERATIONS = ("createRun", "streamRun", "waitRun")
# One state machine per chain of the document's links, each with its share of the scenarios.
AREAS = {
    "knowledge bases and documents": (("AI/v1", "AI/Knowledges"), 1.0),
    "threads and runs": (("AI/Threads",), 1.5),
    "conversations and messages": (("AI/Conversations",), 1.0),
    "context files": (("AI/Contexts",), 0.5),
}
# A pytest item runs at most this share of its area's scenarios (its part): dependent requests
# make chains that only parts run side by side shorten (at 120 ms a request, threads and runs
# whole was a 30 s chain). The parts are fixed, whatever the depth: node IDs stay the same.
PART_SHARE = 0.25


def parts(area: str) -> int:
    return math.ceil(AREAS[area][1] / PART_SHARE)


def part_budget(area: str, examples: int, part: int) -> int:
    """Scenarios of one part: the area's (about its share x `examples`) split evenly, at least 1."""
    budget, count = max(1, round(examples * AREAS[area][1])), parts(area)
    return max(1, budget // count + (part < budget % count))


def state_machine(tags: tuple[str, ...]) -> Any:
    """The links among the operations of `tags` as a state machine; its scenarios start at the
    operations that create a resource from nothing (compat.py, 3)."""
    return schema().include(operation_id=area_operations(tags)).as_state_machine()


def run_values(agent: Agent | None) -> dict[str, Any] | None:
    """`assistant_id` and `input` of a run of the session's agent; None where runs are not judged
    (no link provides an assistant: a run-create step is then sent as generated, and runs none)."""
    if agent is None:
        return None
    try:
        agent.ready()
    except Blocked:
        return None
    body = agent.unchecked_body("conformance")
    return {"assistant_id": body["assistant_id"], "input": body["input"]}


def run_state_machine(
    runner: Runner,
    area: str,
    seed: int,
    examples: int,
    steps: int,
    agent: Agent | None = None,
    part: int = 0,
) -> int:
    """Follow the links of one area (create -> use -> delete) for one part of its share of about
    4 x `examples` scenarios of at most `steps` steps; answer how many ran."""
    tags, _ = AREAS[area]
    machine = workflow(state_machine(tags), runner, run_values(agent))
    label = f"{area} {part + 1}"
    return run_machine(machine, runner, seed, part_budget(area, examples, part), steps, label)


def workflow(base: Any, runner: Runner, run: dict[str, Any] | None) -> Any:
    from schemathesis.core.parameters import ParameterLocation

    class Workflow(base):
        linked_body = False
        linked: frozenset[str] = frozenset()  # path and query parameters a link filled in
        completed = 0

        def setup(self) -> None:
            runner.begin()  # a scenario's findings keep its steps' exchanges
            super().setup()

        def step(self, input: Any) -> Any:
            self.linked_body = (ParameterLocation.BODY, None) in input.applied_parameters
            applied = input.applied_parameters
            filled = (ParameterLocation.PATH, ParameterLocation.QUERY)
            self.linked = frozenset(n for p, n in applied if p in filled and n)
            return super().step(input)

        def before_call(self, case: Case) -> None:
            # A runnable body (the session's agent) so that linked runs, streams included, do
            # run; the variety of run bodies is the stateless test's job.
            positive = case.meta is None or case.meta.generation.mode.is_positive
            if run and positive and operation_id(case) in RUN_CREATE_OPERATIONS:
                metadata = case.body.get("metadata") if isinstance(case.body, dict) else None
                case.body = {**run, "metadata": metadata or {}}

        def get_call_kwargs(self, case: Case) -> dict[str, Any]:
            return runner.call_kwargs()

        def call(self, case: Case, **kwargs: Any) -> Response:
            try:
                return runner.send(case)
            except Withheld:
                hypothesis.reject()  # this step is not taken; the scenario goes on without it

        def validate_response(
            self, response: Response, case: Case, *args: Any, **kwargs: Any
        ) -> None:
            positive = case.meta is None or case.meta.generation.mode.is_positive
            linked = self.linked_body and positive
            runner.evaluate(case, response, self.recorder, linked_body=linked, linked=self.linked)

        def teardown(self) -> None:
            type(self).completed += 1
            super().teardown()

    return Workflow


def run_machine(
    machine: Any, runner: Runner, seed: int, budget: int, steps: int, label: str
) -> int:
    """Run `budget` scenarios. A real server is external state, so hypothesis may call a replay
    "flaky"; as schemathesis' own engine does, the run then goes on with the next seed."""
    from hypothesis.errors import Flaky

    for suite in range(4):
        if machine.completed >= budget or runner.broken:
            break
        suite_seed = derive_operation_seed(seed, f"stateful-{label}-{suite}")
        machine = hypothesis.seed(suite_seed)(machine)  # as schemathesis' own engine seeds one
        machine.rule_order_seed = suite_seed
        left = budget - machine.completed
        settings = hypothesis_settings(
            left, phases=[hypothesis.Phase.generate], stateful_step_count=steps
        )
        try:
            machine.run(settings=settings)
        except TransportBroken:
            break  # recorded as a finding already
        except (Flaky, AssertionError) as exc:
            if not isinstance(exc, Flaky) and not compat.is_inconsistent_replay(exc):
                raise
    return machine.completed
