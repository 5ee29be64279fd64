"""The garbage collector in a run of the suite, and only there: the plugin registers
`CollectorSchedule` at configure when the run collects the suite's checks, so that a pytest which
merely has the package installed keeps its collector as it was.

- from configure to the collection, in every process of the run (a worker's or not), the
  collector is off: its passes over what start-up makes (the catalogue, the settings, the
  probes' adapter, the workers' start) find nothing to free;
- once the tests are collected, what start-up made lives through the run: frozen, out of the
  collector's full passes;
- as a process of the run ends, nothing it holds is collected: the interpreter's last pass over
  the whole heap took a worker 0.2 s, which the controller waits for before it reports
  (registered once a process, not at each configure: a process may run pytest many times);
- at unconfigure the collector is on again if it was on at configure.
"""

from __future__ import annotations

import atexit
import gc
from collections.abc import Generator

import pytest


class CollectorSchedule:
    """The run's collector: off until the collection, start-up frozen after it, none at exit."""

    def __init__(self) -> None:
        self.was_on = gc.isenabled()
        gc.disable()
        atexit.unregister(gc.freeze)  # once a process
        atexit.register(gc.freeze)

    @pytest.hookimpl(wrapper=True)  # before any plugin's collection (--sweep's ends it)
    def pytest_collection(self) -> Generator[None, object, object]:
        if self.was_on:
            gc.enable()  # start-up is done
        return (yield)

    def pytest_collection_finish(self) -> None:
        gc.freeze()  # start-up's objects live through the run: out of the collector's full passes

    def pytest_unconfigure(self) -> None:
        if self.was_on:
            gc.enable()
