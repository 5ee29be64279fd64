"""The state of one run, typed: what the plugin and the fixtures share, kept on the pytest config
stash under RUN (the running test's record on its item, under RECORD), so that two runs in one
process share nothing.

Beside the verdicts a run measures things (the runs it started and what they cost, requests
throttled or sent again, the clean-up): each process adds records under a name, a pytest-xdist
worker writes its records to the report directory as its session ends, and the controller
merges them for the report.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn

import pytest

from assistant_conformance.report import redact
from assistant_conformance.report.baseline import BaselineEntry
from assistant_conformance.report.exits import Exit
from assistant_conformance.report.model import GroupStatus, Run
from assistant_conformance.suite.config.settings import SuiteSettings
from assistant_conformance.suite.http import trail
from assistant_conformance.suite.http.absent import Absence
from assistant_conformance.suite.http.policy import Policy
from assistant_conformance.suite.judging.findings import TestRecord
from assistant_conformance.suite.judging.outcomes import Collector
from assistant_conformance.suite.safety.session import SafetySession
from assistant_conformance.suite.safety.sweep import SweepOutcome

SESSION = "assistant_conformance_session"  # xdist workerinput key: the controller's session token


@dataclass
class RunState:
    settings: SuiteSettings
    policy: Policy
    secrets: redact.Secrets
    baseline: dict[str, BaselineEntry]
    capabilities: dict[str, GroupStatus]
    collector: Collector
    worker: bool  # a pytest-xdist worker: its controller ends the run and writes the reports
    active: bool  # the run collects the suite's checks (not e.g. selftests beside them)
    session: str = field(default_factory=lambda: secrets.token_hex(6))  # joins workers' records
    shared: Path | None = None  # where the run's processes share counts (config/shared.py)
    controller: bool = False  # pytest-xdist's, of a run spread over workers: runs no test itself
    measured: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    started: datetime | None = None
    clock: float = 0.0
    stopped: str = ""  # why the run was stopped early (a harness error)
    safety: SafetySession | None = None
    sweep: SweepOutcome | None = None
    lacking: list[Absence] = field(default_factory=list)  # operations the pre-flight found absent
    result: Run | None = None
    origins: list[trail.Entry] = field(
        default_factory=list
    )  # fixtures' exchanges (a finding's start)

    def stop_reason(self) -> str:
        """Why the run was stopped early (a harness error), if it was."""
        return self.stopped or (self.safety.guard.stopped if self.safety else "")

    def end(self, reason: str) -> NoReturn:
        """Stop the run now as a harness error, in one line: `reason`, redacted."""
        self.stopped = reason = redact.text(reason)
        pytest.exit(f"harness error: {reason}", returncode=Exit.HARNESS)

    def add(self, name: str, *records: dict[str, Any]) -> None:
        """Measurements to report, under `name` (merged across workers)."""
        self.measured.setdefault(name, []).extend(records)

    def _directory(self) -> Path:
        return self.settings.report_dir / ".stats" / self.session

    def save(self) -> None:
        """A worker's measurements, for the controller to merge."""
        if self.measured:
            directory = self._directory()
            directory.mkdir(parents=True, exist_ok=True)
            (directory / f"{os.getpid()}.json").write_text(json.dumps(self.measured), "utf-8")

    def merged(self) -> dict[str, list[dict[str, Any]]]:
        """This process's measurements and every worker's of the same session (files removed)."""
        result = {name: list(items) for name, items in self.measured.items()}
        directory = self._directory()
        for path in sorted(directory.glob("*.json")) if directory.exists() else []:
            for name, items in json.loads(path.read_text(encoding="utf-8")).items():
                result.setdefault(name, []).extend(items)
            path.unlink()
        if directory.exists():
            directory.rmdir()
        return result


RUN_KEY = pytest.StashKey[RunState]()  # the run's state, on the config's stash
RECORD_KEY = pytest.StashKey[TestRecord]()  # the running test's record, on its item's stash


def run_state(config: pytest.Config) -> RunState:
    return config.stash[RUN_KEY]
