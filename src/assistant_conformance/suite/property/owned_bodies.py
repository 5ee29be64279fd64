"""What a generated body claims when it is sent: only what the suite owns, marked as the run's,
asking what the run can give back.

Schemathesis draws bodies from spec/openapi.yaml, so the fields that name another resource
(`workspaceId`, `integrationId`, `copilotModel.copilotId`) come as random values naming nothing
on the target, and names repeat (hypothesis likes "0"). A server may check both, as the deployed
one does (foreign keys, names unique per organization). Before a case is sent, each reference it
did not break on purpose takes the user's value (--kb-workspace-id, ...) or is left out, and a
name it did not break is prefixed with one unique to the run, the operation (so the API prefix),
the test and the case. What a negative case broke is sent as drawn: a malformed UUID still is.

The creates carry the run's mark where the ledger looks for it (contract/resources.py's `mark`): a
thread's metadata `conformance_run`, a conversation's title, an upload's file name. A lifetime
(`expires_after`: a chat-kit session, which nothing can remove) is asked within minutes
(contract LIFETIMES); a negative case that broke it upward is not sent at all.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from schemathesis.generation.case import Case

from assistant_conformance.contract.openapi import by_id, by_label
from assistant_conformance.contract.resources import LIFETIME, LIFETIME_FIELD, LIFETIMES
from assistant_conformance.suite.flows.knowledge import with_references
from assistant_conformance.suite.http.observe import AnswerFault, refusal_expected
from assistant_conformance.suite.judging.negations import negations, operation_id
from assistant_conformance.suite.safety.guard import NotOwned
from assistant_conformance.suite.safety.ledger import Ledger


def own_body(case: Case, references: Mapping[str, str], unique: str, run: str) -> str | None:
    """Shape `case`'s body in place (see the module docstring): `unique` the name prefix of this
    case, `run` the run's. Answer why it must not be sent at all (None: send it)."""
    own_kb_body(case, references, unique)
    op = by_id(operation_id(case))
    body = case.body if isinstance(case.body, dict) else None
    broken = {n.name for n in negations(case) if n.location == "body"}
    if LIFETIME_FIELD in (op.body_schema or {}).get("properties", {}) and "" not in broken:
        if body is None and positive(case):
            body = {}
        if body is not None and (why := _lifetime(body, LIFETIME_FIELD in broken)):
            return why
    if body is None:
        return None
    if op.operation_id == "createThread" and "metadata" not in broken:
        metadata = body.get("metadata")
        if metadata is None or isinstance(metadata, dict):
            body["metadata"] = {**(metadata or {}), "conformance_run": run}
    if op.operation_id == "createConversation" and "title" not in broken:
        title = body.get("title")
        body["title"] = f"{unique}-{title}" if isinstance(title, str) and title else unique
    case.body = body
    return None


def _lifetime(body: dict[str, Any], broken: bool) -> str | None:
    """A lifetime asked within minutes (a number drawn folded into LIFETIMES, none: LIFETIME); one
    broken on purpose is sent as drawn unless it asks longer (then: why it is not sent)."""
    value = body.get(LIFETIME_FIELD)
    number = isinstance(value, int | float) and not isinstance(value, bool)
    shortest, longest = LIFETIMES
    if not broken:
        if isinstance(value, int | float) and number:
            body[LIFETIME_FIELD] = shortest + int(value) % (longest - shortest + 1)
        elif LIFETIME_FIELD not in body:
            body[LIFETIME_FIELD] = LIFETIME
        return None
    if isinstance(value, int | float) and number and value > longest:
        return f"not sent: its {LIFETIME_FIELD} {value} asks a lifetime longer than minutes"
    return None


def upload_named(case: Case, unique: str) -> dict[str, Any]:
    """The keyword arguments that send a multipart upload with each file part's name prefixed
    by `unique` (schemathesis names a part by its field): {} for other cases."""
    if not (case.media_type or "").startswith("multipart/") or not isinstance(case.body, dict):
        return {}
    files = case.as_transport_kwargs(base_url="http://unused").get("files")
    if not isinstance(files, list):
        return {}
    return {
        "files": [
            (field, (f"{unique}-{part[0]}", *part[1:]) if part[0] else part)
            for field, part in files
        ]
    }


def unmade(case: Case, ledger: Ledger | None) -> tuple[str, Any]:
    """For a create of what nothing removes (a chat-kit session): why `case` is not sent ("" when
    it is: it broke the body, so a conformant target makes nothing of it; a valid one is left to
    the scenario checks, on the run's budget), and the answer to the run's own valid create of it
    (its refusals' control; None when the run made none here)."""
    kind = ledger.unremovable(case.method, case.path) if ledger is not None else ""
    if not kind or ledger is None:
        return "", None
    made = ledger.budget.first(kind)
    control = made.response if made is not None else None
    if any(n.location == "body" for n in negations(case)):
        return "", control
    return f"not sent: a valid body would make a {kind}, which nothing removes", control


def names_owned(
    case: Case, owned: Collection[str], linked: Collection[str], linked_body: bool
) -> bool:
    """Whether every reference of `case` names what the run made: each path id, each value of a
    query parameter the document marks a reference (the status query's comma-separated `ids`)
    and each string of a body it marks so (process) was filled by a link of the run (`linked`:
    the path and query parameters; `linked_body`) or names what the run created (`owned`). Only
    then does the request follow the document (its status judged); a reference to nothing (`0`,
    `LPT1`, "") makes it a robustness case: a 5xx there is ROBUST-NO-5XX's, not the status's."""
    op = by_id(operation_id(case))
    paths = (case.path_parameters or {}).items()
    named = [str(value) for name, value in paths if name not in linked]
    query = case.query or {}
    for name in op.query_references:
        if name in query and name not in linked:
            named += [part.strip() for part in str(query[name]).split(",")]
    body = case.body
    if op.body_references and not linked_body and isinstance(body, list):
        named += [item if isinstance(item, str) else "" for item in body]
    return all(value in owned for value in named)


def sending(case: Case) -> AbstractContextManager[None]:
    """Around a case's sending: a negative one is one a conformant target refuses."""
    return nullcontext() if positive(case) else refusal_expected()


def positive(case: Case) -> bool:
    return case.meta is None or case.meta.generation.mode.is_positive


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
