"""The agent every run of the suite goes to: which assistant, with what input and options.

A run calls an agent, and a deployed agent may call a paid model and tools: the suite never picks
one at random. The assistant is
- the one given (`--assistant`, an id, a graph or a name: the assistant search answers map the
  last two to its id);
- on the embedded reference, its deterministic `echo` agent;
- elsewhere, one whose name or graph says it is for testing ("echo", "conformance", "test");
- else none: every requirement that needs a run is not judged, with the reason.

The input is the `input` of every run: `--run-input` as given, else the first of the shapes this
API family uses that the target takes (INPUTS: LangGraph's chat messages, the platform's plain
`input` text). `{text}` in any string of it is replaced by the words a check needs the agent to see
(an echo-like agent streams one event per word, so the words set a run's length).

A run body holds what the document shows (the assistant and the input); LangGraph's run OPTIONS
are added only by the checks that need them, and only where the control found the target takes
them. The control (flows/control.py) runs before the first run a check relies on, once per
session, through every way a run can be made (PATHS); runs are not judged only where every way
refused every input, and the reason says what each way answered. What the runs cost is read back
at the end of the session (runs of the threads the run created).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any, TypedDict

import httpx

from assistant_conformance.suite.config.options import TESTING_WORDS
from assistant_conformance.suite.flows import is_success, json_of, of_thread
from assistant_conformance.suite.http import running_test
from assistant_conformance.suite.http.observe import AnswerFault
from assistant_conformance.suite.judging import findings
from assistant_conformance.suite.safety.ledger import Ledger

CHAT = "LangGraph chat messages"
PLACEHOLDER = "{text}"
DEFAULT_INPUT: dict[str, Any] = {"messages": [{"role": "user", "content": PLACEHOLDER}]}
TEXT_INPUT: dict[str, Any] = {"input": PLACEHOLDER}
INPUTS = (DEFAULT_INPUT, TEXT_INPUT)
THREAD_PATTERN = re.compile(r"/api/ai/threads/[^/]+")

# The ways a run can be made and read to its end.
BY_WAIT, BY_STREAM, BY_JOIN = "runs/wait", "runs/stream", "runs then join"
PATHS = (BY_WAIT, BY_STREAM, BY_JOIN)
WORKS, REFUSED, BROKEN = "works", "refused", "broken"

# LangGraph's run options: the document shows none. Each is sent by the checks that need it, where
# the target took it in the control; a server that does not know one may refuse it.
RUN_OPTIONS: dict[str, Any] = {
    "stream_mode": ["values", "messages-tuple", "updates"],  # one event per token
    "stream_resumable": True,  # events kept for a join with last-event-id
    "on_disconnect": "continue",  # the run goes on when the suite drops its stream
    "multitask_strategy": "enqueue",  # a thread's runs queue (LangGraph's default answers 409)
}
# The spellings of "keep this run's events, numbered, for a client to resume": LangGraph's current
# one first, then the older one its official clients still offer (a run that continues on
# disconnect); the control asks each in this order, and the first whose stream numbers its events
# is the one the checks that need ids send (Agent.numbered).
NUMBERING: tuple[tuple[str, Any], ...] = (("stream_resumable", True), ("on_disconnect", "continue"))
NUMBERED = "numbered"  # a need: events with ids, in the spelling the target honoured
# What a check names: events with ids, one event per token, a join after a dropped stream (the run
# going on without the suite), runs queued on one thread.
IDS, MANY_EVENTS = (NUMBERED,), ("stream_mode", NUMBERED)
RESUMABLE = ("stream_mode", NUMBERED, "on_disconnect")
QUEUED = ("multitask_strategy",)


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


@dataclass(frozen=True)
class PathResult:
    """How one way of making a run answered the control."""

    path: str
    outcome: str  # WORKS, REFUSED (the input or the assistant: a 4xx, an error) or BROKEN (5xx)
    how: str


@dataclass
class Agent:
    """The assistant runs use, their input and options, and why runs are not judged (if not)."""

    assistant_id: str | None
    name: str
    how: str  # given / embedded default / found by name
    input: Any = field(default_factory=lambda: DEFAULT_INPUT)
    inputs: tuple[Any, ...] = INPUTS  # the inputs the control tries, in order
    problem: str = ""  # why no run is judged; "" when runs may be started
    paths: dict[str, PathResult] = field(default_factory=dict)  # the control's, by path
    options: dict[str, Any] = field(default_factory=dict)  # run options the target took
    refused: dict[str, str] = field(default_factory=dict)  # option -> how it was refused
    numbered: dict[str, Any] = field(default_factory=dict)  # the NUMBERING spelling it honoured
    numbering: str = ""  # what each spelling of NUMBERING gave, for reports
    api: httpx.Client | None = field(default=None, repr=False)
    ledger: Ledger | None = field(default=None, repr=False)
    timeout: float = 30.0
    check: Callable[[Agent], None] | None = field(default=None, repr=False)  # the control
    _checked: bool = field(default=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def input_shape(self) -> str:
        return shape_of(self.input)

    @property
    def control(self) -> str:
        """What each way of making a run answered, for reports."""
        return "; ".join(f"{r.path}: {r.how}" for r in self.paths.values())

    def working(self) -> list[str]:
        return [p for p, r in self.paths.items() if r.outcome == WORKS]

    def body(self, text: str, needs: tuple[str, ...] = ()) -> dict[str, Any]:
        """The body of a run: this assistant, the input with `text`, and the OPTIONS named in
        `needs` that the target takes; stops the check (not judged) where runs are not judged."""
        self.ready()
        return self.unchecked_body(text, needs)

    def unchecked_body(self, text: str, needs: tuple[str, ...] = ()) -> dict[str, Any]:
        taken = {name: self.options[name] for name in needs if name in self.options}
        if NUMBERED in needs:
            taken.update(self.numbered)
        return {"assistant_id": self.assistant_id, "input": fill(self.input, text), **taken}

    def ready(self) -> None:
        """The control (once per session), then: stop if runs are not judged here."""
        with self._lock:
            if not self._checked and not self.problem and self.check is not None:
                self._checked = True
                self.check(self)
        if self.problem:
            raise findings.Blocked(f"not judged: {self.problem}")


@dataclass
class RunCost:
    run_id: str
    status: str
    seconds: float | None

    def as_json(self) -> RunCostJson:
        return RunCostJson(run_id=self.run_id, status=self.status, seconds=self.seconds)


class RunCostJson(TypedDict):
    """A RunCost as the run's measurements carry it (run/stats.py: RUNS_STARTED)."""

    run_id: str
    status: str
    seconds: float | None


class AgentJson(TypedDict):
    """What the reports say of the agent (run/stats.py: AGENT; conformance.json's `runs.agent`)."""

    assistant_id: str | None
    name: str
    how: str
    input_shape: str
    control: str
    options: list[str]
    refused_options: dict[str, str]
    numbering: str
    problem: str


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


def agent_record(agent: Agent) -> AgentJson:
    """What the reports say of the agent."""
    return AgentJson(
        assistant_id=agent.assistant_id,
        name=agent.name,
        how=agent.how,
        input_shape=agent.input_shape,
        control=agent.control,
        options=sorted(agent.options),
        refused_options=dict(agent.refused),
        numbering=agent.numbering,
        problem=agent.problem,
    )


def runs_started(api: httpx.Client, ledger: Ledger) -> list[RunCost]:
    """The runs of every thread the session created and still has (read before cleanup; a
    thread whose list gets no answer within the run's bounds is left out)."""
    threads = [
        e.path for e in ledger.entries if e.method == "DELETE" and THREAD_PATTERN.fullmatch(e.path)
    ]

    def runs_of(path: str) -> list[dict[str, Any]]:
        try:
            response = api.get(f"{path}/runs", params={"limit": 1000, "offset": 0})
        except (httpx.HTTPError, AnswerFault):
            return []
        body = json_of(response) if is_success(response) else None
        body = body.get("items") if isinstance(body, dict) else body
        thread_id = path.rsplit("/", 1)[-1]
        return [r for r in of_thread(body or [], thread_id) if r.get("run_id")]

    # Independent reads: side by side (a far target's round trip each, not one after another).
    found = running_test.at_once([partial(runs_of, path) for path in threads])
    return cost_of([run for runs in found for run in runs])
