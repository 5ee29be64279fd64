"""A pytest plugin bench/run.py loads (`-p bench_timing`, bench/ on PYTHONPATH) to split one suite
run's wall time by layer. It writes wall-clock stamps (time.time()) and per-layer sums of the test
phases (set-up + call + teardown) to the JSON file named by BENCH_TIMING_OUT; nothing otherwise.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Generator
from typing import Any

import pytest

PROPERTY_MODULES = ("tests/property/test_property.py", "tests/property/test_stateful.py")
_state: dict[str, Any] = {"property": 0.0, "scenario": 0.0, "items": 0, "property_items": 0}


def _layer(nodeid: str) -> str:
    return "property" if nodeid.startswith(PROPERTY_MODULES) else "scenario"


def pytest_configure(config: pytest.Config) -> None:
    _state["configured"] = time.time()


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    _state.setdefault("first_test", time.time())


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    layer = _layer(report.nodeid)
    _state[layer] += report.duration
    if report.when == "call":
        _state["items"] += 1
        _state["property_items"] += layer == "property"
    if "first_setup" not in _state and report.when == "setup":
        _state["first_setup"] = report.duration  # session fixtures: the embedded server start


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> Generator[None, None, None]:
    _state["finish_start"] = time.time()
    try:
        return (yield)  # every plugin's sessionfinish: the suite writes its reports here
    finally:
        _state["finish_end"] = time.time()


def pytest_unconfigure(config: pytest.Config) -> None:
    out = os.environ.get("BENCH_TIMING_OUT")
    if out:
        _state["unconfigured"] = time.time()
        with open(out, "w", encoding="utf-8") as handle:
            json.dump(_state, handle)
