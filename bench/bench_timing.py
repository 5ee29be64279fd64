"""A pytest plugin bench/run.py loads (`-p bench_timing`, bench/ on PYTHONPATH) to split one suite
run's time by layer and by what it is spent on. It writes to the JSON file named by
BENCH_TIMING_OUT (nothing otherwise), for this process (the controller, or the one process of an
unspread run):
- wall-clock stamps (time.time()) and this process's CPU seconds (time.process_time()) at
  configure, collection start and end, first test, reports (pytest_sessionfinish) start and end;
- per-layer sums of the test phases (set-up + call + teardown);
- sending: the requests that went out through httpx's and requests' transports (the suite's
  clients and schemathesis' session alike) and the wall seconds spent inside them (sending and
  waiting for the answer's head), and the CPU seconds spent there;
- generation: the property layer's call phases minus the time inside the runner's send and judge
  (what is left is hypothesis and schemathesis drawing and shrinking cases);
- cases: the property tests' executions Hypothesis ran (explicit coverage cases, generated cases,
  state-machine scenarios), the stateless cases that reached the runner, and the cases and steps
  the runner sent: what was drawn and thrown away, next to what went out.
With BENCH_CHAINS_OUT set, every process of the run (pytest-xdist's workers too) appends a JSON line
per test to that file: its node ID, the requests it sent (set-up, call and teardown), its chain
(the most of them that ran one after another, none overlapping the next: requests a pool sends
side by side count once a round) and its seconds; bench/run.py takes the longest chain for a far
target's floor.
With BENCH_CPROFILE_OUT set, this process (the controller, or the one process of an unspread run)
is profiled by cProfile with a CPU clock (time.process_time) from configure to unconfigure, the
stats written to that file.
"""

from __future__ import annotations

import cProfile
import json
import os
import threading
import time
from collections.abc import Callable, Generator
from typing import Any

import httpx
import pytest
import requests.adapters

PROPERTY_MODULES = ("tests/property/test_property.py", "tests/property/test_stateful.py")
_state: dict[str, Any] = {
    "property": 0.0,
    "scenario": 0.0,
    "items": 0,
    "property_items": 0,
    "property_call": 0.0,
    "requests": 0,
    "sending": 0.0,
    "sending_cpu": 0.0,
    "runner": 0.0,
    "cases_run": 0,
    "cases_tested": 0,
    "cases_sent": 0,
}
_lock = threading.Lock()
_profiler: list[cProfile.Profile] = []


def _stamp(name: str) -> None:
    _state[name] = time.time()
    _state[f"{name}_cpu"] = time.process_time()


_spans: list[tuple[float, float]] = []  # each request's (start, end) in the running test


def _timed(original: Callable[..., Any], wall: str, cpu: str = "", count: str = "") -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started, started_cpu = time.monotonic(), time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            ended = time.monotonic()
            with _lock:
                _state[wall] += ended - started
                if cpu:
                    _state[cpu] += time.thread_time() - started_cpu
                if count:
                    _state[count] += 1
                    _spans.append((started, ended))

    return wrapper


def _counted(original: Callable[..., Any], count: str) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _lock:
            _state[count] += 1
        return original(*args, **kwargs)

    return wrapper


def _instrument() -> None:
    """Time every request at the transports, and the runner's own work per case; count the cases
    Hypothesis ran, those the runner was given, and those it sent."""
    from hypothesis.core import StateForActualGivenExecution

    httpx.HTTPTransport.handle_request = _timed(  # type: ignore[method-assign]
        httpx.HTTPTransport.handle_request, "sending", "sending_cpu", "requests"
    )
    adapter = requests.adapters.HTTPAdapter
    adapter.send = _timed(adapter.send, "sending", "sending_cpu", "requests")  # type: ignore[method-assign]
    from assistant_conformance.suite.property.runner import Runner

    Runner.send = _timed(_counted(Runner.send, "cases_sent"), "runner")  # type: ignore[method-assign]
    Runner.run = _counted(Runner.run, "cases_tested")  # type: ignore[method-assign]
    execution = StateForActualGivenExecution
    execution.execute_once = _counted(execution.execute_once, "cases_run")  # type: ignore[method-assign]
    Runner.evaluate = _timed(Runner.evaluate, "runner")  # type: ignore[method-assign]


def chain(spans: list[tuple[float, float]]) -> int:
    """The most of these requests that ran one after another (none overlapping the next): a
    test's dependent chain; requests sent side by side (a pool's) count as one step each round."""
    count, free_from = 0, float("-inf")
    for start, end in sorted(spans, key=lambda span: span[1]):  # the earliest end first
        if start >= free_from:
            count, free_from = count + 1, end
    return count


def _layer(nodeid: str) -> str:
    return "property" if nodeid.startswith(PROPERTY_MODULES) else "scenario"


def pytest_configure(config: pytest.Config) -> None:
    _stamp("configured")
    timed = os.environ.get("BENCH_TIMING_OUT") and not hasattr(config, "workerinput")
    if timed or os.environ.get("BENCH_CHAINS_OUT"):
        _instrument()
    if os.environ.get("BENCH_CPROFILE_OUT") and not hasattr(config, "workerinput"):
        _profiler.append(cProfile.Profile(time.process_time))
        _profiler[0].enable()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    out = os.environ.get("BENCH_CHAINS_OUT")
    with _lock:
        _spans.clear()
    started = time.monotonic()
    try:
        return (yield)
    finally:
        if out:
            with _lock:
                spans = list(_spans)
            line = {
                "test": item.nodeid,
                "requests": len(spans),
                "chain": chain(spans),
                "seconds": time.monotonic() - started,
            }
            with open(out, "a", encoding="utf-8") as handle:  # one short line: appended whole
                handle.write(json.dumps(line) + "\n")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_collection(session: pytest.Session) -> Generator[None, None, None]:
    _stamp("collect_start")
    try:
        return (yield)
    finally:
        _stamp("collect_end")


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    if "first_test" not in _state:
        _stamp("first_test")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    layer = _layer(report.nodeid)
    _state[layer] += report.duration
    if report.when == "call":
        _state["items"] += 1
        _state["property_items"] += layer == "property"
        if layer == "property":
            _state["property_call"] += report.duration
    if "first_setup" not in _state and report.when == "setup":
        _state["first_setup"] = report.duration  # session fixtures: the embedded server start


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> Generator[None, None, None]:
    _stamp("finish_start")
    try:
        return (yield)  # every plugin's sessionfinish: the suite writes its reports here
    finally:
        _stamp("finish_end")


def pytest_unconfigure(config: pytest.Config) -> None:
    if _profiler:
        _profiler[0].disable()
        _profiler[0].dump_stats(os.environ["BENCH_CPROFILE_OUT"])
    out = os.environ.get("BENCH_TIMING_OUT")
    if out and not hasattr(config, "workerinput"):
        _stamp("unconfigured")
        with open(out, "w", encoding="utf-8") as handle:
            json.dump(_state, handle)
