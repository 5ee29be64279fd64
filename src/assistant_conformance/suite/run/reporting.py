"""The run's end: what each process measured, gathered by the one that reports, the verdicts and
every report written, the terminal's summary (`RunReporting`); and --sweep, a run that removes
what earlier runs left and runs no test (`Sweeping`). Plugin objects, registered at configure.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from assistant_conformance.report import integrations, redact, write_all
from assistant_conformance.report.exit_codes import Exit
from assistant_conformance.report.model import Gate, Run
from assistant_conformance.report.terminal import terminal_summary
from assistant_conformance.suite.config.run_folder import Measurements
from assistant_conformance.suite.evidence import har
from assistant_conformance.suite.run import results, stats
from assistant_conformance.suite.run.state import (
    COLLECTED,
    RunStart,
    harness_stop,
    measurements,
    run_setup,
    target_found,
)
from assistant_conformance.suite.safety import sweep
from assistant_conformance.suite.safety.session import breaches
from assistant_conformance.suite.safety.sweep import SweepOutcome

SWEPT = pytest.StashKey[SweepOutcome]()  # what --sweep removed, on the config's stash


class Sweeping:
    """--sweep: remove what earlier runs left on the target, and run no tests (registered only
    then: its collection comes before pytest's own, registered before it)."""

    def pytest_collection(self, session: pytest.Session) -> bool:
        setup = run_setup(session.config)
        session.items = []
        session.config.stash[SWEPT] = sweep.sweep(setup.settings, setup.policy)
        return True

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if (outcome := terminalreporter.config.stash.get(SWEPT, None)) is not None:
            for line in outcome.lines:
                terminalreporter.write_line(redact.text(line))


class RunReporting:
    """From the session's start to its reports: the controller (or the one process) builds the
    run's result from every process's measurements; a pytest-xdist worker publishes its own."""

    def __init__(self) -> None:
        self.started: RunStart | None = None
        self.result: Run | None = None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.started = RunStart(datetime.now(UTC), time.monotonic())
        integrations.without_argument_containers(session.config)  # allure's listener is there now
        setup = run_setup(session.config)
        settings = setup.settings
        if setup.active and not setup.worker and not settings.sweep:
            har.clear(settings.report_dir)  # a replay must not meet an earlier run's findings
            (settings.report_dir / results.RESULTS).unlink(missing_ok=True)  # nor a merge

    @pytest.hookimpl(trylast=True)  # after pytest's own, which ends a stopped run's fixtures
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        config = session.config
        setup, stop, measured = run_setup(config), harness_stop(config), measurements(config)
        measure_transport(config)
        if setup.worker:
            if stopped := stop.reason():
                measured.add(stats.STOPPED, stats.StoppedRecord(reason=stopped))
            setup.folder.publish(measured)
            return
        gathered = setup.folder.gather(measured)  # the workers are done: what they shared goes
        setup.folder.discard()
        if (swept := config.stash.get(SWEPT, None)) is not None:
            session.exitstatus = swept.exit_status
            return
        self.report(session, gathered)

    def report(self, session: pytest.Session, measured: Measurements) -> None:
        """The run's result from its tests' records, its exit status, and every report."""
        config = session.config
        settings, stop = run_setup(config).settings, harness_stop(config)
        collector = config.stash[COLLECTED]
        sharded = settings.shard is not None  # a shard given no test still has its say
        if not collector.results and not sharded:
            return  # not a conformance run (e.g. the project's selftests): pytest decides
        if sharded and session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            session.exitstatus = pytest.ExitCode.OK
        if (by_worker := measured.get(stats.STOPPED)) and not stop.stopped:  # a worker's guard
            stop.stopped = by_worker[0]["reason"]
            session.exitstatus = Exit.HARNESS
        assert self.started is not None
        self.result = run = results.of_run(config, self.started, measured)
        status = int(session.exitstatus)
        stopped = stop.reason()
        if status in (0, 1) and not stopped:
            session.exitstatus = run.gate.exit_status
        elif status != run.gate.exit_status or stopped:  # interrupted, or a harness error
            why = "harness error" if status == Exit.HARNESS else "interrupted"
            early = [f"the run stopped early (exit {status})"]
            run.gate = Gate(status, why, [stopped, *run.gate.problems] if stopped else early)
        write_all(run, settings.report_dir)
        finished = status != pytest.ExitCode.INTERRUPTED and not stopped
        record = results.merge_record(run, collector.results, measured, finished)
        results.save_results(record, settings)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        config = terminalreporter.config
        setup, stop = run_setup(config), harness_stop(config)
        if self.result is not None:
            terminal_summary(terminalreporter, self.result, setup.settings.report_dir)
        if setup.controller and (stopped := stop.reason()):
            terminalreporter.write_line(f"harness error: {stopped}", red=True, bold=True)
        for line in breaches(target_found(config).safety):
            terminalreporter.write_line(redact.text(line))


def measure_transport(config: pytest.Config) -> None:
    """What this process measured on its way to the target, and its clean-up."""
    policy, measured = run_setup(config).policy, measurements(config)
    measured.add(stats.LOAD, policy.runs.end())  # runs in flight at once (http/runs_in_flight.py)
    waited = (stats.ThrottledWait(operation=op, seconds=s) for op, s in policy.waits)
    measured.add(stats.THROTTLED, *waited)
    measured.add(stats.RESENT, *(stats.ResentRecord(operation=op) for op in policy.reconnects))
    measured.add(stats.SENT, stats.SentRecord(requests=policy.sent))
    safety = target_found(config).safety
    if safety is not None and safety.record is not None:
        measured.add(stats.CLEANUP, safety.record)
