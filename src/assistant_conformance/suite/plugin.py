"""The suite's pytest plugin: options, requirement markers, findings into verdicts, the reports.

It keeps one typed state per run on the config stash (suite/run/state.py);
its fixtures (the target, clients of each principal, the run's ledger) are in suite/fixtures.py.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Generator
from datetime import UTC, datetime
from typing import Any

import pytest

from assistant_conformance.contract.catalogue import load
from assistant_conformance.report import (
    baseline,
    integrations,
    pipe,
    redact,
    write_all,
)
from assistant_conformance.report.exits import Exit
from assistant_conformance.report.model import Gate
from assistant_conformance.report.terminal import terminal_summary
from assistant_conformance.suite.config.settings import (
    OptionError,
    SuiteSettings,
    add_options,
    check_report_dir,
)
from assistant_conformance.suite.config.shared import discard, run_folder
from assistant_conformance.suite.evidence import har
from assistant_conformance.suite.http import clients, running
from assistant_conformance.suite.http.observe import AnswerFault
from assistant_conformance.suite.http.policy import Policy
from assistant_conformance.suite.judging import door_charges, findings, outcomes
from assistant_conformance.suite.judging.findings import TestRecord
from assistant_conformance.suite.judging.outcomes import requirement_ids
from assistant_conformance.suite.property import compat, generation
from assistant_conformance.suite.run import capabilities, identity, results
from assistant_conformance.suite.run.memory import CollectorSchedule
from assistant_conformance.suite.run.state import RECORD_KEY, RUN_KEY, SESSION, RunState, run_state
from assistant_conformance.suite.safety import sweep
from assistant_conformance.suite.safety.guarded import Guarding, ProbesAdapter
from assistant_conformance.suite.safety.ledger import ANONYMOUS
from assistant_conformance.suite.safety.session import breaches, writers

pytest_plugins = (
    "assistant_conformance.suite.config.argv",
    "assistant_conformance.suite.run.shared_reference",  # before the fixtures, which import it
    "assistant_conformance.suite.fixtures",
    "assistant_conformance.suite.run.concurrency",
)
_REDACTION = pytest.StashKey[Any]()  # the token that makes the run's secrets active


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(tryfirst=True)  # before junitxml and allure-pytest read their options
def pytest_configure(config: pytest.Config) -> None:
    active = integrations.is_suite_run(config)  # the plugin leaves other runs' tests alone
    if active:  # first: the collector off through the rest of start-up
        config.pluginmanager.register(CollectorSchedule(), "assistant-conformance-memory")
    pipe.quiet_stdout()  # before the terminal takes stdout: a closed pipe does not end the run
    config.addinivalue_line(
        "markers", "req(*ids): requirement IDs (spec/requirements.yaml) the test checks"
    )
    catalogue = load()
    for key, title in catalogue.sections.items():
        config.addinivalue_line("markers", f"{key}: requirements of section {title}")
    config.addinivalue_line("markers", "MUST: checks a requirement the interface document states")
    config.addinivalue_line("markers", "writes: the test changes data: skipped under --read-only")
    config.addinivalue_line(
        "markers", "SHOULD: checks a requirement implied by HTTP, SSE or practice"
    )
    try:
        settings = SuiteSettings.from_config(config)
        known = baseline.load_baseline(settings.baseline, catalogue) if settings.baseline else {}
        if active and not hasattr(config, "workerinput"):
            check_report_dir(settings.report_dir)
    except (OptionError, baseline.BaselineError) as exc:
        raise pytest.UsageError(str(exc)) from None
    masked = redact.Secrets()
    config.stash[_REDACTION] = redact.activate(masked)  # before anything registers a secret
    worker = getattr(config, "workerinput", None)
    session = (worker or {}).get(SESSION) or secrets.token_hex(6)  # one run, all its workers
    shared = run_folder(settings.report_dir, session) if active else None
    workers = int(worker.get("workercount", 1)) if worker else 1
    controller = bool(config.getoption("numprocesses", None))  # xdist sets None in its workers
    policy = Policy.of(settings, share=workers, shared=shared)
    if active and not controller:  # tests run here
        compat.install(ProbesAdapter(clients.adapter(policy), lambda: _probes_guarding(config)))
        generation.configure(settings.seed, settings.examples)
    if settings.insecure:  # said once in the header and the report, not on every request
        config.addinivalue_line(
            "filterwarnings", "ignore::urllib3.exceptions.InsecureRequestWarning"
        )
    caps = capabilities.declared_unsupported(settings.unsupported)
    collector = outcomes.Collector(caps)
    config.pluginmanager.register(collector, "assistant-conformance-collector")
    config.pluginmanager.register(outcomes.NotJudgedSkips(), "assistant-conformance-skips")
    state = RunState(settings, policy, masked, known, caps, collector, bool(worker), active)
    state.session, state.shared, state.controller = session, shared, controller
    config.stash[RUN_KEY] = state
    integrations.default_outputs(config, settings.report_dir)


def _probes_guarding(config: pytest.Config) -> Guarding | None:
    """The guard and ledger around schemathesis' probes: the run's, for a principal without a
    credential of the run (they send a case again without it)."""
    state = config.stash.get(RUN_KEY, None)
    return state.safety.around(ANONYMOUS, None) if state and state.safety else None


def pytest_unconfigure(config: pytest.Config) -> None:
    if (token := config.stash.get(_REDACTION, None)) is not None:
        redact.deactivate(token)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist: the workers' measurements join this session's (suite/run/state.py)."""
    node.workerinput[SESSION] = run_state(node.config).session


def pytest_report_header(config: pytest.Config) -> list[str]:
    """The target and the options (no request is sent: the session checks the target)."""
    state = run_state(config)
    if not state.active:
        return []
    return identity.header_lines(state.settings, len(state.baseline))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Make requirement IDs, their sections and levels selectable with -k and -m; label them."""
    catalogue = load()
    if run_state(config).settings.read_only:
        for item in writers(items):
            item.add_marker(pytest.mark.skip(reason="read-only mode: this check writes"))
    for item in items:
        ids = requirement_ids(item)
        for rid in ids:
            req = catalogue[rid]  # an unknown ID is an error in the suite itself
            item.extra_keyword_matches.add(rid)
            item.add_marker(req.section)
            item.add_marker(req.level)
            item.user_properties.append(("requirement", rid))
        if ids:
            item.user_properties.append(("requirements", ",".join(ids)))
        integrations.label(item, catalogue, ids)


# --- findings → test outcome → requirement verdicts -------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    """After a harness error stopped the run (in a pytest-xdist worker): the rest is not judged.
    What fixtures exchange is kept: a finding of a later test may use what they made."""
    state = run_state(item.config)
    if stopped := state.stop_reason():
        pytest.skip(f"not judged: harness error: {stopped}")
    with running.following(state.origins):
        try:
            return (yield)
        finally:
            del state.origins[: -har.ORIGINS_KEPT]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    state = run_state(item.config)
    settings = state.settings
    record = TestRecord(frozenset(requirement_ids(item)), settings.strict_conformance, item.nodeid)
    item.stash[RECORD_KEY] = record
    with findings.recording(record):
        try:
            return (yield)
        except AnswerFault as fault:  # the target's fault, not the suite's: a finding
            raise findings.Blocked(door_charges.charge_fault(fault)) from None
        finally:
            try:
                record.finish()  # judgements held until the test's end (the property layer's)
            finally:
                door_charges.charge_observations(record)  # what the doors observed during the test
                if state.active:  # the operations its exchanges show absent (suite/http/absent.py)
                    guard = state.safety.guard if state.safety else None
                    probed = {a.operation for a in state.lacking}
                    lacking = door_charges.charge_absent(
                        record, guard.seen if guard else (), probed
                    )
                    state.add("absent", *(a.as_dict() for a in lacking))
                ledger = state.safety.ledger if state.safety else None
                target = ledger.target if ledger else settings.base_url or ""
                prefix = ledger.run_prefix if ledger else ""
                har.keep(record, state.origins, har.HarRun.of(settings, target, prefix))


@pytest.hookimpl(wrapper=True, trylast=True)  # inside allure's and junit's view of the report
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    outcomes.redact_report(report, call)  # an exception, captured output: before anyone shows it
    record = item.stash.get(RECORD_KEY, None) if call.when == "call" else None
    state = run_state(item.config)
    caps = state.capabilities
    extra = {"capabilities": {g: s.as_dict() for g, s in caps.items()}} if caps else {}
    outcomes.decide_outcome(
        report,
        call,
        requirement_ids(item),
        record.findings if record else [],
        state.baseline,
        extra,
    )
    return report


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """A harness error stopped the run (the guard): end it in one line. A pytest-xdist worker
    cannot (xdist would report a crash): it skips the rest, and the controller ends the run."""
    state = run_state(item.config)
    if (stopped := state.stop_reason()) and not state.worker:
        state.end(stopped)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist starts its workers
def pytest_sessionstart(session: pytest.Session) -> None:
    state = run_state(session.config)
    state.started, state.clock = datetime.now(UTC), time.monotonic()
    settings = state.settings
    integrations.without_argument_containers(session.config)  # allure's listener is there now
    if state.active and not state.worker and not settings.sweep:
        har.clear(settings.report_dir)  # a replay must not meet an earlier run's findings
        (settings.report_dir / results.RESULTS).unlink(missing_ok=True)  # nor a merge


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> bool | None:
    """--sweep: remove what earlier runs left on the target, and run no tests."""
    state = run_state(session.config)
    if not state.settings.sweep:
        return None
    session.items = []
    state.sweep = sweep.sweep(state.settings, state.policy)
    return True


@pytest.hookimpl(trylast=True)  # after pytest's own, which ends a stopped run's fixtures (clean-up)
def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    state = run_state(config)
    state.add("load", state.policy.runs.end())  # runs in flight at once (http/running.py)
    if not state.worker:  # the workers are done: the counts they shared go
        discard(state.shared)
    if state.sweep is not None:
        session.exitstatus = state.sweep.exit_status
        return
    policy = state.policy
    state.add("throttled", *({"operation": op, "seconds": s} for op, s in policy.waits))
    state.add("resent", *({"operation": op} for op in policy.reconnects))
    state.add("sent", {"requests": policy.sent})
    if state.safety is not None and state.safety.record:
        state.add("cleanup", state.safety.record)
    if state.worker:
        if stopped := state.stop_reason():
            state.add("stopped", {"reason": stopped})
        state.save()
        return
    sharded = state.settings.shard is not None  # a shard given no test still has its say
    if not state.collector.results and not sharded:
        return  # not a conformance run (e.g. the project's selftests): pytest decides
    if sharded and session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        session.exitstatus = pytest.ExitCode.OK
    measured = state.merged()
    if measured.get("stopped") and not state.stopped:  # by a worker's guard
        state.stopped = measured["stopped"][0]["reason"]
        session.exitstatus = Exit.HARNESS
    state.result = run = results.of_run(config, state, measured)
    status = int(session.exitstatus)
    stopped = state.stop_reason()
    if status in (0, 1) and not stopped:
        session.exitstatus = run.gate.exit_status
    elif status != run.gate.exit_status or stopped:  # interrupted, or stopped by a harness error
        why = "harness error" if status == Exit.HARNESS else "interrupted"
        early = [f"the run stopped early (exit {status})"]
        run.gate = Gate(status, why, [stopped, *run.gate.problems] if stopped else early)
    write_all(run, state.settings.report_dir)
    finished = status != pytest.ExitCode.INTERRUPTED and not stopped
    results.save_results(
        results.kept(run, state.collector.results, measured, finished), state.settings
    )


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    state = config.stash.get(RUN_KEY, None)
    if state is None:
        return
    if state.result is not None:
        terminal_summary(terminalreporter, state.result, state.settings.report_dir)
    if state.controller and (stopped := state.stop_reason()):
        terminalreporter.write_line(f"harness error: {stopped}", red=True, bold=True)
    for line in [*(state.sweep.lines if state.sweep else []), *breaches(state.safety)]:
        terminalreporter.write_line(redact.text(line))
