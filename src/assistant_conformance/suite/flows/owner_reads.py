"""What the owner reads of a resource around a request that should change nothing (a request
refused for its credential, another principal's): only what that request could have changed.

- the resource itself and what hangs below it, read with the owner's credential through the
  document's operations; a collection filtered to what the run made (a thread's runs: those naming
  the thread; a thread search: the threads carrying the thread's mark), the filter kept in the
  check's data (judging/idle_reads.py);
- twice before the request (what differs then is no effect), and after it: a read that differs is
  read again, AGREE_APART seconds apart, until two reads agree (at most AGREE_TRIES more); one that
  keeps changing with no request of the run sent is other traffic's doing, and not compared.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import httpx

from assistant_conformance.contract.openapi import MARKER_KEY, Operation
from assistant_conformance.suite.flows import AGREE_APART, AGREE_TRIES
from assistant_conformance.suite.flows.runs import THREADS
from assistant_conformance.suite.http import running_test, trail
from assistant_conformance.suite.judging import checks, findings
from assistant_conformance.suite.judging.idle_reads import compared, described

CONVERSATIONS = "/api/ai/conversations"
PAGE = {"limit": "100", "offset": "0"}


@dataclass(frozen=True)
class OwnerRead:
    """One read of the owner's: a name for the finding, the request, and the filter that keeps
    only what the run made of a collection (None: the answer is the run's own resource)."""

    name: str
    method: str
    url: str
    data: Any = None
    where: dict[str, Any] | None = None

    def send(self, api: httpx.Client) -> httpx.Response:
        if self.method == "GET":
            return api.get(self.url, params=self.data)
        return api.post(self.url, json=self.data)


def owner_reads(
    op: Operation, ids: Mapping[str, str], marks: Mapping[str, str], docs: Mapping[str, str]
) -> list[OwnerRead]:
    """The reads of what a request of `op` on `ids` acts on (its last path parameter; a feedback
    through its message's list); `marks`: a thread's mark in its metadata; `docs`: a knowledge
    base's document. A context file has no read in the document: none."""
    thread, conversation = ids.get("thread_id"), ids.get("conversation_id")
    if op.target == "thread_id":
        mark = marks.get(str(thread), "")
        search = {"metadata": {MARKER_KEY: mark}, "limit": 100}
        return [
            OwnerRead("thread", "GET", f"{THREADS}/{thread}"),
            OwnerRead("state", "GET", f"{THREADS}/{thread}/state"),
            OwnerRead(
                "runs", "GET", f"{THREADS}/{thread}/runs", PAGE, _naming("thread_id", thread)
            ),
            OwnerRead(
                "threads with its metadata",
                "POST",
                f"{THREADS}/search",
                search,
                {"key": f"metadata.{MARKER_KEY}", "equals": mark, "unnamed": "drop"},
            ),
        ]
    if op.target == "run_id":
        return [OwnerRead("run", "GET", f"{THREADS}/{thread}/runs/{ids['run_id']}")]
    if op.target == "conversation_id":
        messages = f"{CONVERSATIONS}/{conversation}/messages"
        named = _naming(["conversationId", "conversation_id"], conversation)
        return [
            OwnerRead("conversation", "GET", f"{CONVERSATIONS}/{conversation}"),
            OwnerRead("messages", "GET", messages, PAGE, named),
        ]
    if op.target in ("message_id", "feedback_id"):
        path = f"{CONVERSATIONS}/{conversation}/messages/{ids['message_id']}"
        named = _naming(["messageId", "message_id"], ids["message_id"])
        return [
            OwnerRead("message", "GET", path),
            OwnerRead("feedbacks", "GET", f"{path}/feedbacks", None, named),
        ]
    if op.target == "kb":
        status = f"{op.path.split('/{')[0]}/{ids['kb']}/status"
        return [OwnerRead("documents", "GET", status, {"ids": docs.get(ids["kb"], "")})]
    return []


def _naming(key: str | list[str], value: Any) -> dict[str, Any]:
    """The items of a list that name `value` (or name nothing: then none can be told apart)."""
    return {"key": key, "equals": value, "unnamed": "keep"}


def look(api: httpx.Client, reads: list[OwnerRead]) -> list[httpx.Response]:
    """Every read once, side by side (they are independent)."""
    return running_test.at_once([partial(read.send, api) for read in reads])


def whole(response: httpx.Response) -> trail.Entry:
    """The answer as a replay reads it, but whole (the trail keeps 256 KiB of a body)."""
    request = response.request
    entry = trail.Entry(request.method, str(request.url), {}, None, status=response.status_code)
    entry.response_body = bytearray(response.content)
    return entry


@dataclass
class AroundRequest:
    """The owner's reads of a resource around one request: twice before it, after it until quiet."""

    api: httpx.Client
    reads: list[OwnerRead]
    before: list[httpx.Response] = field(default_factory=list)
    idle: list[httpx.Response] = field(default_factory=list)
    after: list[httpx.Response | None] = field(default_factory=list)  # None: never quiet
    unquiet: list[str] = field(default_factory=list)

    @classmethod
    def read_before(cls, api: httpx.Client, reads: list[OwnerRead]) -> AroundRequest:
        return cls(api, reads, look(api, reads), look(api, reads))

    def read_after(self) -> None:
        """Every read after the request; one that differs, again until two reads agree."""
        first = look(self.api, self.reads)
        self.after = [self._quiet(i, answer) for i, answer in enumerate(first)]

    def _quiet(self, i: int, answer: httpx.Response) -> httpx.Response | None:
        read, seen = self.reads[i], [answer]
        while True:
            was, now = self._compared(i, seen[-1])
            if was == now or (len(seen) > 1 and self._compared(i, seen[-2])[1] == now):
                return seen[-1]  # no change, or a change that stayed across a settle
            if len(seen) > AGREE_TRIES:
                break
            time.sleep(AGREE_APART)
            seen.append(read.send(self.api))
        self.unquiet.append(
            f"{read.name}{described(read.where)} changed {len(seen) - 1} times in "
            f"{(len(seen) - 1) * AGREE_APART:g} s after the request and never read the same twice"
        )
        return None

    def _compared(self, i: int, answer: httpx.Response) -> tuple[Any, Any]:
        where = self.reads[i].where
        return compared(whole(self.before[i]), whole(answer), whole(self.idle[i]), where)

    def judge(self, req_id: str, request: object = None) -> None:
        """`req_id` holds where every quiet read reads the same as before; reads that never were
        quiet are not compared (the expectation says which), and if none was, not judged."""
        kept = [i for i, answer in enumerate(self.after) if answer is not None]
        left_out = f"; not compared: {'; '.join(self.unquiet)}" if self.unquiet else ""
        if not kept:
            findings.not_judged(req_id, f"not judged: other traffic{left_out.removeprefix(';')}")
            return
        check = checks.SameReadsCheck(
            entries=tuple(findings.index(r) for i in kept for r in (self.before[i], self.after[i])),
            idle=tuple(findings.index(self.idle[i]) for i in kept),
            filters=tuple(self.reads[i].where for i in kept),
            request=findings.index(request) if isinstance(request, httpx.Response) else None,
        )
        names = ", ".join(self.reads[i].name for i in kept)
        expected = (
            f"the resource reads the same before and after ({names}; a read that differs read "
            f"again {AGREE_APART:g} s apart until two agree){left_out}"
        )
        findings.judge(req_id, check, expected, request)
