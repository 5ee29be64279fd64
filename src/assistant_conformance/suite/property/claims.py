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
from typing import Any

from schemathesis.generation.case import Case

from assistant_conformance.contract.openapi import by_id, by_label
from assistant_conformance.suite.flows.knowledge import with_references
from assistant_conformance.suite.http.observe import AnswerFault
from assistant_conformance.suite.judging.negations import negations, operation_id
from assistant_conformance.suite.safety.guard import NotOwned


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


def refused_note(runner: Any, case: Case, said: Any) -> str:
    """For a finding on a valid Knowledgebase body refused: which body, what the target said, and
    what the same request with the minimal body got (a control of the operation)."""
    return f" Sent {short(case.body)}; said {what_it_says(said)!r}." + minimal_tried(runner, case)


def minimal_tried(runner: Any, case: Case) -> str:
    """A valid Knowledgebase body refused: the same request with the minimal body (a name of
    its own), a control of the operation; what it got, for the finding."""
    body = minimal_kb_body(runner.unique_name(case))
    kwargs = runner.call_kwargs()
    path = case.formatted_path
    try:  # through the run's session: its guard writes the create to the ledger
        answer = runner.session.request(
            case.method, f"{runner.base_url.rstrip('/')}{path}", json=body,
            headers=kwargs["headers"], timeout=runner.timeout, verify=kwargs["verify"],
        )  # fmt: skip
    except AnswerFault as fault:
        return f" [the same request with only {body}: {fault.what}]"
    except NotOwned as refused:  # its answer showed the id it names: owned data only
        return f" [the same request with only {body}: not sent, {refused}]"
    op = by_label()[case.operation.label]
    runner.judge.control(op.operation_id, op.label, answer.status_code)
    return f" [the same request with only {body}: HTTP {answer.status_code}]"


def what_it_says(body: Any) -> str:
    """What an answer says: its `message` (as the deployed servers write errors), else all."""
    said = body.get("message") if isinstance(body, dict) else None
    text = said if isinstance(said, str) else short(said if said is not None else body, 200)
    return text if len(text) <= 200 else text[:197] + "..."


def short(value: Any, limit: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
