"""Concurrency: the run spreads over pytest-xdist workers, --concurrency N of them. By default one
per core on loopback, at most LOCAL_MOST (the embedded reference, a local server: little waiting
to overlap, and the same cores serve both); against a target off this machine (or with
--concurrency auto) as many as keep this machine's cores busy while each worker waits on its
answers: the pre-flight's read is timed (`target.round_trip`) and the count follows from it
(`from_round_trip`), between REMOTE_CONCURRENCY and REMOTE_MOST. Each test's generated cases come
from --seed and the test's name, so the verdicts do not depend on which worker ran it; reports,
the ledger and measurements merge on the controller (suite/run/reporting.py). A run given
--shard I/N keeps its share of the tests (the share itself: suite/config/shards.py).

How many workers is asked of pytest-xdist before configure (`ask_workers`, from the plugin's
`pytest_cmdline_main`); the rest is the plugin object `Dealing`, registered at configure."""

from __future__ import annotations

import ipaddress
import math
import os
from collections.abc import Generator
from urllib.parse import urlsplit

import pytest

from assistant_conformance.report import integrations, redact
from assistant_conformance.suite.config import shards
from assistant_conformance.suite.config.options import LOCAL_MOST, REMOTE_CONCURRENCY, REMOTE_MOST
from assistant_conformance.suite.config.settings import (
    OptionError,
    SuiteSettings,
    is_on,
    option_value,
)
from assistant_conformance.suite.config.shards import duration_key, durations, split
from assistant_conformance.suite.http.policy import Policy
from assistant_conformance.suite.http.target import HarnessError, preflight, remote, round_trip
from assistant_conformance.suite.run import capabilities
from assistant_conformance.suite.run.forked_workers import CHOSEN
from assistant_conformance.suite.run.state import harness_stop, run_setup

# Client CPU seconds per request of a run in one process (sending, reading, judging, generating):
# bench/run.py measures it ("client CPU per request"), about 3 ms on a 2-core machine.
CLIENT_CPU_PER_REQUEST = 0.003
AUTO = "auto"
# The round trip (seconds) the pre-flight measured to choose the workers: said in the header;
# or why the pre-flight found the target unusable: the run ends so as it starts.
ROUND_TRIP_KEY = pytest.StashKey[float]()
UNUSABLE_KEY = pytest.StashKey[str]()
# Groups whose creates stay (a chat-kit session has no delete): a run makes at most 3 of them
# (safety/budget.py), each kept in the memory of the process that made it, where the group's next
# check uses one. Their tests run on one worker, first, where no other worker steals them; those
# marked AFTER_PROBE after that worker's property tests (they wait on what the probe made).
STAYING_GROUPS = ("chatkit",)
AFTER_PROBE = "after_probe"


def ask_workers(config: pytest.Config) -> None:
    """Ask xdist for the workers unless -n was given, xdist is off, the run is not of the suite's
    checks (another project's tests, with the package installed), or it cannot be spread (a
    worker, --collect-only, --pdb, --sweep)."""
    if hasattr(config, "workerinput") or not config.pluginmanager.hasplugin("xdist"):
        return
    if not integrations.is_suite_run(config):
        return
    if config.getoption("numprocesses", None) is not None:
        return
    if config.getoption("collectonly") or config.getoption("usepdb"):
        return
    if is_on(option_value(config, "sweep")):
        return
    try:
        count = workers(config)
    except OptionError as exc:
        raise pytest.UsageError(str(exc)) from None
    if count > 1:
        config.option.numprocesses = count
        if config.getoption("dist", "no") == "no":
            config.option.dist = "worksteal"  # the long tests (state machines, runs) end apart
            config.stash[CHOSEN] = not config.getoption("tx", None)  # forked (forked_workers.py)


class Dealing:
    """The tests dealt to the workers (and to a shard), the target's pre-flight asked once for
    them all, the workers said in the header. A plugin object."""

    @pytest.hookimpl(wrapper=True)  # its part once every other is done (pytest's selection)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> Generator[None, None, None]:
        selected = yield
        deal(config, items)
        return selected

    @pytest.hookimpl(wrapper=True)  # registered after the reference's launch: around it
    def pytest_sessionstart(self, session: pytest.Session) -> Generator[None, None, None]:
        if (reason := session.config.stash.get(UNUSABLE_KEY, None)) is not None:
            harness_stop(session.config).end(reason)
        started = yield
        if run_setup(session.config).controller:
            ask_once(session.config)
        return started

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        seconds = config.stash.get(ROUND_TRIP_KEY, None)
        if seconds is None:
            return []
        count = getattr(config.option, "numprocesses", None) or 1
        return [f"workers: {count}, for a round trip of {seconds * 1000:.0f} ms (the pre-flight's)"]


def deal(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a pytest-xdist worker (every worker orders alike): the order its scheduler deals. Then,
    given --shard I/N, after every other selection (-k, -m, paths): only the shard's share of the
    tests runs; the others are deselected (counted as such by pytest)."""
    setup = run_setup(config)
    worker = getattr(config, "workerinput", None)
    if worker is not None:
        workers = int(worker.get("workercount", 1))
        items[:] = worksteal_order(items, workers, setup.settings.examples)
    if setup.active and (shard := setup.settings.shard) is not None:
        mine = shards.share([item.nodeid for item in items], shard, setup.settings.examples)
        config.hook.pytest_deselected(items=[i for i in items if i.nodeid not in mine])
        items[:] = [item for item in items if item.nodeid in mine]


def worksteal_order(items: list[pytest.Item], workers: int, examples: int) -> list[pytest.Item]:
    """The collection as xdist's worksteal hands it out (equal-count contiguous shares, in order;
    a worker that ends early steals from the end of another's): the tests of STAYING_GROUPS at the
    head of the first share (those marked AFTER_PROBE after its property tests); then each share's
    part of the property layer, dealt by the shipped durations (longest first, each to the least
    loaded share: the long chains start at once, on different workers); then the next run of the
    other tests, a module's together (its fixtures made once a share), the module with the
    longest test first: a share ends with short tests, which a worker that is done may take."""
    staying = [i for i in items if set(capabilities.groups_of(i)) & set(STAYING_GROUPS)]
    later = [i for i in staying if i.get_closest_marker(AFTER_PROBE)]
    generated = [i for i in items if i.path.parent.name == "property" and i not in staying]
    rest = [i for i in items if i.path.parent.name != "property" and i not in staying]
    rest = _longest_module_first(rest, examples)
    by_id = {item.nodeid: item for item in generated}
    ordered = [i for i in staying if i not in later]
    sizes = _share_sizes(len(items), workers)
    sizes[0] -= len(staying)
    for size, share in zip(sizes, split(list(by_id), workers, examples), strict=True):
        taken = max(0, size - len(share))
        ordered += [by_id[nodeid] for nodeid in share] + later + rest[:taken]
        later, rest = [], rest[taken:]
    return ordered + rest


def _longest_module_first(items: list[pytest.Item], examples: int) -> list[pytest.Item]:
    """`items`, a module's together, by their module's longest test (shipped durations)."""
    known = durations(examples)
    longest: dict[str, float] = {}
    for item in items:
        seconds = known.get(duration_key(item.nodeid), 0.0)
        longest[item.path.name] = max(longest.get(item.path.name, 0.0), seconds)
    return sorted(items, key=lambda item: -longest[item.path.name])  # stable: in a module, as is


def _share_sizes(count: int, workers: int) -> list[int]:
    """How many tests each worker gets first: worksteal's split of the collection."""
    sizes: list[int] = []
    for index in range(workers):
        sizes.append((count - sum(sizes)) // (workers - index))
    return sizes


def workers(config: pytest.Config) -> int:
    """--concurrency N; else (or with --concurrency auto) from the round trip off this machine,
    and one per core on loopback (at most LOCAL_MOST)."""
    given = option_value(config, "concurrency")
    base_url = option_value(config, "base_url")
    local = min(LOCAL_MOST, os.cpu_count() or 1)
    if given is None and not (base_url and not is_loopback(base_url)):
        return local
    if given is None or str(given).strip().lower() == AUTO:
        return measured_workers(config) if base_url else local  # the embedded reference is local
    try:
        return max(1, int(given))
    except ValueError:
        raise OptionError(f"--concurrency expects int or {AUTO!r}, got {given!r}") from None


def measured_workers(config: pytest.Config) -> int:
    """The workers for the round trip the pre-flight measures. A target the pre-flight cannot
    use gets none: the session ends the run in the pre-flight's one line as it starts."""
    settings = SuiteSettings.from_config(config)
    with redact.scope() as secrets:  # the tokens, and headers a policy registers: masked
        secrets.register(settings.token)
        target = remote(settings)
        policy = Policy.of(settings)
        try:
            preflight(target, policy)
            seconds = round_trip(target, policy)
        except HarnessError as exc:  # said once the session starts: not asked (and waited) again
            config.stash[UNUSABLE_KEY] = redact.text(str(exc))
            return 1
    config.stash[ROUND_TRIP_KEY] = seconds
    return from_round_trip(seconds, os.cpu_count() or 1)


def from_round_trip(seconds: float, cores: int) -> int:
    """Enough workers that, each waiting `seconds` per request and working CLIENT_CPU_PER_REQUEST,
    they keep `cores` busy: cores x (1 + wait / work); between REMOTE_CONCURRENCY (a remote
    target also waits on its own work: streams, processing) and REMOTE_MOST."""
    wanted = math.ceil(cores * (1 + seconds / CLIENT_CPU_PER_REQUEST))
    return max(REMOTE_CONCURRENCY, min(REMOTE_MOST, wanted))


def ask_once(config: pytest.Config) -> None:
    """Each worker would meet a target it cannot use on its own: the controller asks once (unless
    counting the workers asked already), and a target it cannot use ends the run in one line."""
    setup = run_setup(config)
    settings = setup.settings
    if not (settings.base_url and settings.token) or settings.sweep:
        return
    if ROUND_TRIP_KEY in config.stash:
        return
    try:
        preflight(remote(settings), setup.policy)
    except HarnessError as exc:
        harness_stop(config).end(str(exc))


def is_loopback(base_url: str) -> bool:
    host = (urlsplit(base_url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
