"""Reusable scenario flows, one module per interface area, and the helpers they share.

- agent.py: the agent every run goes to (assistant, input, options); control.py: which agent, and
  the control run that shows how a run of it works;
- runs.py: threads, runs and streams; agreement.py: a run read after its stream agrees with it;
  threads.py: thread state writes;
- knowledge.py: knowledge bases; processing.py: their documents, processed and polled (whether
  processing completes judged in whichever test polls in vain first); conversations.py:
  conversations and messages;
- auth.py: real resources of one principal for the auth, isolation and robustness checks;
  owner_reads.py: what the owner reads of one around a request that should change nothing.

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
from assistant_conformance.suite.config.run_folder import SharedCounts
from assistant_conformance.suite.http import running_test, trail
from assistant_conformance.suite.judging import checks, findings
from assistant_conformance.suite.judging.idle_reads import filter_keeps
from assistant_conformance.suite.judging.schemathesis_charges import SHAPE

POLL_INTERVAL = 0.05  # seconds between two reads of a polling loop
# Two reads that must agree (a run's status that stays, a collection at rest): this far apart, and
# at most this many reads more before the reading is given up.
AGREE_APART = 0.3
AGREE_TRIES = 4


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


def of_thread(listed: list[Any], thread_id: str) -> list[dict[str, Any]]:
    """The runs of a run list that are the thread's: a list may hold every thread's runs (the
    document does not say it holds only the thread's); a run naming no thread is kept."""
    where = {"key": "thread_id", "equals": thread_id, "unnamed": "keep"}
    return [run for run in listed if isinstance(run, dict) and filter_keeps(run, where)]


def is_success(response: httpx.Response) -> bool:
    return 200 <= response.status_code < 300


def is_client_error(response: httpx.Response) -> bool:
    return 400 <= response.status_code < 500


@dataclass
class Waits:
    """The polling loops that waited their whole bound in this run, by what they waited for (a
    check's kind), shared by every process of the run (config/run_folder.py): a loop of a kind that
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
    """Read until the check `until` (its entry checks.LOOP_ANSWER: each answer) holds on the
    answer or `timeout` seconds pass; answer the last read and whether it held. A replay polls by
    the same words (the HAR keeps `until` without its entry). With
    `waits`: where a loop of this kind waited its whole bound before in the run, one read, and
    not judged (findings.Blocked) where it does not hold."""
    kind = until.kind.value
    waited_before = waits is not None and waits.spent(kind)
    deadline = time.monotonic() + (0 if waited_before else timeout)
    with running_test.polling(until, timeout):
        while True:
            response = read()
            if checks.holds(until, [response.extensions[trail.ENTRY]]):
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


def settled(
    read: Callable[[], httpx.Response],
    until: checks.Check,
    key: str,
    timeout: float,
    was: Any = None,
) -> tuple[httpx.Response, list[Any], bool]:
    """`poll` until `until` holds, then read again AGREE_APART seconds apart until two reads agree
    at `key` (a dotted key of the JSON body), at most AGREE_TRIES more: what stays, not what was
    read once (`was`: the value a settled read found before, which a first read agreeing with it
    agrees with). Answers the last read, the values read at `key` in order, and whether two
    agreed. A replay reads by the same words (suite/evidence/resend.py)."""
    deadline = time.monotonic() + timeout
    agree = trail.Agreement(key, AGREE_APART, AGREE_TRIES, was)
    with running_test.polling(until, timeout, agree):
        seen: list[Any] = []
        while True:
            response = read()
            seen.append(checks.value_at(json_of(response), key))
            if checks.holds(until, [response.extensions[trail.ENTRY]]):
                break
            if time.monotonic() >= deadline:
                return response, seen, False
            time.sleep(POLL_INTERVAL)
        if was is not None and seen[-1] == was:
            return response, seen, True
        for _ in range(AGREE_TRIES):
            time.sleep(AGREE_APART)
            response = read()
            seen.append(checks.value_at(json_of(response), key))
            if seen[-1] == seen[-2]:
                return response, seen, True
        return response, seen, False


def in_order(values: list[Any]) -> str:
    """`running x3, success, interrupted x2`: values read one after another, repeats counted."""
    runs: list[list[Any]] = []
    for value in values:
        if runs and runs[-1][0] == value:
            runs[-1][1] += 1
        else:
            runs.append([value, 1])
    return ", ".join(f"{v}" + (f" x{n}" if n > 1 else "") for v, n in runs)


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
