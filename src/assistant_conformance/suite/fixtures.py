"""The suite's fixtures: settings, the target, the run's safety session and transport policy,
clients of each principal (httpx's, and the property layer's requests session), all made by
suite/http/clients.py with the run's guard around them, and the capability gate. Registered by the
plugin (suite/plugin.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest
import requests

from assistant_conformance.contract.resources import capability_probes, write_probed
from assistant_conformance.suite.config.settings import SuiteSettings
from assistant_conformance.suite.flows import Waits
from assistant_conformance.suite.flows.agent import Agent, agent_record, runs_started
from assistant_conformance.suite.flows.control import resolve_agent
from assistant_conformance.suite.http import clients
from assistant_conformance.suite.http.policy import Policy
from assistant_conformance.suite.http.target import HarnessError, Target, open_target
from assistant_conformance.suite.run import capabilities, shared_reference, stats
from assistant_conformance.suite.run.state import (
    harness_stop,
    measurements,
    run_setup,
    target_found,
)
from assistant_conformance.suite.safety.ledger import ALT, ANONYMOUS, MAIN, Ledger
from assistant_conformance.suite.safety.session import SafetySession

WAITS_FILE = "waits.json"  # the polls that waited out their bound (config/run_folder.py)


@pytest.fixture(scope="session")
def suite_settings(pytestconfig: pytest.Config) -> SuiteSettings:
    return run_setup(pytestconfig).settings


@pytest.fixture(scope="session")
def policy(pytestconfig: pytest.Config) -> Policy:
    """The run's transport policy (suite/http/policy.py): every client of the target is made from
    it by suite/http/clients.py, so every answer is read through the door's bounds."""
    return run_setup(pytestconfig).policy


@pytest.fixture(scope="session")
def waits(pytestconfig: pytest.Config) -> Waits:
    """The polls that waited their whole bound in this run, every process's (flows.Waits)."""
    return Waits(run_setup(pytestconfig).counts_folder.counts(WAITS_FILE))


@pytest.fixture(scope="session")
def target(
    pytestconfig: pytest.Config,
    suite_settings: SuiteSettings,
    policy: Policy,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Target]:
    try:
        workdir = tmp_path_factory.mktemp("target")
        shared = shared_reference.handed_reference(pytestconfig)
        opened = open_target(suite_settings, workdir, policy, shared)
    except HarnessError as exc:
        harness_stop(pytestconfig).end(str(exc))
    target_found(pytestconfig).lacking = opened.lacking
    measurements(pytestconfig).add(stats.ABSENT, *(a.as_dict() for a in opened.lacking))
    yield opened
    opened.stop()


@pytest.fixture(scope="session")
def run_safety(
    pytestconfig: pytest.Config, suite_settings: SuiteSettings, target: Target, policy: Policy
) -> Iterator[SafetySession]:
    """The run's guard and ledger; at the end, removes what the run created (or keeps it)."""
    shared = run_setup(pytestconfig).counts_folder
    safety = SafetySession.open(suite_settings, target, policy, shared)
    target_found(pytestconfig).safety = safety
    yield safety
    safety.finish(target, keep=suite_settings.no_cleanup)


def _client(target: Target, run: SafetySession, principal: str) -> httpx.Client:
    """A client of `principal` (its token, if the run holds one), the run's guard around it."""
    token = {MAIN: target.token, ALT: target.alt_token}.get(principal)
    return clients.client(run.policy, target.base_url, token, around=run.around(principal, token))


@pytest.fixture(scope="session")
def api(target: Target, run_safety: SafetySession) -> Iterator[httpx.Client]:
    """A client of the main principal."""
    with _client(target, run_safety, MAIN) as client:
        yield client


@pytest.fixture(scope="session")
def ledger(run_safety: SafetySession) -> Ledger:
    """Tracks what the run creates (the suite's clients record their creates themselves); what it
    lists is removed at the end of the session, newest first."""
    return run_safety.ledger


@pytest.fixture(scope="session")
def alt_api(target: Target, run_safety: SafetySession) -> Iterator[httpx.Client]:
    """A client of the second principal; tests that need it are skipped without --alt-token."""
    if not target.alt_token:
        pytest.skip("no second principal: give --alt-token to check isolation")
    with _client(target, run_safety, ALT) as client:
        yield client


@pytest.fixture(scope="session")
def anonymous_api(target: Target, run_safety: SafetySession) -> Iterator[httpx.Client]:
    """A client that sends no credential."""
    with _client(target, run_safety, ANONYMOUS) as client:
        yield client


@pytest.fixture(scope="module")
def api_session(target: Target, run_safety: SafetySession) -> Iterator[requests.Session]:
    """A requests session of the main principal, the run's guard around it: the property
    layer's (schemathesis sends its cases with requests). One per test module."""
    with clients.session(run_safety.policy, around=run_safety.around(MAIN, target.token)) as made:
        yield made


@pytest.fixture(scope="session")
def capability_groups(
    pytestconfig: pytest.Config,
    suite_settings: SuiteSettings,
    api: httpx.Client,
    run_safety: SafetySession,
) -> Callable[[list[str]], dict[str, capabilities.GroupStatus]]:
    """Optional groups: declared unsupported, or probed at the first test of each here. Only
    the groups a test needs, where it runs: a probe may make what nothing removes (a chat-kit
    session), which that group's checks, on the same worker, then use rather than make more."""
    found = target_found(pytestconfig).capabilities
    skip = suite_settings.unsupported
    if suite_settings.read_only:  # these probes send writes: their groups stay unprobed
        writes = tuple(g for g in write_probed() if g not in skip)
        unprobed = ["read-only mode: probing it would send a write"]
        found.update(
            {g: capabilities.GroupStatus(capabilities.NOT_PROBED, "", unprobed) for g in writes}
        )
        skip += writes
    ledger = run_safety.ledger  # a probe that would make what nothing removes, made already

    def probed(groups: list[str]) -> dict[str, capabilities.GroupStatus]:
        others = tuple(g for g in capability_probes() if g not in groups or g in found)
        found.update(
            capabilities.probe_groups(
                api,
                skip + others,
                lambda method, path: ledger.budget.probing(ledger.unremovable(method, path)),
            )
        )
        return found

    return probed


@pytest.fixture
def capability_gate(request: pytest.FixtureRequest) -> None:
    """Skip a test that checks a requirement of a group the target does not implement."""
    groups = capabilities.groups_of(request.node)
    found = target_found(request.config).capabilities
    if not all(g in found for g in groups):
        found = request.getfixturevalue("capability_groups")(groups)
    for group in groups:
        if found[group].status == capabilities.UNSUPPORTED_GROUP:
            pytest.skip(capabilities.skip_reason(found[group], group))


@pytest.fixture(scope="session")
def agent(
    pytestconfig: pytest.Config,
    suite_settings: SuiteSettings,
    target: Target,
    api: httpx.Client,
    ledger: Ledger,
) -> Iterator[Agent]:
    """The assistant and input every run of the session uses (flows/agent.py); at the end, what
    the runs cost (the runs of the threads the session created, read before they are removed)."""
    found = resolve_agent(
        api,
        ledger,
        assistant=suite_settings.assistant,
        run_input=suite_settings.run_input,
        embedded=target.embedded,
        read_only=suite_settings.read_only,
        timeout=suite_settings.process_timeout,
    )
    yield found
    measured = measurements(pytestconfig)
    measured.add(stats.AGENT, agent_record(found))
    measured.add(stats.RUNS_STARTED, *[c.as_json() for c in runs_started(api, ledger)])
