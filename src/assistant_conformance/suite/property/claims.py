"""What a generated Knowledgebase body claims when it is sent: only what the suite owns.

Schemathesis draws bodies from spec/openapi.yaml, so the fields that name another resource
(`workspaceId`, `integrationId`, `copilotModel.copilotId`) come as random values naming nothing
on the target, and names repeat (hypothesis likes "0"). A server may check both, as the deployed
one does (foreign keys, names unique per organization). Before a case is sent, each reference it
did not break on purpose takes the user's value (--kb-workspace-id, ...) or is left out, and a
name it did not break is prefixed with one unique to the run, the operation (so the API prefix),
the test and the case. What a negative case broke is sent as drawn: a malformed UUID still is.
"""

from __future__ import annotations

from collections.abc import Mapping

from schemathesis.generation.case import Case

from assistant_conformance.suite.flows.knowledge import with_references
from assistant_conformance.suite.openapi import by_id
from assistant_conformance.suite.property.cases import negations, operation_id


def own_kb_body(case: Case, references: Mapping[str, str], unique: str) -> None:
    """Shape `case`'s Knowledgebase body in place (see the module docstring); `unique`: the
    name prefix of this case. Other bodies are left as drawn."""
    if by_id(operation_id(case)).body_kind != "kb" or not isinstance(case.body, dict):
        return
    broken = {n.name for n in negations(case) if n.location == "body"}
    body = with_references(case.body, references, keep=broken)
    name = body.get("name")
    if isinstance(name, str) and "name" not in broken:
        body["name"] = f"{unique}-{name}" if name else unique
    case.body = body


def minimal_kb_body(unique: str) -> dict[str, str]:
    """The least a Knowledgebase body can carry: a name of its own."""
    return {"name": f"{unique}-minimal"}
