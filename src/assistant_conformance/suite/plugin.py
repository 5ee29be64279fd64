"""The suite's pytest plugin: its options, and at configure the run's state and the plugin objects
that hold each concern of a run, registered in order.

Each concern keeps its typed key on the config's stash (suite/run/state.py) and, where it acts on
pytest's hooks, a plugin object registered here: the garbage collector's schedule (run/memory.py),
the results as reports arrive and NotJudged made a skip (run/outcomes.py), the requirement markers
and labels (`Labels`), a harness error's stop (run/state.py), each test's record and verdict
(run/recording.py), the run's end and reports (run/reporting.py), a spread run's one embedded
reference (run/shared_reference.py), the spread over workers (run/concurrency.py), --sweep
(run/reporting.py). The plugin changes nothing at import. Its fixtures (the target, clients of each
principal, the run's ledger) are in suite/fixtures.py.
"""

from __future__ import annotations

import secrets
from collections.abc import Generator
from typing import Any

import pytest

from assistant_conformance.contract.catalogue import load
from assistant_conformance.report import baseline, closed_pipe, integrations, redact
from assistant_conformance.suite.config import argv
from assistant_conformance.suite.config.run_folder import Measurements, RunFolder
from assistant_conformance.suite.config.settings import (
    OptionError,
    SuiteSettings,
    add_options,
    check_report_dir,
)
from assistant_conformance.suite.http import clients
from assistant_conformance.suite.http.policy import Policy
from assistant_conformance.suite.property import compat, generation
from assistant_conformance.suite.run import capabilities, forked_workers, identity, outcomes
from assistant_conformance.suite.run.concurrency import AFTER_PROBE, Dealing, ask_workers
from assistant_conformance.suite.run.memory import CollectorSchedule
from assistant_conformance.suite.run.outcomes import requirement_ids
from assistant_conformance.suite.run.recording import TestRecording
from assistant_conformance.suite.run.reporting import RunReporting, Sweeping
from assistant_conformance.suite.run.shared_reference import SharedReference
from assistant_conformance.suite.run.state import (
    COLLECTED,
    FOUND,
    MEASURED,
    SESSION,
    SETUP,
    STOP,
    HarnessStop,
    RunSetup,
    TargetFound,
    run_setup,
)
from assistant_conformance.suite.safety.guarded import Guarding, ProbesAdapter
from assistant_conformance.suite.safety.ledger import ANONYMOUS
from assistant_conformance.suite.safety.session import GUARDED_CLIENTS

pytest_plugins = ("assistant_conformance.suite.fixtures",)
_REDACTION = pytest.StashKey[Any]()  # the token that makes the run's secrets active


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(tryfirst=True)  # before pytest roots the run at a path it was given
def pytest_load_initial_conftests(early_config: pytest.Config, args: list[str]) -> None:
    argv.root_the_run(early_config, args)


# A wrapper: before pytest-xdist's own reads -n, whichever plugin loaded first (its hook is
# tryfirst too, and of two such the later loaded runs first: with the package also on PYTHONPATH
# xdist's came first and the run was not spread).
@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config: pytest.Config) -> Generator[None, int | None, int | None]:
    ask_workers(config)
    return (yield)


@pytest.hookimpl(tryfirst=True)  # before junitxml and allure-pytest read their options
def pytest_configure(config: pytest.Config) -> None:
    argv.attach_values(config)  # before pytest-xdist hands the workers their command
    active = integrations.is_suite_run(config)  # the plugin leaves other runs' tests alone
    forked_workers.fork_workers(config)  # before the run's first thread (and the collector's)
    if active:  # first: the collector off through the rest of start-up
        config.pluginmanager.register(CollectorSchedule(), "assistant-conformance-memory")
    closed_pipe.quiet_stdout()  # before the terminal takes stdout: a closed pipe ends no run
    catalogue = load()
    add_markers(config, catalogue.sections)
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
    folder = RunFolder.of(settings.report_dir, session)
    workers = int(worker.get("workercount", 1)) if worker else 1
    controller = bool(config.getoption("numprocesses", None))  # xdist sets None in its workers
    policy = Policy.of(settings, share=workers, shared=folder if active else None)
    if active and not controller:  # tests run here
        compat.install(ProbesAdapter(clients.adapter(policy), lambda: _probes_guarding(config)))
        generation.configure(settings.seed, settings.examples)
    elif active:  # the workers' shared table, built once here while they start (compat.py, 9)
        compat.build_codec_table()
    if settings.insecure:  # said once in the header and the report, not on every request
        config.addinivalue_line(
            "filterwarnings", "ignore::urllib3.exceptions.InsecureRequestWarning"
        )
    setup = RunSetup(
        settings, policy, masked, known, bool(worker), active, controller, session, folder
    )
    found = TargetFound(capabilities.declared_unsupported(settings.unsupported))
    register_objects(config, setup, found)
    integrations.default_outputs(config, settings.report_dir)


def add_markers(config: pytest.Config, sections: dict[str, str]) -> None:
    """The markers the suite's checks carry (--strict-markers knows them)."""
    config.addinivalue_line(
        "markers", "req(*ids): requirement IDs (spec/requirements.yaml) the test checks"
    )
    for key, title in sections.items():
        config.addinivalue_line("markers", f"{key}: requirements of section {title}")
    config.addinivalue_line("markers", "MUST: checks a requirement the interface document states")
    config.addinivalue_line("markers", "writes: the test changes data: skipped under --read-only")
    config.addinivalue_line(
        "markers", "SHOULD: checks a requirement implied by HTTP, SSE or practice"
    )
    config.addinivalue_line(
        "markers", f"{AFTER_PROBE}: waits on what its group's probe made: run it some tests later"
    )


def register_objects(config: pytest.Config, setup: RunSetup, found: TargetFound) -> None:
    """The run's state under its keys, and its plugin objects. pytest calls a hook's
    implementations the later registered first (a wrapper: outside): the spread over workers
    (`Dealing`) wraps the others' session start, the shared reference's launch
    (`SharedReference`) among them."""
    collector = outcomes.Collector(found.capabilities)
    stop = HarnessStop(found, setup.worker)
    config.stash[SETUP], config.stash[FOUND], config.stash[STOP] = setup, found, stop
    config.stash[MEASURED], config.stash[COLLECTED] = Measurements(), collector
    plugins: list[tuple[object, str]] = [
        (capabilities.CapabilityGate(), "capability-gate"),
        (collector, "collector"),
        (outcomes.NotJudgedSkips(), "skips"),
        (Labels(), "labels"),
        (stop, "stop"),
        (TestRecording(), "recording"),
        (RunReporting(), "reporting"),
        (SharedReference(), "shared-reference"),
        (Dealing(), "dealing"),
    ]
    if setup.settings.sweep:
        plugins.append((Sweeping(), "sweep"))
    for plugin, name in plugins:
        config.pluginmanager.register(plugin, f"assistant-conformance-{name}")


def _probes_guarding(config: pytest.Config) -> Guarding | None:
    """The guard and ledger around schemathesis' probes: the run's, for a principal without a
    credential of the run (they send a case again without it)."""
    found = config.stash.get(FOUND, None)
    return found.safety.around(ANONYMOUS, None) if found and found.safety else None


def pytest_unconfigure(config: pytest.Config) -> None:
    if (token := config.stash.get(_REDACTION, None)) is not None:
        redact.deactivate(token)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist: the workers' measurements join this session's (suite/run/state.py)."""
    node.workerinput[SESSION] = run_setup(node.config).session


class Labels:
    """The requirements a test checks, as pytest and the reports see them."""

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        """The target and the options (no request is sent: the session checks the target)."""
        setup = run_setup(config)
        if not setup.active:
            return []
        return identity.header_lines(setup.settings, len(setup.baseline))

    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        """Requirement IDs, their sections and levels selectable with -k and -m (before pytest's
        own selection, registered after it); labelled for JUnit and Allure."""
        label_items(config, items)


def label_items(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Make requirement IDs, their sections and levels selectable with -k and -m; label them."""
    catalogue = load()
    if run_setup(config).settings.read_only:
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


def writers(items: list[pytest.Item]) -> list[pytest.Item]:
    """--read-only: the tests to skip up front: the property layer (its generated cases write,
    `api_session`), anything marked `writes`, and what sends through clients other than
    GUARDED_CLIENTS (the credential cases'); the guard skips the rest at their first write."""
    found = []
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        generated = "api_session" in names
        unguarded = "target" in names and not names & set(GUARDED_CLIENTS)
        if item.get_closest_marker("writes") or generated or unguarded:
            found.append(item)
    return found
