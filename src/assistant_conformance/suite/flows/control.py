"""Which agent runs go to (`resolve`), and the control: does a run of it work, and how.

The control runs once, before the first run a check relies on. It makes a run of the agent
through every way the document offers (flows/agent.PATHS: runs/wait; runs/stream read to its end;
a background run, then joining its stream), each on a thread of its own, with a body of what the
document shows (the assistant and the input) and nothing else. Each way ends one of three ways:
- works: a run that did not fail;
- refused: a 4xx, a 2xx carrying an error object instead of a result, or a run that failed (an
  `error` event, LangGraph's `{"__error__": ...}`, status `error`): the input or the assistant;
- broken: a 5xx or no answer within the run's bounds: the target's, a finding for the run checks.

The first input (agent.INPUTS, or `--run-input`) that some way takes is the session's. Where no
input worked on any way: if every way refused them all, runs are not judged and the reason says
what each way answered; if some way was broken, the run checks go on and find it on its operation.
Then the run OPTIONS are sent once on a way that works (all together; where that is refused, one
by one): a check that needs an option gets it where the target took it, and goes on without it
where the target refused it (said in the reports).
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from assistant_conformance.suite.config.options import TESTING_WORDS
from assistant_conformance.suite.flows import is_success, json_of
from assistant_conformance.suite.flows.agent import (
    BROKEN,
    BY_JOIN,
    BY_STREAM,
    BY_WAIT,
    DEFAULT_INPUT,
    INPUTS,
    NUMBERING,
    PATHS,
    REFUSED,
    RUN_OPTIONS,
    WORKS,
    Agent,
    PathResult,
    assistants,
    fill,
    for_testing,
)
from assistant_conformance.suite.flows.runs import (
    THREADS,
    ended_probe,
    list_run_ids,
    run_id_in,
    run_status,
    runs_url,
)
from assistant_conformance.suite.http.absent import NOT_SERVED
from assistant_conformance.suite.http.observe import AnswerFault, Overdue
from assistant_conformance.suite.http.sse import StreamRead, read_stream
from assistant_conformance.suite.judging import checks, findings
from assistant_conformance.suite.judging.checks import body_of
from assistant_conformance.suite.judging.error_bodies import error_message
from assistant_conformance.suite.safety.ledger import Ledger

CONTROL_TEXT = "conformance control"


def resolve_agent(
    api: httpx.Client,
    ledger: Ledger,
    *,
    assistant: str | None,
    run_input: Any,
    embedded: bool,
    read_only: bool,
    timeout: float,
) -> Agent:
    """The agent of this session (see flows/agent.py)."""
    inputs = INPUTS if run_input is None else (run_input,)
    agent = Agent(None, "", "", inputs[0], inputs)
    agent.api, agent.ledger, agent.timeout, agent.check = api, ledger, timeout, run_control
    if read_only:
        agent.problem = "read-only mode: the suite starts no run"
        return agent
    found = assistants(api)
    if assistant:
        names = ("assistant_id", "graph_id", "name")
        match = next((a for a in found if assistant in (a.get(n) for n in names)), None)
        agent.assistant_id = str(match["assistant_id"]) if match else assistant
        agent.name = str(match.get("name") or assistant) if match else assistant
        agent.how = "given (--assistant)"
        return agent
    chosen = for_testing(found)
    if chosen is None:
        agent.problem = (
            f"no assistant is named for testing ({', '.join(TESTING_WORDS)}) among the "
            f"{len(found)} assistants search finds, and none was given: name one safe to run "
            "with --assistant (an id or a name; every run the suite starts goes to it)"
        )
        return agent
    agent.assistant_id = str(chosen["assistant_id"])
    agent.name = str(chosen.get("name") or chosen.get("graph_id"))
    agent.how = "embedded default" if embedded else "found by its name"
    return agent


def run_control(agent: Agent) -> None:
    """Find the input and the ways of making a run that work, and the options taken."""
    assert agent.api is not None
    tried: list[tuple[Any, dict[str, PathResult]]] = []
    for candidate in agent.inputs:
        body = {"assistant_id": agent.assistant_id, "input": fill(candidate, CONTROL_TEXT)}
        results = {path: attempt(agent, path, body)[0] for path in PATHS}
        tried.append((candidate, results))
        if any(r.outcome == WORKS for r in results.values()):
            agent.input, agent.paths = candidate, results
            take_options(agent, body)
            return
    agent.input, agent.paths = tried[0]
    if any(r.outcome == BROKEN for _, results in tried for r in results.values()):
        return  # the target's: the run checks find it on each operation
    seen = "; ".join(
        f"{path} with {json.dumps(fill(candidate, CONTROL_TEXT))[:80]}: {r.how}"
        for candidate, results in tried
        for path, r in results.items()
    )
    agent.problem = (
        f"every way of running assistant {agent.name} ({agent.assistant_id}) refused every input "
        f"tried ({seen}): name an assistant safe to run and the input it reads "
        "(--assistant, --run-input)"
    )


def take_options(agent: Agent, bare: dict[str, Any]) -> None:
    """The OPTIONS the target takes, sent on the first way that works; then which spelling of
    NUMBERING it honours."""
    path = agent.working()[0]
    if attempt(agent, path, {**bare, **RUN_OPTIONS})[0].outcome == WORKS:
        agent.options = dict(RUN_OPTIONS)
    else:
        for name, value in RUN_OPTIONS.items():
            result = attempt(agent, path, {**bare, name: value})[0]
            if result.outcome == WORKS:
                agent.options[name] = value
            else:
                agent.refused[name] = result.how
    find_numbering(agent, bare)


def find_numbering(agent: Agent, bare: dict[str, Any]) -> None:
    """Ask a streamed run in each spelling of NUMBERING the target took, in order, until one
    numbers its events (every event but an opening frame carries an id): the checks that need ids
    send that one. Where none does, they send the first taken (their MUST is judged on it) and the
    report says what each gave."""
    taken = [(name, value) for name, value in NUMBERING if name in agent.options]
    if BY_STREAM not in agent.working() or not taken:
        agent.numbering = "not asked (no spelling taken, or no stream works)"
        return
    seen = []
    for name, value in taken:
        spelling = f"{name}: {json.dumps(value)}"
        read = _numbering_read(agent, {**bare, name: value})
        if read is not None and read.events and not checks.unnamed(read.events):
            agent.numbered, agent.numbering = {name: value}, f"given when asked {spelling}"
            return
        events = read.events if read is not None else []
        got = f"{len(checks.unnamed(events))} of {len(events)} events without an id"
        seen.append(f"{spelling}: {got if read is not None else 'no answer'}")
    agent.numbered = dict(taken[:1])
    agent.numbering = "none given, asked " + "; ".join(seen)


def _numbering_read(agent: Agent, body: dict[str, Any]) -> StreamRead | None:
    """A run streamed to its end with `body` on a new thread of the run (None: no answer)."""
    assert agent.api is not None
    try:
        thread = _thread(agent.api, agent.ledger)
        return read_stream(
            agent.api,
            "POST",
            runs_url(thread, tail="/stream"),
            deadline=agent.timeout,
            json_body=body,
            run_ended=ended_probe(agent.api, thread),
        )
    except (_NoThread, httpx.HTTPError, AnswerFault):
        return None


def finished_run(agent: Agent, thread: str) -> str:
    """A finished run on `thread`, made the first way the control found working, else the next
    (a way given up in this run, or not working now, is said and passed over); stops the check
    (not judged) where none works, saying what each way answered."""
    agent.ready()
    working = agent.working()
    if not working:
        raise findings.Blocked(f"not judged: no way of making a run works ({agent.control})")
    body = agent.unchecked_body(CONTROL_TEXT)
    tried: list[str] = []
    for path in working:
        try:
            result, run_id = attempt(agent, path, body, thread)
        except Overdue as given_up:  # not asked again in this run: another way may still work
            tried.append(f"{path}: {given_up.msg}")
            continue
        if result.outcome == WORKS and run_id is not None:
            return run_id
        tried.append(f"{result.path}: {result.how}")
    raise findings.Blocked(f"not judged: cannot make a finished run ({'; '.join(tried)})")


# --- one way of making a run ---------------------------------------------------------------------


def attempt(
    agent: Agent, path: str, body: dict[str, Any], thread: str | None = None
) -> tuple[PathResult, str | None]:
    """Make a run `path`'s way (on a new thread of this run, unless given) and read it to its end;
    answer how it went and its run_id where known."""
    assert agent.api is not None
    api = agent.api
    try:
        thread = thread or _thread(api, agent.ledger)
        if path == BY_WAIT:
            return _waited(api, thread, body, agent.timeout)
        if path == BY_STREAM:
            read = read_stream(
                api,
                "POST",
                runs_url(thread, tail="/stream"),
                deadline=agent.timeout,
                json_body=body,
                run_ended=ended_probe(api, thread),
            )
            found = run_id_in(read.events, read.exchange.response_headers)
            return _stream_result(BY_STREAM, read), found
        return _joined(api, thread, body, agent.timeout)
    except _NoThread as exc:
        return PathResult(path, BROKEN, str(exc)), None
    except (httpx.HTTPError, AnswerFault) as exc:
        what = exc.what if isinstance(exc, AnswerFault) else type(exc).__name__
        return PathResult(path, BROKEN, f"no answer within the run's bounds ({what})"), None


class _NoThread(Exception):
    """No thread to run on."""


def _thread(api: httpx.Client, ledger: Ledger | None) -> str:
    prefix = ledger.run_prefix if ledger else "conformance"
    created = api.post(THREADS, json={"metadata": {"conformance_run": prefix}})
    body = json_of(created)
    thread = body.get("thread_id") if isinstance(body, dict) else None
    if not is_success(created) or not isinstance(thread, str):
        raise _NoThread(f"creating its thread answered HTTP {created.status_code}")
    if ledger is not None:
        ledger.track("DELETE", f"{THREADS}/{thread}")
    return thread


def _refusal(path: str, response: httpx.Response) -> PathResult | None:
    """How a JSON answer that is no run ended, or None when it is one."""
    code = response.status_code
    message = error_message(json_of(response))
    said = f": {message}" if message else ""
    if code >= 500 or code in NOT_SERVED:
        return PathResult(path, BROKEN, f"HTTP {code}{said}")
    if not is_success(response):
        return PathResult(path, REFUSED, f"HTTP {code}{said}")
    if message is not None:
        return PathResult(path, REFUSED, f"HTTP {code} carrying an error: {message}")
    body = json_of(response)
    if isinstance(body, dict) and "__error__" in body:
        return PathResult(path, REFUSED, f"a failed run ({json.dumps(body['__error__'])[:160]})")
    return None


def _waited(
    api: httpx.Client, thread: str, body: dict[str, Any], timeout: float
) -> tuple[PathResult, str | None]:
    response = api.post(runs_url(thread, tail="/wait"), json=body, timeout=timeout)
    refused = _refusal(BY_WAIT, response)
    if refused is not None:
        return refused, None
    found = run_id_in([], dict(response.headers)) or next(iter(list_run_ids(api, thread)), None)
    return PathResult(BY_WAIT, WORKS, f"HTTP {response.status_code}"), found


def _stream_result(path: str, read: StreamRead) -> PathResult:
    code = read.status
    body = body_of(read.entry) if read.entry is not None and not read.events else None
    message = error_message(body)
    if code >= 500 or code in NOT_SERVED:
        return PathResult(path, BROKEN, f"HTTP {code}" + (f": {message}" if message else ""))
    if not 200 <= code < 300 or message is not None:
        return PathResult(path, REFUSED, f"HTTP {code}" + (f": {message}" if message else ""))
    errors = [e for e in read.events if e.event == "error"]
    if errors:
        return PathResult(path, REFUSED, f"an error event ({errors[0].data[:160]})")
    if not read.closed_by_server:
        return PathResult(path, BROKEN, f"the stream did not end ({read.cut})")
    return PathResult(path, WORKS, f"HTTP {code}, {len(read.events)} events")


def _joined(
    api: httpx.Client, thread: str, body: dict[str, Any], timeout: float
) -> tuple[PathResult, str | None]:
    created = api.post(runs_url(thread), json=body)
    refused = _refusal(BY_JOIN, created)
    if refused is not None:
        return refused, None
    answer = json_of(created)
    run_id = answer.get("run_id") if isinstance(answer, dict) else None
    if not isinstance(run_id, str):
        return PathResult(BY_JOIN, BROKEN, f"HTTP {created.status_code} named no run_id"), None
    read = read_stream(
        api,
        "GET",
        runs_url(thread, run_id, "/stream"),
        deadline=timeout,
        run_ended=ended_probe(api, thread, run_id),
    )
    joined = _stream_result(BY_JOIN, read)
    if not 200 <= read.status < 300:  # the run was made: a join refused is the target's
        return PathResult(BY_JOIN, BROKEN, f"joining it answered {joined.how}"), run_id
    if joined.outcome != WORKS:
        return joined, run_id
    status = run_status(api.get(runs_url(thread, run_id)))
    if status == "error":
        return PathResult(BY_JOIN, REFUSED, "the run ended with status error"), run_id
    return PathResult(BY_JOIN, WORKS, f"run {status or '(status unread)'}, joined"), run_id


__all__ = ["DEFAULT_INPUT", "attempt", "finished_run", "resolve_agent", "run_control"]
