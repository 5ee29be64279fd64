"""Real resources of one principal for the auth, isolation and robustness checks, and their look.

`Resources` creates, on first need, what the path parameters of an operation name (a thread with a
finished run, a conversation with a message, a knowledge base per prefix with one document, a
context file, an assistant found by search) with plain requests. Setup is not a finding: what
cannot be created raises `Unavailable`, and the checks needing it skip with the reason.

`reads` names, for flows/owner_reads.py, what the owner reads of them around a request that
should change nothing.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from assistant_conformance.contract.openapi import MARKER_KEY, Operation
from assistant_conformance.report import redact
from assistant_conformance.suite.flows import is_success, json_of
from assistant_conformance.suite.flows.agent import Agent, assistants
from assistant_conformance.suite.flows.control import finished_run
from assistant_conformance.suite.flows.owner_reads import CONVERSATIONS, OwnerRead, owner_reads
from assistant_conformance.suite.flows.runs import THREADS
from assistant_conformance.suite.judging.findings import Blocked
from assistant_conformance.suite.safety.ledger import Ledger

CONTEXT_FILES = "/api/ai/contexts/file"
# What an operation creates when it (wrongly) succeeds: the delete path of it, by operationId.
DELETE_CREATED = {
    "createThread": (THREADS + "/{}", "thread_id"),
    "copyThread": (THREADS + "/{}", "thread_id"),
    "createConversation": (CONVERSATIONS + "/{}", "id"),
    "v1CreateKnowledgebase": ("/api/ai/v1/kb/{}", "id"),
    "knowledgesCreateKnowledgebase": ("/api/ai/knowledges/{}", "id"),
    "createContextFile": (CONTEXT_FILES + "/{}", "id"),
    "v1CreateFile": (CONTEXT_FILES + "/{}", "id"),
}


class Unavailable(Exception):
    """A resource the check needs could not be created; the message says why."""


def created_path(op: Operation, response: httpx.Response) -> str | None:
    """The delete path of what a (wrongly) successful request of `op` created, if it says."""
    body = json_of(response) if is_success(response) and not op.streaming else None
    if op.operation_id in DELETE_CREATED and isinstance(body, dict):
        path, name = DELETE_CREATED[op.operation_id]
        if isinstance(body.get(name), str):
            return path.format(body[name])
    return None


def track_created(ledger: Ledger, op: Operation, response: httpx.Response) -> None:
    """A request that should have been refused but created something: have the ledger remove it,
    and mask a chat-kit secret it answered (call before recording the response as evidence)."""
    if (path := created_path(op, response)) is not None:
        ledger.track("DELETE", path)
    body = json_of(response) if is_success(response) and not op.streaming else None
    if isinstance(body, dict) and isinstance(body.get("client_secret"), str):
        redact.register(body["client_secret"])


def _id(response: httpx.Response, name: str, what: str) -> str:
    body = json_of(response)
    value = body.get(name) if isinstance(body, dict) else None
    if not is_success(response) or not isinstance(value, str) or not value:
        raise Unavailable(f"cannot create {what}: HTTP {response.status_code}, no string {name!r}")
    return value


@dataclass
class Real:
    """Real ids for the path parameters of one operation, and body/query values that fit them."""

    ids: dict[str, str]
    extra: dict[str, Any]


@dataclass
class Resources:
    api: httpx.Client
    ledger: Ledger
    process_timeout: float
    agent: Agent
    marker: str = ""
    _shared: dict[str, str] = field(default_factory=dict)
    _docs: dict[str, str] = field(default_factory=dict)  # knowledge base id -> document id
    _markers: dict[str, str] = field(default_factory=dict)  # thread id -> its metadata marker
    _failed: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.marker = self.marker or f"{self.ledger.run_prefix}-{secrets.token_hex(3)}"

    # --- ids ---------------------------------------------------------------------------------

    def isolated(self, op: Operation) -> Real:
        """Real ids for a check that must see only its own request's effect: the target is created
        anew for a delete (it may go) and for a thread (a refused PATCH that went through anyway
        would change the metadata by which copies of the shared thread are found)."""
        return self.real(op, fresh=op.method == "DELETE" or op.target == "thread_id")

    def real(
        self, op: Operation, *, fresh: bool = False, keep_last: bool = True, ran: bool = False
    ) -> Real:
        """Real ids for `op`; `fresh`: its target is created anew (for deletes); not `keep_last`:
        the last parameter stays a placeholder (an unknown child in a real parent); `ran`: its
        thread has had a run (a state in which a server reads input otherwise)."""
        keys = op.keys if keep_last else op.keys[:-1]
        ids: dict[str, str] = {}
        for key in keys:
            if key == "feedback_id":
                ids.update(self._feedback(ids))
                continue
            kind = f"kb:{op.path.split('/{')[0]}" if key == "kb" else key
            kind = "thread_ran" if ran and key == "thread_id" else kind
            if fresh and key == op.target:
                ids[key] = self._create(kind, ids)
            else:
                ids[key] = self._get(kind, ids)
        return Real(ids, self._extra(ids))

    def run_values(self) -> dict[str, Any]:
        """`assistant_id` and `input` of a run of the session's agent (none where runs are not
        judged: a request then names no assistant, and starts no run on an arbitrary one)."""
        try:
            self.agent.ready()  # the input the control found the target takes
        except Blocked:
            return {}
        if self.agent.assistant_id is None:
            return {}
        body = self.agent.unchecked_body("conformance check")
        return {"assistant_id": body["assistant_id"], "input": body["input"]}

    def _extra(self, ids: Mapping[str, str]) -> dict[str, Any]:
        extra: dict[str, Any] = self.run_values()
        if (doc := self._docs.get(ids.get("kb", ""))) is not None:
            extra["ids"] = extra["item"] = doc
        return extra

    def _get(self, kind: str, ids: dict[str, str]) -> str:
        if kind in self._failed:
            raise Unavailable(self._failed[kind])
        if kind not in self._shared:
            try:
                self._shared[kind] = self._create(kind, ids)
            except Unavailable as exc:
                self._failed[kind] = str(exc)
                raise
        return self._shared[kind]

    def _create(self, kind: str, ids: dict[str, str]) -> str:
        api = self.api
        if kind == "thread_id":
            marker = f"{self.marker}-{secrets.token_hex(3)}"
            thread = _id(
                api.post(THREADS, json={"metadata": {MARKER_KEY: marker}}), "thread_id", "a thread"
            )
            self.ledger.track("DELETE", f"{THREADS}/{thread}")
            self._markers[thread] = marker
            return thread
        if kind == "run_id":
            return self._run(ids.get("thread_id") or self._get("thread_id", ids))
        if kind == "thread_ran":
            thread = self._create("thread_id", ids)
            self._run(thread)
            return thread
        if kind == "conversation_id":
            conversation = _id(
                api.post(CONVERSATIONS, json={"title": self.marker}), "id", "a conversation"
            )
            self.ledger.track("DELETE", f"{CONVERSATIONS}/{conversation}")
            return conversation
        if kind == "message_id":
            conversation = ids.get("conversation_id") or self._get("conversation_id", ids)
            body = {"role": "user", "content": self.marker}
            return _id(
                api.post(f"{CONVERSATIONS}/{conversation}/messages", json=body), "id", "a message"
            )
        if kind.startswith("kb:"):
            return self._kb(kind.removeprefix("kb:"))
        if kind == "context_file":
            upload = {"file": (f"{self.marker}.txt", b"conformance context file\n", "text/plain")}
            file_id = _id(api.post(CONTEXT_FILES, files=upload), "id", "a context file")
            self.ledger.track("DELETE", f"{CONTEXT_FILES}/{file_id}")
            return file_id
        if kind == "assistant":
            found = assistants(api)
            if not found:
                raise Unavailable("assistant search answers no assistant with an assistant_id")
            return str(found[0]["assistant_id"])  # only read (GET /assistants/{id}), never run
        raise Unavailable(f"no way to create {kind}")

    def _run(self, thread: str) -> str:
        """A finished run, made whichever way the control found working."""
        try:
            return finished_run(self.agent, thread)
        except Blocked as exc:
            raise Unavailable(str(exc).removeprefix("not judged: ")) from None

    def _feedback(self, ids: Mapping[str, str]) -> dict[str, str]:
        """A feedback on the message, where the target can create one: no operation of the
        document does, so this tries the deployed servers' `POST .../feedbacks` and otherwise
        leaves the feedback id a placeholder."""
        path = f"{CONVERSATIONS}/{ids['conversation_id']}/messages/{ids['message_id']}/feedbacks"
        response = self.api.post(path, json={"rating": "like", "content": self.marker})
        try:
            return {"feedback_id": _id(response, "id", "a feedback")}
        except Unavailable:
            return {}

    def _kb(self, prefix: str) -> str:
        name = f"{self.marker}-{prefix.rsplit('/', 1)[-1]}-{secrets.token_hex(3)}"  # unique
        kb_id = _id(self.api.post(prefix, json={"name": name}), "id", "a knowledge base")
        self.ledger.track("DELETE", f"{prefix}/{kb_id}")
        docs = json_of(
            self.api.post(f"{prefix}/{kb_id}/bulk", json=[{"name": self.marker, "content": "x"}])
        )
        first = docs[0] if isinstance(docs, list) and docs else None
        if isinstance(first, dict) and isinstance(first.get("id"), str):
            self._docs[kb_id] = first["id"]
        return kb_id

    # --- what a client can see of them ---------------------------------------------------------

    def reads(self, op: Operation, ids: Mapping[str, str]) -> list[OwnerRead]:
        """What the owner reads of the resource a request of `op` on `ids` acts on."""
        return owner_reads(op, ids, self._markers, self._docs)
