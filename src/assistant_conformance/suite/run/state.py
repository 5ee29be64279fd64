"""The state of one run, a typed stash key per concern (on pytest's config stash, so that two runs
in one process share nothing):

- SETUP, `RunSetup`: what configure decided (settings, policy, the run's secrets and baseline,
  which process this is, the folder its processes share): the same to the run's end;
- FOUND, `TargetFound`: what the run found of its target (capability groups, operations absent)
  and its safety session, once the fixtures opened them;
- STOP, `HarnessStop`: whether a harness error stopped the run, and the plugin object that skips
  and ends what follows it;
- MEASURED, `Measurements`: what this process measured beside verdicts (config/run_folder.py:
  gathered from every process by the controller; the keys are in run/stats.py);
- COLLECTED, the run's results as reports arrive (run/outcomes.py's `Collector`);
- RECORD_KEY, on an item's stash: the running test's record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import NoReturn

import pytest

from assistant_conformance.report import redact
from assistant_conformance.report.baseline import BaselineEntry
from assistant_conformance.report.exit_codes import Exit
from assistant_conformance.report.model import GroupStatus
from assistant_conformance.suite.config.run_folder import Measurements, RunFolder
from assistant_conformance.suite.config.settings import SuiteSettings
from assistant_conformance.suite.http.absent import Absence
from assistant_conformance.suite.http.policy import Policy
from assistant_conformance.suite.judging.findings import TestRecord
from assistant_conformance.suite.run.outcomes import Collector
from assistant_conformance.suite.safety.session import SafetySession

SESSION = "assistant_conformance_session"  # xdist workerinput key: the controller's session token


@dataclass(frozen=True)
class RunSetup:
    """What configure decided for the run, in each of its processes."""

    settings: SuiteSettings
    policy: Policy
    secrets: redact.Secrets
    baseline: dict[str, BaselineEntry]
    worker: bool  # a pytest-xdist worker: its controller ends the run and writes the reports
    active: bool  # the run collects the suite's checks (not e.g. selftests beside them)
    controller: bool  # pytest-xdist's, of a run spread over workers: runs no test itself
    session: str  # the run's token, one for all its processes
    folder: RunFolder  # where the run's processes share data

    @property
    def counts_folder(self) -> RunFolder:
        """Where the run's counts are shared: its folder in a run of the suite's checks (in
        another, e.g. the selftests', this process alone)."""
        return self.folder if self.active else RunFolder()


@dataclass
class TargetFound:
    """What the run found of its target, and its safety session (the fixtures open them)."""

    capabilities: dict[str, GroupStatus]  # declared at configure, probed as tests need them
    lacking: list[Absence] = field(default_factory=list)  # absent by the pre-flight
    safety: SafetySession | None = None


@dataclass(frozen=True)
class RunStart:
    """When the run's session started: the wall clock for the report, the monotonic for its
    duration."""

    at: datetime
    clock: float


class HarnessStop:
    """A harness error stopped the run (the guard, or a fixture that could not go on): the tests
    after it are not judged, and the run ends in one line. A plugin object."""

    def __init__(self, found: TargetFound, worker: bool) -> None:
        self.found = found
        self.worker = worker
        self.stopped = ""  # why, once the run stopped here (a worker's guard: see the controller)

    def reason(self) -> str:
        """Why the run was stopped early (a harness error), if it was."""
        safety = self.found.safety
        return self.stopped or (safety.guard.stopped if safety else "")

    def end(self, reason: str) -> NoReturn:
        """Stop the run now as a harness error, in one line: `reason`, redacted."""
        self.stopped = reason = redact.text(reason)
        pytest.exit(f"harness error: {reason}", returncode=Exit.HARNESS)

    def pytest_runtest_setup(self) -> None:
        """In a pytest-xdist worker, after a harness error stopped it: the rest is not judged."""
        if stopped := self.reason():
            pytest.skip(f"not judged: harness error: {stopped}")

    @pytest.hookimpl(trylast=True)  # after pytest's own, which tears the fixtures down (clean-up)
    def pytest_runtest_teardown(self) -> None:
        """End the run in one line. A pytest-xdist worker cannot (xdist would report a crash): it
        skips the rest, and the controller ends the run."""
        if (stopped := self.reason()) and not self.worker:
            self.end(stopped)


SETUP = pytest.StashKey[RunSetup]()
FOUND = pytest.StashKey[TargetFound]()
STOP = pytest.StashKey[HarnessStop]()
MEASURED = pytest.StashKey[Measurements]()
COLLECTED = pytest.StashKey[Collector]()
RECORD_KEY = pytest.StashKey[TestRecord]()  # the running test's record, on its item's stash


def run_setup(config: pytest.Config) -> RunSetup:
    return config.stash[SETUP]


def target_found(config: pytest.Config) -> TargetFound:
    return config.stash[FOUND]


def harness_stop(config: pytest.Config) -> HarnessStop:
    return config.stash[STOP]


def measurements(config: pytest.Config) -> Measurements:
    return config.stash[MEASURED]
