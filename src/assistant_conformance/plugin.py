"""The suite's pytest plugin: options, target fixtures, requirement markers and verdicts."""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator
from datetime import UTC, datetime

import httpx
import pytest

from . import __version__, baseline, capabilities, collect, findings, integrations, redact, safety
from .catalogue import load
from .findings import TestRecord
from .ledger import ALT, ANONYMOUS, MAIN, Ledger
from .report import run_info, terminal_summary, write_all
from .results import Gate, build
from .settings import OptionError, SuiteSettings, add_options
from .target import HarnessError, Target, open_target

HARNESS_ERROR_EXIT = 3  # target unreachable, token rejected, reference failed: not a finding
SETTINGS_KEY = pytest.StashKey[SuiteSettings]()
COLLECTOR_KEY = pytest.StashKey[collect.Collector]()
BASELINE_KEY = pytest.StashKey[dict[str, baseline.Entry]]()
CAPS_KEY = pytest.StashKey[dict[str, capabilities.GroupStatus]]()
STATE_KEY = pytest.StashKey[dict]()  # when the run started; the finished run
_RECORD_KEY = pytest.StashKey[TestRecord]()


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
    except OptionError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[SETTINGS_KEY] = settings
    config.stash[BASELINE_KEY] = known
    config.stash[CAPS_KEY] = capabilities.declared(settings.unsupported)
    config.stash[COLLECTOR_KEY] = collector = collect.Collector(config.stash[CAPS_KEY])
    config.pluginmanager.register(collector, "assistant-conformance-collector")
    config.stash[STATE_KEY] = {}
    integrations.default_outputs(config, settings.report_dir)


def pytest_report_header(config: pytest.Config) -> list[str]:
    settings = config.stash[SETTINGS_KEY]
    target = settings.base_url or "embedded reference server (started on loopback)"
    lines = [
        f"assistant-conformance {__version__}: target {redact.text(target)}, seed {settings.seed}, "
        f"examples {settings.examples}, strict {'on' if settings.strict_conformance else 'off'}"
    ]
    if settings.baseline:
        lines.append(f"baseline: {settings.baseline} ({len(config.stash[BASELINE_KEY])} entries)")
    if settings.unsupported:
        lines.append(f"declared unsupported: {', '.join(settings.unsupported)}")
    if settings.read_only:
        lines.append("read-only mode: only checks that change nothing run; the others are skipped")
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


# --- fixtures ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def suite_settings(pytestconfig: pytest.Config) -> SuiteSettings:
    return pytestconfig.stash[SETTINGS_KEY]


@pytest.fixture(scope="session")
def target(
    pytestconfig: pytest.Config,
    suite_settings: SuiteSettings,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Target]:
    try:
        opened = open_target(suite_settings, tmp_path_factory.mktemp("target"))
    except HarnessError as exc:
        reason = redact.text(str(exc))
        pytestconfig.stash[STATE_KEY]["stopped"] = reason
        pytest.exit(f"harness error: {reason}", returncode=HARNESS_ERROR_EXIT)
    yield opened
    opened.stop()


@pytest.fixture(scope="session")
def run_safety(
    pytestconfig: pytest.Config, suite_settings: SuiteSettings, target: Target
) -> Iterator[safety.Session]:
    """The run's guard and ledger; at the end, removes what the run created (or keeps it)."""
    session = safety.Session.open(suite_settings, target)
    pytestconfig.stash[STATE_KEY]["safety"] = session
    yield session
    session.finish(suite_settings, target)


def _client(
    target: Target, settings: SuiteSettings, run: safety.Session, principal: str
) -> httpx.Client:
    token = {MAIN: target.token, ALT: target.alt_token}.get(principal)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    transport = run.transport(principal, token)
    return httpx.Client(
        base_url=target.base_url,
        headers=headers,
        timeout=settings.request_timeout,
        transport=transport,
    )


@pytest.fixture(scope="session")
def api(
    target: Target, suite_settings: SuiteSettings, run_safety: safety.Session
) -> Iterator[httpx.Client]:
    """A client of the main principal."""
    with _client(target, suite_settings, run_safety, MAIN) as client:
        yield client


@pytest.fixture(scope="session")
def ledger(run_safety: safety.Session) -> Ledger:
    """Tracks what the run creates (the suite's clients record their creates themselves); what it
    lists is removed at the end of the session, newest first."""
    return run_safety.ledger


@pytest.fixture(scope="session")
def alt_api(
    target: Target, suite_settings: SuiteSettings, run_safety: safety.Session
) -> Iterator[httpx.Client]:
    """A client of the second principal; tests that need it are skipped without --alt-token."""
    if not target.alt_token:
        pytest.skip("no second principal: give --alt-token to check isolation")
    with _client(target, suite_settings, run_safety, ALT) as client:
        yield client


@pytest.fixture(scope="session")
def anonymous_api(
    target: Target, suite_settings: SuiteSettings, run_safety: safety.Session
) -> Iterator[httpx.Client]:
    """A client that sends no credential."""
    with _client(target, suite_settings, run_safety, ANONYMOUS) as client:
        yield client


@pytest.fixture(scope="session")
def capability_groups(
    pytestconfig: pytest.Config, suite_settings: SuiteSettings, api: httpx.Client
) -> dict[str, capabilities.GroupStatus]:
    """Optional groups: declared unsupported, or probed once at the first test that needs one."""
    found = pytestconfig.stash[CAPS_KEY]
    skip = suite_settings.unsupported
    if suite_settings.read_only:  # these probes send writes: their groups stay unprobed
        writes = tuple(g for g in safety.WRITE_PROBED_GROUPS if g not in skip)
        unprobed = ["read-only mode: probing it would send a write"]
        found.update(
            {g: capabilities.GroupStatus(capabilities.NOT_PROBED, "", unprobed) for g in writes}
        )
        skip += writes
    found.update(capabilities.probe(api, skip=skip))
    return found


@pytest.fixture(autouse=True)
def _capability_gate(request: pytest.FixtureRequest) -> None:
    """Skip a test that checks a requirement of a group the target does not implement."""
    catalogue = load()
    sections = {catalogue[rid].section for rid in requirement_ids(request.node)}
    groups = sorted({g for s in sections if (g := capabilities.group_of_section(s))})
    if not groups:
        return
    found = request.config.stash[CAPS_KEY]
    if not all(g in found for g in groups):
        found = request.getfixturevalue("capability_groups")
    for group in groups:
        if found[group].status == capabilities.UNSUPPORTED:
            pytest.skip(capabilities.skip_reason(found[group], group))


# --- findings → test outcome → requirement verdicts -------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    settings = item.config.stash[SETTINGS_KEY]
    record = TestRecord(frozenset(requirement_ids(item)), settings.strict_conformance)
    item.stash[_RECORD_KEY] = record
    findings.state.current = record
    try:
        return (yield)
    finally:
        findings.state.current = None


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


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[STATE_KEY].update(started=datetime.now(UTC), clock=time.monotonic())


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> bool | None:
    """--sweep: remove what earlier runs left on the target, and run no tests."""
    settings = session.config.stash[SETTINGS_KEY]
    if not settings.sweep:
        return None
    session.items = []
    session.config.stash[STATE_KEY]["sweep"] = safety.sweep(settings)
    return True


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    collector = config.stash[COLLECTOR_KEY]
    state = config.stash[STATE_KEY]
    if "sweep" in state:
        session.exitstatus = state["sweep"].exit_status
        return
    if hasattr(config, "workerinput") or not collector.results:
        return  # not a conformance run (e.g. the project's selftests): pytest decides
    settings = config.stash[SETTINGS_KEY]
    run = build(
        load(),
        collector.results,
        info=run_info(settings, state["started"], time.monotonic() - state["clock"]),
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
    for line in safety.summary(state):
        terminalreporter.write_line(line)
