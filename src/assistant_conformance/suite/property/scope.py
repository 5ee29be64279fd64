"""What the property layer runs and may record: the schemathesis checks of each step, the
operations of each state machine, and every requirement a property test may name (its `req`
marker). Which requirement a failure is charged to is suite/judging/schemathesis_charges.py's.
"""

from __future__ import annotations

from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi import checks as st

from assistant_conformance.contract.catalogue import load
from assistant_conformance.contract.openapi import Operation, by_id, operations
from assistant_conformance.suite.judging import schemathesis_charges

# The checks the layer runs, in order: every step; stateful steps only; last (it sends probes, so
# a probe without answer loses no other failure).
CHECKS = (
    not_a_server_error,
    st.status_code_conformance,
    st.content_type_conformance,
    st.response_schema_conformance,
    st.negative_data_rejection,
    st.positive_data_acceptance,
    st.missing_required_header,
)
STATEFUL_ONLY = (st.use_after_free, st.ensure_resource_availability)
LAST = (st.ignored_auth,)


def requirements(operation_id: str, stateful: bool = False) -> list[str]:
    """Every requirement a property test of this operation may record (its req marker)."""
    op = by_id(operation_id)
    names = {c.__name__ for c in CHECKS + LAST + (STATEFUL_ONLY if stateful else ())}
    return sorted(schemathesis_charges.covered(names, op) | schemathesis_charges.refinements(op))


def area_operations(tags: tuple[str, ...]) -> list[str]:
    """The operations of a state machine: those of `tags` in the capability group of the first
    (AI/v1 also holds the file and chat-kit creates, which belong to groups of their own)."""
    catalogue = load()

    def group(op: Operation) -> str | None:
        return catalogue.group_of_section(catalogue[op.status_requirement].section)

    ops = [op for op in operations() if set(op.tags) & set(tags)]
    return [op.operation_id for op in ops if group(op) == group(ops[0])]


def stateful_requirements(tags: tuple[str, ...]) -> list[str]:
    """Every requirement the state machine over the operations of `tags` may record."""
    ids = {rid for op in area_operations(tags) for rid in requirements(op, stateful=True)}
    return sorted(ids - schemathesis_charges.UNOBSERVABLE_STATEFUL)
