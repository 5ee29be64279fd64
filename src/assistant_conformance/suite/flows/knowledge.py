"""Knowledge-base flows (interface 4.1): valid bodies, create, update (documents: processing.py).

Both prefixes serve the same operations; every helper takes the prefix. Status requirements are
per prefix (KB-V1-STATUS, KB-KNOWLEDGES-STATUS), so a test names the one of its prefix. A body
the suite sends as valid claims only what the suite owns: every field of section 2.1 but those
naming another resource (REFERENCES), which carry a value only where the user gave one
(--kb-workspace-id, ...); a server may check what they name (the deployed one does). Names are
unique per run, prefix, test and body: a server may keep names unique (the deployed one does).
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from assistant_conformance.contract.openapi import operation_label
from assistant_conformance.suite.flows import identifier, is_client_error, is_success, json_of
from assistant_conformance.suite.judging import findings
from assistant_conformance.suite.safety.ledger import Ledger

V1, KNOWLEDGES = "/api/ai/v1/kb", "/api/ai/knowledges"
PREFIXES = (V1, KNOWLEDGES)
PREFIX_NAMES = {V1: "v1-kb", KNOWLEDGES: "knowledges"}
STATUS_REQ = {V1: "KB-V1-STATUS", KNOWLEDGES: "KB-KNOWLEDGES-STATUS"}
VALID = "KB-VALID-ACCEPTED"
# Terminal document statuses of the deployed servers (deployed-system notes): processing stops.
# Fields of 2.1 naming another resource (a workspace, an integration, a copilot), by path.
REFERENCES = ("workspaceId", "integrationId", "copilotModel.copilotId")
EVERY_FIELD = "a Knowledgebase with every field of 2.1 (declared types, allowed values)"


def other_prefix(prefix: str) -> str:
    return KNOWLEDGES if prefix == V1 else V1


def with_references(
    body: dict[str, Any], references: Mapping[str, str], keep: Collection[str] = ()
) -> dict[str, Any]:
    """`body` with each reference field it holds set to the user's value (`references`, by path), or
    left out where none was given; the paths in `keep` (broken on purpose) stay as they are."""
    shaped = dict(body)
    for path in REFERENCES:
        parent, _, leaf = path.rpartition(".")
        if path in keep or parent in keep:
            continue
        holder = shaped
        if parent:
            if not isinstance(shaped.get(parent), dict):
                continue
            holder = shaped[parent] = dict(shaped[parent])
        if leaf in holder and path in references:
            holder[leaf] = references[path]
        elif leaf in holder:
            del holder[leaf]
    return shaped


@dataclass
class Bodies:
    """The Knowledgebase bodies (interface 2.1) of one test: names carry the run prefix, the
    API prefix, the test's label, a token of the test and a count (unique however tests are
    spread or repeated); references only as the user gave them (`references`, by path)."""

    run_prefix: str
    references: Mapping[str, str] = field(default_factory=dict)
    test: str = field(default_factory=lambda: secrets.token_hex(3))
    count: Iterator[int] = field(default_factory=itertools.count)

    def name(self, prefix: str, label: str) -> str:
        return f"{self.run_prefix}-{PREFIX_NAMES[prefix]}-{label}-{self.test}-{next(self.count)}"

    def valid(self, prefix: str, label: str, *, variant: int = 0) -> dict[str, Any]:
        """Every field valid; each `variant` changes every field (the name included)."""
        permission = ("organization", "public", "private")[variant % 3]
        named = "(a reference: the user's value, else left out)"
        body = {
            "workspaceId": named,
            "name": self.name(prefix, label),
            # Long, non-ASCII and multi-line: a server that cuts or re-encodes text shows it.
            "description": f"Scenario KB {variant}: café ☕ — naïve 東京\nline two " + "x" * 300,
            "permission": permission,
            "type": "standard",
            "recall": {"topK": 5 + variant, "score": 0.25 + variant / 10},
            "parserConfig": {
                "chunkSize": 120 + variant,
                "chunkOverlap": 10 + variant,
                "delimiter": "\n\n .",
            },
            "integrationId": named,
            "extKnowledgebaseId": f"{self.run_prefix}-ext-{variant}",
            "copilotModel": {
                "copilotId": named,
                "modelType": "text-embedding",
                "model": f"embedding-model-{variant}",
            },
        }
        return with_references(body, self.references)

    def minimal(self, prefix: str, label: str) -> dict[str, Any]:
        """The least a create can carry: a name of its own."""
        return {"name": self.name(prefix, f"{label}-minimal")}


def document_bodies(run_prefix: str, count: int) -> list[dict[str, Any]]:
    """KnowledgeDocuments (the suite's interpreted shape) carrying text to process."""
    text = "Knowledge bases hold documents. Processing splits them into chunks. " * 8
    return [
        {
            "name": f"{run_prefix}-doc-{i}.txt",
            "category": "text",
            "type": "txt",
            "mimeType": "text/plain",
            "content": f"Document {i}. {text}",
            "metadata": {"run": run_prefix, "index": i},
        }
        for i in range(count)
    ]


@dataclass(frozen=True)
class Written:
    """A create or full update sent with a valid body: the answer to it, and the answer that
    made or changed the knowledge base (that one, the minimal body's, or none)."""

    answer: httpx.Response
    accepted: httpx.Response | None

    @property
    def valid_accepted(self) -> bool:
        return self.accepted is self.answer


def message_of(response: httpx.Response) -> str:
    """What an answer says: its JSON `message` (as the deployed servers write errors), or text."""
    body = json_of(response)
    said = body.get("message") if isinstance(body, dict) else None
    text = str(said) if said is not None else response.text
    return text if len(text) <= 200 else text[:197] + "..."


def status_requirement(url: str) -> str:
    """The status requirement of a request under either prefix."""
    return STATUS_REQ[V1 if url.startswith(V1) else KNOWLEDGES]


def expect_accepted(response: httpx.Response, what: str, status: int) -> bool:
    """A request the document shows valid: a 2xx (then its status is judged); a 4xx refuses
    valid input (KB-VALID-ACCEPTED); anything else (a 5xx) fails the operation's status."""
    status_req = status_requirement(response.request.url.path)
    if is_client_error(response):
        return findings.expect(VALID, False, f"{what}: HTTP 2xx", response, response)
    if is_success(response):
        findings.expect(VALID, True, f"{what}: HTTP 2xx")
    return findings.expect_status(status_req, response, status)


def write_kb(
    api: httpx.Client,
    method: str,
    url: str,
    body: dict[str, Any],
    minimal: dict[str, Any],
    status: int,
) -> Written:
    """Send `body` (valid: every field of 2.1) and judge its status. Refused with a 4xx, the same
    request with `minimal` tells a server that refuses the document's body (KB-VALID-ACCEPTED
    fails, quoting the answer) from one whose operation takes nothing (its status fails)."""
    status_req = status_requirement(url)
    answer = api.request(method, url, json=body)
    if not is_client_error(answer):
        findings.expect_status(status_req, answer, status)
        if is_success(answer):
            findings.expect(VALID, True, f"{EVERY_FIELD}: HTTP 2xx")
        return Written(answer, answer if is_success(answer) else None)
    fallback = api.request(method, url, json=minimal)
    refused = f"HTTP {answer.status_code} {message_of(answer)!r} to {EVERY_FIELD}"
    what = operation_label(method, httpx.URL(url).path)
    if is_success(fallback):
        findings.expect(
            VALID,
            False,
            f"{what}, {EVERY_FIELD}: HTTP 2xx",
            f"{refused}; the same request with only {minimal} answered HTTP {fallback.status_code}",
            answer,
        )
        findings.expect_status(status_req, fallback, status)
        return Written(answer, fallback)
    findings.expect(
        status_req,
        False,
        f"{what}: HTTP {status} (for a valid body, or at least for {minimal})",
        f"{refused}; HTTP {fallback.status_code} {message_of(fallback)!r} to {minimal}",
        answer,
    )
    return Written(answer, None)


def create_kb(api: httpx.Client, ledger: Ledger, prefix: str, bodies: Bodies, label: str) -> str:
    """Create a knowledge base (201) and track its delete; answer its id."""
    return created_kb(api, ledger, prefix, bodies, label)[0]


def created_kb(
    api: httpx.Client, ledger: Ledger, prefix: str, bodies: Bodies, label: str
) -> tuple[str, Written]:
    """Create a knowledge base with a valid body (the minimal one where that is refused), track
    its delete; answer its id and what was written (its `answer`, to the valid body, is the
    control of a check that the same operation rejects bad input)."""
    written = write_kb(
        api, "POST", prefix, bodies.valid(prefix, label), bodies.minimal(prefix, label), 201
    )
    if written.accepted is None:
        raise findings.Blocked(
            f"not judged: {prefix} created no knowledge base ({STATUS_REQ[prefix]})"
        )
    kb_id = identifier(written.accepted)
    ledger.track("DELETE", f"{prefix}/{kb_id}")
    return kb_id, written


def track_if_created(ledger: Ledger, prefix: str, response: httpx.Response) -> None:
    """A create that should have been rejected but succeeded: remove what it stored."""
    body = json_of(response)
    if is_success(response) and isinstance(body, dict) and isinstance(body.get("id"), str):
        ledger.track("DELETE", f"{prefix}/{body['id']}")


def read_kb(api: httpx.Client, prefix: str, kb_id: str) -> dict[str, Any] | None:
    """The knowledge base as read back, where the target has a read (none in the contract)."""
    response = api.get(f"{prefix}/{kb_id}")
    body = json_of(response)
    if response.status_code == 200 and isinstance(body, dict) and body.get("id") == kb_id:
        return body
    return None
