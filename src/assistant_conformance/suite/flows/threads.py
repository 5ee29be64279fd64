"""Thread state flows (interface 4.4): writing values a real agent's typed state accepts.

The contract leaves the state's shape unstated, and real agents type it: LangGraph refuses a key
its graph's state does not have, and a thread that never ran has no graph to check against; other
servers keep state only in the checkpoints a run makes and answer a write on a thread that never
ran 409 ("run an assistant first": a conflict with the resource's state, RFC 9110 §15.5.10, not a
refusal of the body). So a state write sends the shape of the session's run input (a typed agent
accepts its own input's keys: `messages` for a chat agent), marked; where the target refuses it
(a 4xx) on the check's own thread that the check has not run yet, the thread runs once (the first
way of making a run the control found working) and the write is sent again. That the thread never
ran is what the check knows of its own thread, not a read of its run list (which a server may
fill with other threads' runs). Where the write is still refused, the reason says what each try
got. Values are compared as a client sees them: each written message found (by its content) among
the state's messages, every other value as written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from assistant_conformance.suite.flows import is_client_error, json_of
from assistant_conformance.suite.flows.agent import Agent, fill
from assistant_conformance.suite.flows.control import finished_run
from assistant_conformance.suite.flows.runs import THREADS
from assistant_conformance.suite.http.absent import unimplemented
from assistant_conformance.suite.judging import findings
from assistant_conformance.suite.judging.checks import mismatches
from assistant_conformance.suite.judging.error_bodies import error_message

STATUS = "THR-STATUS"


def thread_path(thread_id: str, tail: str = "") -> str:
    return f"{THREADS}/{thread_id}{tail}"


def state_values(agent: Agent, marker: str) -> dict[str, Any]:
    """Values of the run input's shape carrying `marker`; a plain object where it is no object."""
    values = fill(agent.input, marker)
    return values if isinstance(values, dict) and values else {"note": marker}


@dataclass
class StateWriter:
    """The state writes of one check on a thread it created (and so knows never ran, until it
    runs it here)."""

    api: httpx.Client
    agent: Agent
    thread_id: str
    ran: str = ""  # how the check ran the thread ("" while it has not)

    def write(self, values: dict[str, Any]) -> None:
        """POST state (201); a refusal before the thread has run leads to one run, then the
        write again (see the module docstring); the reason says what each try got."""
        response = self._post(values)
        before = ""
        if is_client_error(response) and not self.ran and not unimplemented(response):
            before = f"HTTP {response.status_code}{_said(response)} on a thread that never ran"
            try:
                run_id = finished_run(self.agent, self.thread_id)
            except findings.Blocked as stopped:
                reason = str(stopped.msg).removeprefix("not judged: ")
                raise findings.Blocked(
                    f"not judged: POST state answered {before}, and the run it asks could not be "
                    f"made: {reason}"
                ) from None
            self.ran = f"run {run_id}"
            response = self._post(values)
        try:
            findings.require_success(STATUS, response, 201)
        except findings.Blocked as stopped:
            if not before:
                raise
            after = f"HTTP {response.status_code}{_said(response)} after one {self.ran}"
            raise findings.Blocked(
                f"{stopped.msg} (POST state answered {before}, and {after}: the thread does not "
                "reach the state the write asks)"
            ) from None

    def _post(self, values: dict[str, Any]) -> httpx.Response:
        return self.api.post(thread_path(self.thread_id, "/state"), json={"values": values})


def _said(response: httpx.Response) -> str:
    message = error_message(json_of(response))
    return f" ({message[:160]!r})" if message else ""


def read_values(api: httpx.Client, thread_id: str) -> Any:
    response = api.get(thread_path(thread_id, "/state"))
    findings.require_success(STATUS, response, 200)
    body = json_of(response)
    return body.get("values") if isinstance(body, dict) else None


def differences(written: dict[str, Any], got: Any) -> list[str]:
    """Where the state read lacks what was written (extra keys and messages are fine)."""
    if not isinstance(got, dict):
        return [f"values: wrote an object, read {got!r}"]
    out: list[str] = []
    for key, value in written.items():
        if _messages(value):
            missing = [c for c in _contents(value) if c not in _contents(got.get(key))]
            out += [f"{key}: no message with content {c!r}" for c in missing]
        else:
            out += mismatches({key: value}, got)
    return out


def carries_marker(values: Any, marker: str) -> bool:
    """Whether state values carry `marker` anywhere (a message's content or a value)."""
    if isinstance(values, str):
        return marker in values
    if isinstance(values, dict):
        return any(carries_marker(v, marker) for v in values.values())
    if isinstance(values, list):
        return any(carries_marker(v, marker) for v in values)
    return False


def _messages(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(m, dict) for m in value)


def _contents(value: Any) -> list[Any]:
    return (
        [m.get("content") for m in value if isinstance(m, dict)] if isinstance(value, list) else []
    )
