"""Real resources of one principal for the auth, isolation and robustness checks, and their look.

`Resources` creates, on first need, what the path parameters of an operation name (a thread with a
finished run, a conversation with a message, a knowledge base per prefix with one document, a
context file, an assistant found by search) with plain requests. Setup is not a finding: what
cannot be created raises `Unavailable`, and the checks needing it skip with the reason.

`snapshot` reads, with the owner's credential and through the document's operations only, what a
request on those ids could have changed; two equal snapshots around a request show it changed
nothing the contract lets a client see.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import httpx

from assistant_conformance.contract.openapi import MARKER_KEY, Operation
from assistant_conformance.report import redact
from assistant_conformance.suite.flows import is_success, json_of
from assistant_conformance.suite.flows.agent import Agent, assistants
from assistant_conformance.suite.flows.control import finished_run
from assistant_conformance.suite.flows.runs import THREADS
from assistant_conformance.suite.http import running, trail
from assistant_conformance.suite.judging import checks
from assistant_conformance.suite.judging.findings import Blocked
from assistant_conformance.suite.judging.idle_reads import masked, varying
from assistant_conformance.suite.safety.ledger import Ledger

CONVERSATIONS, CONTEXT_FILES = "/api/ai/conversations", "/api/ai/contexts/file"
PAGE = {"limit": "100", "offset": "0"}
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
    last_reads: list[httpx.Response] = field(default_factory=list)  # the last snapshot's reads

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

    def snapshot(
        self, op: Operation, ids: Mapping[str, str], *, after: bool = False
    ) -> dict[str, Any]:
        """What the owner reads of the resource `op` acts on (its last path parameter; a feedback
        is read through its message's list). A context file has no read in the document: `after`
        deletes it with the owner's credential, which succeeds only if it is still there."""
        reads = self._reads(op, ids)  # independent reads: sent side by side
        answers = running.at_once([partial(self._read, *read) for read in reads.values()])
        self.last_reads = [response for response, _ in answers]
        seen = {name: value for name, (_, value) in zip(reads, answers, strict=True)}
        if op.target == "context_file":
            deleted = self.api.delete(f"{CONTEXT_FILES}/{ids['context_file']}") if after else None
            seen["context file"] = (
                "present"
                if deleted is None or is_success(deleted)
                else (f"gone: the owner's delete answered HTTP {deleted.status_code}")
            )
        return seen

    def _reads(self, op: Operation, ids: Mapping[str, str]) -> dict[str, tuple[str, str, Any]]:
        thread, conversation = ids.get("thread_id"), ids.get("conversation_id")
        if op.target == "thread_id":
            search = {"metadata": {MARKER_KEY: self._markers.get(str(thread), "")}, "limit": 100}
            return {
                "thread": ("GET", f"{THREADS}/{thread}", None),
                "state": ("GET", f"{THREADS}/{thread}/state", None),
                "runs": ("GET", f"{THREADS}/{thread}/runs", PAGE),
                "threads with its metadata": ("POST", f"{THREADS}/search", search),
            }
        if op.target == "run_id":
            return {"run": ("GET", f"{THREADS}/{thread}/runs/{ids['run_id']}", None)}
        if op.target == "conversation_id":
            return {
                "conversation": ("GET", f"{CONVERSATIONS}/{conversation}", None),
                "messages": ("GET", f"{CONVERSATIONS}/{conversation}/messages", PAGE),
            }
        if op.target in ("message_id", "feedback_id"):
            path = f"{CONVERSATIONS}/{conversation}/messages/{ids['message_id']}"
            return {"message": ("GET", path, None), "feedbacks": ("GET", f"{path}/feedbacks", None)}
        if op.target == "kb":
            doc = self._docs.get(ids["kb"], "")
            return {
                "documents": ("GET", f"{op.path.split('/{')[0]}/{ids['kb']}/status", {"ids": doc})
            }
        return {}

    def _read(self, method: str, url: str, data: Any) -> tuple[httpx.Response, Any]:
        if method == "GET":
            response = self.api.get(url, params=data)
        else:
            response = self.api.post(url, json=data)
        # read as a replay reads it (checks.read_of), but whole: the trail keeps 256 KiB of a body
        whole = trail.Entry(method, url, {}, None, status=response.status_code)
        whole.response_body = bytearray(response.content)
        return response, checks.read_of(whole)


def changes(
    before: Mapping[str, Any], after: Mapping[str, Any], idle: Mapping[str, Any] | None = None
) -> list[str]:
    """What differs between two snapshots, one line per read; where a second snapshot taken
    before (`idle`) already differed from the first, that place is not compared."""
    out = []
    for name in sorted(set(before) | set(after)):
        places = varying(before.get(name), idle.get(name)) if idle is not None else set()
        old, new = masked(before.get(name), places), masked(after.get(name), places)
        if old != new:
            out.append(f"{name}: {old!r} -> {new!r}"[:400])
    return out
