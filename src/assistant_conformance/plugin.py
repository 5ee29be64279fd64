"""The suite's pytest plugin: options, target fixtures, requirement markers and verdicts."""

from __future__ import annotations

from collections.abc import Generator, Iterator

import httpx
import pytest

from . import __version__, findings, redact, reporting
from .catalogue import load
from .findings import FAIL, Finding, TestRecord
from .ledger import Ledger
from .results import TestResult
from .settings import OptionError, SuiteSettings, add_options
from .target import HarnessError, Target, open_target

HARNESS_ERROR_EXIT = 3  # target unreachable, token rejected, reference failed: not a finding
SETTINGS_KEY = pytest.StashKey[SuiteSettings]()
RESULTS_KEY = pytest.StashKey[list[TestResult]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "req(*ids): requirement IDs (spec/requirements.yaml) the test checks"
    )
    catalogue = load()
    for key, title in catalogue.sections.items():
        config.addinivalue_line("markers", f"{key}: requirements of section {title}")
    config.addinivalue_line("markers", "MUST: checks a requirement the interface document states")
    config.addinivalue_line(
        "markers", "SHOULD: checks a requirement implied by HTTP, SSE or practice"
    )
    try:
        config.stash[SETTINGS_KEY] = SuiteSettings.from_config(config)
    except OptionError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[RESULTS_KEY] = []


def pytest_report_header(config: pytest.Config) -> list[str]:
    settings = config.stash[SETTINGS_KEY]
    target = settings.base_url or "embedded reference server (started on loopback)"
    return [
        f"assistant-conformance {__version__}: target {redact.text(target)}, seed {settings.seed}, "
        f"examples {settings.examples}, strict {'on' if settings.strict_conformance else 'off'}"
    ]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Make requirement IDs, their sections and levels selectable with -k and -m."""
    catalogue = load()
    for item in items:
        for rid in requirement_ids(item):
            req = catalogue[rid]  # an unknown ID is an error in the suite itself
            item.extra_keyword_matches.add(rid)
            item.add_marker(req.section)
            item.add_marker(req.level)


def requirement_ids(item: pytest.Item) -> list[str]:
    return [rid for mark in item.iter_markers("req") for rid in mark.args]


# --- fixtures ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def suite_settings(pytestconfig: pytest.Config) -> SuiteSettings:
    return pytestconfig.stash[SETTINGS_KEY]


@pytest.fixture(scope="session")
def target(
    suite_settings: SuiteSettings, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Target]:
    try:
        opened = open_target(suite_settings, tmp_path_factory.mktemp("target"))
    except HarnessError as exc:
        pytest.exit(f"harness error: {exc}", returncode=HARNESS_ERROR_EXIT)
    yield opened
    opened.stop()


def _client(target: Target, settings: SuiteSettings, token: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=target.base_url, headers=headers, timeout=settings.request_timeout)


@pytest.fixture(scope="session")
def api(target: Target, suite_settings: SuiteSettings) -> Iterator[httpx.Client]:
    """A client of the main principal."""
    with _client(target, suite_settings, target.token) as client:
        yield client


@pytest.fixture(scope="session")
def ledger(api: httpx.Client, suite_settings: SuiteSettings) -> Iterator[Ledger]:
    """Tracks what the run creates; removes it at the end of the session."""
    suite_settings.report_dir.mkdir(parents=True, exist_ok=True)
    own = Ledger(suite_settings.report_dir / "ledger.jsonl")
    yield own
    leftovers = own.clean_up(api)
    if leftovers:
        print("\ncould not remove what the suite created: " + "; ".join(leftovers))


@pytest.fixture(scope="session")
def alt_api(target: Target, suite_settings: SuiteSettings) -> Iterator[httpx.Client]:
    """A client of the second principal; tests that need it are skipped without --alt-token."""
    if not target.alt_token:
        pytest.skip("no second principal: give --alt-token to check isolation")
    with _client(target, suite_settings, target.alt_token) as client:
        yield client


@pytest.fixture(scope="session")
def anonymous_api(target: Target, suite_settings: SuiteSettings) -> Iterator[httpx.Client]:
    """A client that sends no credential."""
    with _client(target, suite_settings, None) as client:
        yield client


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


_RECORD_KEY = pytest.StashKey[TestRecord]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if call.when != "call" and not (report.failed or report.skipped):
        return report
    record = item.stash.get(_RECORD_KEY, None) if call.when == "call" else None
    recorded = record.findings if record else []
    failed = [f for f in recorded if f.verdict == FAIL]
    if failed and not report.failed:
        report.outcome = "failed"
        report.longrepr = "\n\n".join(f.render() for f in failed)
    elif failed and report.failed:
        report.longrepr = "\n\n".join(f.render() for f in failed) + f"\n\n{report.longrepr}"
    report.user_properties.append(("requirements", ",".join(requirement_ids(item))))
    for finding in recorded:
        report.user_properties.append(("finding", finding.to_json()))
    return report


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    props = dict((k, v) for k, v in report.user_properties if k == "requirements")
    if "requirements" not in props or not props["requirements"]:
        return
    if report.when != "call" and report.passed:
        return
    outcome = (
        report.outcome if report.when == "call" else ("skipped" if report.skipped else "error")
    )
    skip_reason = ""
    if report.skipped and isinstance(report.longrepr, tuple):
        skip_reason = str(report.longrepr[2]).removeprefix("Skipped: ")
    result = TestResult(
        nodeid=report.nodeid,
        requirements=props["requirements"].split(","),
        outcome=outcome,
        findings=[Finding.from_json(v) for k, v in report.user_properties if k == "finding"],
        skip_reason=redact.text(skip_reason),
        duration=report.duration,
    )
    _results.append(result)


_results: list[TestResult] = []


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    if hasattr(config, "workerinput") or not _results:
        return
    reporting.terminal_summary(terminalreporter, _results)


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    if hasattr(config, "workerinput") or not _results:
        return
    settings = config.stash[SETTINGS_KEY]
    reporting.write_reports(settings, _results)
