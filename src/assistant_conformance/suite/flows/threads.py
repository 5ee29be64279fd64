"""Thread state flows (interface 4.4): writing values a real agent's typed state accepts.

The contract leaves the state's shape unstated, and real agents type it: LangGraph refuses a key
its graph's state does not have, and a thread that never ran has no graph to check against. So a
state write sends the shape of the session's run input (a typed agent accepts its own input's
keys: `messages` for a chat agent), marked; where the target refuses it on a thread that never
ran, the thread runs once (the session's agent) and the write is sent again. Values are compared
as a client sees them: each written message found (by its content) among the state's messages,
every other value as written.
"""

from __future__ import annotations

from typing import Any

import httpx

from assistant_conformance.suite.flows import is_client_error, is_success, json_of
from assistant_conformance.suite.flows.agent import Agent, fill
from assistant_conformance.suite.flows.runs import THREADS, run_body, runs_url
from assistant_conformance.suite.judging import findings
from assistant_conformance.suite.judging.checks import mismatches

STATUS = "THR-STATUS"


def thread_path(thread_id: str, tail: str = "") -> str:
    return f"{THREADS}/{thread_id}{tail}"


def state_values(agent: Agent, marker: str) -> dict[str, Any]:
    """Values of the run input's shape carrying `marker`; a plain object where it is no object."""
    values = fill(agent.input, marker)
    return values if isinstance(values, dict) and values else {"note": marker}


def write_state(
    api: httpx.Client, agent: Agent, ledger: Any, thread_id: str, values: dict[str, Any]
) -> None:
    """POST state (201), running the thread once first where the target needs that."""
    response = api.post(thread_path(thread_id, "/state"), json={"values": values})
    if is_client_error(response) and not _has_run(api, thread_id):
        waited = api.post(
            runs_url(thread_id, tail="/wait"),
            json=run_body(agent, 3),
            timeout=agent.timeout,
        )
        if is_success(waited):
            response = api.post(thread_path(thread_id, "/state"), json={"values": values})
    findings.require_success(STATUS, response, 201)


def _has_run(api: httpx.Client, thread_id: str) -> bool:
    listed = api.get(runs_url(thread_id), params={"limit": 1, "offset": 0})
    body = json_of(listed)
    runs = body.get("items") if isinstance(body, dict) else body
    return is_success(listed) and bool(runs)


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
