"""The agent every run of the suite goes to: which assistant, with what input, and whether it works.

A run calls an agent, and a deployed agent may call a paid model and tools: the suite never picks
one at random. The assistant is
- the one given (`--assistant ID`);
- on the embedded reference, its deterministic `echo` agent;
- elsewhere, one whose name or graph says it is for testing ("echo", "conformance", "test");
- else none: every requirement that needs a run is not judged, with the reason.

The input (`--run-input`) is the `input` of every run; by default LangGraph's chat shape, one user
message. `{text}` in any string of it is replaced by the words a check needs the agent to see (an
echo-like agent streams one event per word, so the words set a run's length); an input without it
is sent as given.

Before the first run a check relies on, a control run (runs/wait) with that assistant and input
must answer as a run that did not fail; otherwise runs are not judged either, and the reason quotes
how it ended. What the
runs cost is read back at the end of the session (runs of the threads the run created).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx

from assistant_conformance.suite import findings
from assistant_conformance.suite.flows import is_success, json_of
from assistant_conformance.suite.ledger import Ledger
from assistant_conformance.suite.observe import AnswerFault
from assistant_conformance.suite.options import TESTING_WORDS

CHAT = "LangGraph chat messages"
PLACEHOLDER = "{text}"
SUCCESS = "success"
DEFAULT_INPUT: dict[str, Any] = {"messages": [{"role": "user", "content": PLACEHOLDER}]}
THREAD = re.compile(r"/api/ai/threads/[^/]+")


def fill(template: Any, text: str) -> Any:
    """`template` with `{text}` in every string replaced by `text`."""
    if isinstance(template, str):
        return template.replace(PLACEHOLDER, text)
    if isinstance(template, list):
        return [fill(item, text) for item in template]
    if isinstance(template, dict):
        return {key: fill(value, text) for key, value in template.items()}
    return template


def shape_of(value: Any) -> str:
    """A short name for an input's shape, for reports."""
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        return CHAT
    if isinstance(value, str):
        return "a plain string"
    if isinstance(value, dict):
        return "an object with " + ", ".join(f"`{k}`" for k in sorted(value)) if value else "{}"
    return type(value).__name__


def assistants(api: httpx.Client) -> list[dict[str, Any]]:
    response = api.post("/api/ai/assistants/search", json={"limit": 100, "offset": 0})
    body = json_of(response) if is_success(response) else None
    if isinstance(body, dict):
        body = body.get("items")
    found = body if isinstance(body, list) else []
    return [a for a in found if isinstance(a, dict) and isinstance(a.get("assistant_id"), str)]


def for_testing(found: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The first assistant whose name or graph says it is for testing (by TESTING_WORDS order)."""
    for word in TESTING_WORDS:
        for assistant in found:
            if word in f"{assistant.get('graph_id')} {assistant.get('name')}".lower():
                return assistant
    return None


@dataclass
class Agent:
    """The assistant runs use, their input, and why runs are not judged (if they are not)."""

    assistant_id: str | None
    name: str
    how: str  # given / embedded default / found by name
    input: Any = field(default_factory=lambda: DEFAULT_INPUT)
    problem: str = ""  # why no run is judged; "" when runs may be started
    control: str = ""  # the control run's status once run ("success"), or what went wrong
    api: httpx.Client | None = field(default=None, repr=False)
    ledger: Ledger | None = field(default=None, repr=False)
    timeout: float = 30.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def input_shape(self) -> str:
        return shape_of(self.input)

    def body(self, text: str, metadata: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
        """The body of a run: this assistant, the input with `text`, and the run's options; stops
        the check (not judged) when runs are not judged here."""
        self.ready()
        return self.unchecked_body(text, metadata, options)

    def unchecked_body(
        self, text: str, metadata: dict[str, Any], options: dict[str, Any]
    ) -> dict[str, Any]:
        return {
            "assistant_id": self.assistant_id,
            "input": fill(self.input, text),
            "metadata": metadata,
            **options,
        }

    def ready(self) -> None:
        """The positive control (once per session), then: stop if runs are not judged here."""
        with self._lock:
            if not self.control and not self.problem and self.api is not None:
                self.control = self._control_run(self.api)
                if self.control != SUCCESS:
                    shown = json.dumps(fill(self.input, "conformance control"))[:120]
                    self.problem = (
                        f"the control run of assistant {self.name} ({self.assistant_id}) with "
                        f"input {shown} ended {self.control}: name an assistant safe to run and "
                        "the input it reads (--assistant, --run-input)"
                    )
        if self.problem:
            raise findings.Blocked(f"not judged: {self.problem}")

    def _control_run(self, api: httpx.Client) -> str:
        prefix = self.ledger.run_prefix if self.ledger else "conformance"
        created = api.post("/api/ai/threads", json={"metadata": {"conformance_run": prefix}})
        thread = json_of(created).get("thread_id") if isinstance(json_of(created), dict) else None
        if not is_success(created) or not isinstance(thread, str):
            return f"unstarted: creating its thread answered HTTP {created.status_code}"
        if self.ledger is not None:
            self.ledger.track("DELETE", f"/api/ai/threads/{thread}")
        body = self.unchecked_body("conformance control", {"conformance_run": prefix}, {})
        return control_run(api, thread, body, self.timeout)


def control_run(api: httpx.Client, thread: str, body: dict[str, Any], timeout: float) -> str:
    """Run once (runs/wait) and answer how it ended by the run's own answer: `success` unless the
    answer is a failed run's (LangGraph's `{"__error__": ...}`) or no answer came. How the run
    is read back or streamed is for the run requirements to judge, not the control."""
    try:
        response = api.post(f"/api/ai/threads/{thread}/runs/wait", json=body, timeout=timeout)
    except httpx.HTTPError as exc:
        return f"unanswered: runs/wait gave no answer within {timeout:g} s ({type(exc).__name__})"
    except AnswerFault as fault:
        return f"unanswered: {fault.what}"
    if not is_success(response):
        return f"with HTTP {response.status_code} from runs/wait"
    answer = json_of(response)
    if isinstance(answer, dict) and "__error__" in answer:
        return f"error ({json.dumps(answer['__error__'])[:160]})"
    return SUCCESS


@dataclass
class RunCost:
    run_id: str
    status: str
    seconds: float | None


def cost_of(runs: list[dict[str, Any]]) -> list[RunCost]:
    """Each run's status and time (updated_at - created_at, where both are given)."""
    costs = []
    for run in runs:
        seconds = None
        try:
            start = datetime.fromisoformat(str(run["created_at"]).replace("Z", "+00:00"))
            end = datetime.fromisoformat(str(run["updated_at"]).replace("Z", "+00:00"))
            seconds = max(0.0, (end - start).total_seconds())
        except (KeyError, ValueError, TypeError):
            pass
        costs.append(RunCost(str(run.get("run_id")), str(run.get("status")), seconds))
    return costs


def resolve(
    api: httpx.Client,
    ledger: Ledger,
    *,
    assistant: str | None,
    run_input: Any,
    embedded: bool,
    read_only: bool,
    timeout: float,
) -> Agent:
    """The agent of this session (see the module docstring)."""
    agent = Agent(None, "", "", DEFAULT_INPUT if run_input is None else run_input)
    agent.api, agent.ledger, agent.timeout = api, ledger, timeout
    if read_only:
        agent.problem = "read-only mode: the suite starts no run"
        return agent
    found = assistants(api)
    if assistant:
        match = [a for a in found if assistant in (a.get("assistant_id"), a.get("graph_id"))]
        agent.assistant_id, agent.how = assistant, "given (--assistant)"
        agent.name = str(match[0].get("name")) if match else assistant
        return agent
    chosen = for_testing(found)
    if chosen is None:
        agent.problem = (
            f"no assistant is named for testing ({', '.join(TESTING_WORDS)}) among the "
            f"{len(found)} assistants search finds, and none was given: name one safe to run "
            "with --assistant ID (every run the suite starts goes to it)"
        )
        return agent
    agent.assistant_id = str(chosen["assistant_id"])
    agent.name = str(chosen.get("name") or chosen.get("graph_id"))
    agent.how = "embedded default" if embedded else "found by its name"
    return agent


def agent_record(agent: Agent) -> dict[str, Any]:
    """What the reports say of the agent."""
    return {
        "assistant_id": agent.assistant_id,
        "name": agent.name,
        "how": agent.how,
        "input_shape": agent.input_shape,
        "control": agent.control,
        "problem": agent.problem,
    }


def runs_started(api: httpx.Client, ledger: Ledger) -> list[RunCost]:
    """The runs of every thread the session created and still has (read before cleanup; a
    thread whose list gets no answer within the run's bounds is left out)."""
    threads = [e.path for e in ledger.entries if e.method == "DELETE" and THREAD.fullmatch(e.path)]
    found: list[dict[str, Any]] = []
    for path in threads:
        try:
            response = api.get(f"{path}/runs", params={"limit": 1000, "offset": 0})
        except (httpx.HTTPError, AnswerFault):
            continue
        body = json_of(response) if is_success(response) else None
        body = body.get("items") if isinstance(body, dict) else body
        found += [r for r in body or [] if isinstance(r, dict) and r.get("run_id")]
    return cost_of(found)
