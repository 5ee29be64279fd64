"""The suite's pytest plugin: options, requirement markers, findings into verdicts, the reports.

Its fixtures (the target, clients of each principal, the run's ledger) are in suite/fixtures.py."""

from __future__ import annotations

import time
from collections.abc import Generator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import pytest

from assistant_conformance import __version__
from assistant_conformance.report import baseline, integrations, redact, terminal_summary, write_all
from assistant_conformance.report.catalogue import load
from assistant_conformance.report.model import Gate, GroupStatus
from assistant_conformance.report.verdicts import build
from assistant_conformance.suite import (
    capabilities,
    collect,
    door,
    findings,
    identity,
    safety,
    stats,
    sweep,
    transport,
)
from assistant_conformance.suite.door import AnswerFault
from assistant_conformance.suite.findings import TestRecord
from assistant_conformance.suite.flows.agent import header as agent_header
from assistant_conformance.suite.flows.agent import summary as agent_summary
from assistant_conformance.suite.openapi import by_label, operation_label
from assistant_conformance.suite.property.scope import status_requirement
from assistant_conformance.suite.settings import OptionError, SuiteSettings, add_options
from assistant_conformance.suite.target import HarnessError, preflight, remote

HARNESS_ERROR_EXIT = 3  # target unreachable, token rejected, reference failed: not a finding
SETTINGS_KEY = pytest.StashKey[SuiteSettings]()
COLLECTOR_KEY = pytest.StashKey[collect.Collector]()
BASELINE_KEY = pytest.StashKey[dict[str, baseline.Entry]]()
CAPS_KEY = pytest.StashKey[dict[str, GroupStatus]]()
STATE_KEY = pytest.StashKey[dict]()  # when the run started; the finished run
_RECORD_KEY = pytest.StashKey[TestRecord]()
pytest_plugins = ("assistant_conformance.suite.fixtures", "assistant_conformance.suite.concurrency")


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(tryfirst=True)  # before junitxml and allure-pytest read their options
def pytest_configure(config: pytest.Config) -> None:
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
        known = baseline.load(settings.baseline, catalogue) if settings.baseline else {}
    except (OptionError, baseline.BaselineError) as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[SETTINGS_KEY] = settings
    transport.use(transport.Policy.from_settings(settings))
    if worker := getattr(config, "workerinput", None):
        transport.current().share = int(worker.get("workercount", 1))
    if settings.insecure:  # said once in the header and the report, not on every request
        config.addinivalue_line(
            "filterwarnings", "ignore::urllib3.exceptions.InsecureRequestWarning"
        )
    config.stash[BASELINE_KEY] = known
    config.stash[CAPS_KEY] = capabilities.declared(settings.unsupported)
    config.stash[COLLECTOR_KEY] = collector = collect.Collector(config.stash[CAPS_KEY])
    config.pluginmanager.register(collector, "assistant-conformance-collector")
    config.stash[STATE_KEY] = {}
    stats.start(config)
    integrations.default_outputs(config, settings.report_dir)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist: the workers' records join this session's (suite/stats.py)."""
    node.workerinput[stats.SESSION] = stats.token(node.config)


def pytest_report_header(config: pytest.Config) -> list[str]:
    settings = config.stash[SETTINGS_KEY]
    target = settings.base_url or "embedded reference server (started on loopback)"
    lines = [
        f"assistant-conformance {__version__}: target {redact.text(target)}, seed {settings.seed}, "
        f"examples {settings.examples}, strict {'on' if settings.strict_conformance else 'off'}"
    ]
    if not settings.read_only:
        lines.append(
            agent_header(
                settings.base_url, settings.token, settings.assistant, settings.request_timeout
            )
        )
    if settings.baseline:
        lines.append(f"baseline: {settings.baseline} ({len(config.stash[BASELINE_KEY])} entries)")
    if settings.unsupported:
        lines.append(f"declared unsupported: {', '.join(settings.unsupported)}")
    if settings.read_only:
        lines.append("read-only mode: only checks that change nothing run; the others are skipped")
    if settings.insecure:
        lines.append("TLS: the target's certificate is NOT verified (--insecure)")
    if settings.header or settings.rate_limit:
        names = ", ".join(name for name, _ in settings.header) or "none"
        rate = f"{settings.rate_limit:g}/s" if settings.rate_limit else "none"
        lines.append(f"extra headers: {names}; rate limit: {rate}")
    if settings.no_cleanup:
        lines.append("--no-cleanup: what the run creates stays on the target (--sweep removes it)")
    return lines


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Make requirement IDs, their sections and levels selectable with -k and -m; label them."""
    catalogue = load()
    if config.stash[SETTINGS_KEY].read_only:
        safety.skip_writers(items)
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


def requirement_ids(item: pytest.Item) -> list[str]:
    return list(dict.fromkeys(rid for mark in item.iter_markers("req") for rid in mark.args))


# --- findings → test outcome → requirement verdicts -------------------------------------------


def pytest_runtest_setup(item: pytest.Item) -> None:
    """In a pytest-xdist worker whose guard stopped the run: the rest is not judged."""
    if stopped := safety.stop_reason(item.config.stash[STATE_KEY]):
        pytest.skip(f"not judged: harness error: {stopped}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    settings = item.config.stash[SETTINGS_KEY]
    record = TestRecord(frozenset(requirement_ids(item)), settings.strict_conformance)
    item.stash[_RECORD_KEY] = record
    findings.state.current = record
    try:
        return (yield)
    except AnswerFault as fault:  # the target's fault, not the suite's: a finding, not an error
        charged = charge(fault)
        raise findings.Blocked(f"not judged: {fault.what} (charged to {charged})") from None
    finally:
        try:
            record.finish()  # judgements held until the test's end (the property layer's)
        finally:
            findings.state.current = None


def charge(fault: AnswerFault) -> str:
    """Record a fault of the target's answer in this test; answer the requirement charged."""
    op = by_label().get(operation_label(fault.evidence.method, urlsplit(fault.evidence.url).path))
    status = status_requirement(op.operation_id) if op else None
    requirement = fault.charged_to or door.requirement_for(status)
    findings.door_failure(requirement, door.EXPECTED[fault.kind], fault.what, fault.evidence)
    return requirement


@pytest.hookimpl(wrapper=True, trylast=True)  # inside allure's and junit's view of the report
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    safety.redact_report(report, call)  # an exception, captured output: before anyone shows it
    record = item.stash.get(_RECORD_KEY, None) if call.when == "call" else None
    caps = item.config.stash[CAPS_KEY]
    extra = {"capabilities": {g: s.as_dict() for g, s in caps.items()}} if caps else {}
    collect.settle(
        report,
        call,
        requirement_ids(item),
        record.findings if record else [],
        item.config.stash[BASELINE_KEY],
        extra,
    )
    return report


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist starts its workers
def pytest_sessionstart(session: pytest.Session) -> None:
    config = session.config
    config.stash[STATE_KEY].update(started=datetime.now(UTC), clock=time.monotonic())
    settings = config.stash[SETTINGS_KEY]
    spread = getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput")
    if spread and settings.base_url and settings.token and not settings.sweep:
        # Each worker would meet a target it cannot use on its own: ask once, end in one line.
        try:
            preflight(remote(settings), settings.request_timeout)
        except HarnessError as exc:
            config.stash[STATE_KEY]["stopped"] = reason = redact.text(str(exc))
            pytest.exit(f"harness error: {reason}", returncode=HARNESS_ERROR_EXIT)


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> bool | None:
    """--sweep: remove what earlier runs left on the target, and run no tests."""
    settings = session.config.stash[SETTINGS_KEY]
    if not settings.sweep:
        return None
    session.items = []
    session.config.stash[STATE_KEY]["sweep"] = sweep.sweep(settings)
    return True


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    collector = config.stash[COLLECTOR_KEY]
    state = config.stash[STATE_KEY]
    if "sweep" in state:
        session.exitstatus = state["sweep"].exit_status
        return
    settings = config.stash[SETTINGS_KEY]
    policy = transport.current()
    stats.add(config, "throttled", *({"operation": op, "seconds": s} for op, s in policy.waits))
    stats.add(config, "resent", *({"operation": op} for op in policy.reconnects))
    if hasattr(config, "workerinput"):
        if stopped := safety.stop_reason(state):
            stats.add(config, "stopped", {"reason": stopped})
        stats.save(config, settings.report_dir)
        return
    if not collector.results:
        return  # not a conformance run (e.g. the project's selftests): pytest decides
    measured = stats.merged(config, settings.report_dir)
    if measured.get("stopped") and not state.get("stopped"):  # by a worker's guard
        state["stopped"] = measured["stopped"][0]["reason"]
        session.exitstatus = HARNESS_ERROR_EXIT
    run = build(
        load(),
        collector.results,
        info={
            **identity.run_info(settings, state["started"], time.monotonic() - state["clock"]),
            "runs": agent_summary(measured.get("agent", []), measured.get("runs", [])),
            "transport": transport.summary(
                settings, measured.get("throttled", []), measured.get("resent", [])
            ),
            "workers": int(getattr(config.option, "numprocesses", None) or 1),
        },
        capabilities=config.stash[CAPS_KEY],
        baseline=config.stash[BASELINE_KEY],
        baseline_file=str(settings.baseline or ""),
        unattributed=collector.unattributed,
    )
    status = int(session.exitstatus)
    stopped = safety.stop_reason(state)
    if status in (0, 1) and not stopped:
        session.exitstatus = run.gate.exit_status
    elif status != run.gate.exit_status or stopped:  # interrupted, or stopped by a harness error
        why = "harness error" if status == HARNESS_ERROR_EXIT else "interrupted"
        early = [f"the run stopped early (exit {status})"]
        run.gate = Gate(status, why, [stopped, *run.gate.problems] if stopped else early)
    write_all(run, settings.report_dir)
    state["run"] = run


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    state = config.stash.get(STATE_KEY, {})
    if state.get("run") is not None:
        terminal_summary(terminalreporter, state["run"], config.stash[SETTINGS_KEY].report_dir)
    if getattr(config.option, "numprocesses", None) and (stopped := safety.stop_reason(state)):
        terminalreporter.write_line(f"harness error: {stopped}", red=True, bold=True)
    for line in safety.summary(state):
        terminalreporter.write_line(line)
