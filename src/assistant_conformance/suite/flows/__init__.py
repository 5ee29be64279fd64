"""Reusable scenario flows, one module per interface area, and the helpers they share.

- agent.py: the agent every run goes to (assistant, input, options); control.py: which agent, and
  the control run that shows how a run of it works;
- runs.py: threads, runs and streams; agreement.py: a run read after its stream agrees with it;
  threads.py: thread state writes;
- knowledge.py: knowledge bases and documents; conversations.py: conversations and messages;
- auth.py: real resources of one principal for the auth, isolation and robustness checks.

Helpers here read answers only by what spec/openapi.yaml names (identifiers, list fields); an
answer without them is a ROBUST-RESPONSE-SHAPE finding, so tests using them name that ID.

May import: config, http, judging, safety.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from assistant_conformance.contract.openapi import Operation
from assistant_conformance.suite.config.shared import SharedCounts
from assistant_conformance.suite.http import running, trail
from assistant_conformance.suite.judging import checks, findings
from assistant_conformance.suite.judging.charges import SHAPE

POLL_INTERVAL = 0.05  # seconds between two reads of a polling loop


def json_of(response: httpx.Response) -> Any:
    """The JSON body, or None when there is none or it is not JSON."""
    try:
        return response.json()
    except ValueError:
        return None


def identifier(response: httpx.Response, name: str = "id") -> str:
    """The string identifier `name` of a JSON object answer; stops the test when it is missing."""
    body = json_of(response)
    value = body.get(name) if isinstance(body, dict) else None
    findings.require(
        SHAPE,
        isinstance(value, str) and value != "",
        f"a JSON object with a string {name!r}",
        response,
        response,
    )
    assert isinstance(value, str)
    return value


def items_of(response: httpx.Response, field: str = "items") -> list[Any]:
    """The list of a list answer: a bare array, or the array under `field`; stops when neither."""
    body = json_of(response)
    if isinstance(body, dict):
        body = body.get(field)
    findings.require(
        SHAPE,
        isinstance(body, list),
        f"a JSON array, or an object with an array {field!r}",
        response,
        response,
    )
    assert isinstance(body, list)
    return body


def is_success(response: httpx.Response) -> bool:
    return 200 <= response.status_code < 300


def is_client_error(response: httpx.Response) -> bool:
    return 400 <= response.status_code < 500


@dataclass
class Waits:
    """The polling loops that waited their whole bound in this run, by what they waited for (a
    check's kind), shared by every process of the run (config/shared.py): a loop of a kind that
    waited out its bound once reads once and, where the check does not hold, is not judged with
    that reason, instead of waiting the bound again in every test that needs it."""

    counts: SharedCounts

    def spent(self, kind: str) -> bool:
        return self.counts.get(kind) > 0

    def waited_out(self, kind: str) -> None:
        self.counts.add(kind)


def poll(
    read: Callable[[], httpx.Response],
    until: checks.Check,
    timeout: float,
    waits: Waits | None = None,
) -> tuple[httpx.Response, bool]:
    """Read until the check `until` (without its entry) holds on the answer or `timeout` seconds
    pass; answer the last read and whether it held. A replay polls by the same words. With
    `waits`: where a loop of this kind waited its whole bound before in the run, one read, and
    not judged (findings.Blocked) where it does not hold."""
    kind = str(until["kind"])
    waited_before = waits is not None and waits.spent(kind)
    deadline = time.monotonic() + (0 if waited_before else timeout)
    with running.polling(until, timeout):
        while True:
            response = read()
            if checks.holds({**until, "entry": 0}, [response.extensions[trail.ENTRY]]):
                return response, True
            if time.monotonic() >= deadline:
                break
            time.sleep(POLL_INTERVAL)
    if waits is None:
        return response, False
    if waited_before:
        raise findings.Blocked(
            f"not judged: {kind} did not hold within its bound ({timeout:g} s) when polled "
            "earlier in this run, and does not now (waited once, not again)"
        )
    waits.waited_out(kind)
    return response, False


def send(client: httpx.Client, op: Operation, url: str, **kwargs: Any) -> httpx.Response:
    """Send one request of `op`, bounded: an event stream is closed as soon as its status is known.

    The request timeout of `client` bounds the wait for the status; an error body is read whole.
    """
    if not op.streaming:
        return client.request(op.method, url, **kwargs)
    headers = {"Accept": "text/event-stream", **kwargs.pop("headers", {})}
    with client.stream(op.method, url, headers=headers, **kwargs) as response:
        if not response.is_success:
            response.read()
    return response
