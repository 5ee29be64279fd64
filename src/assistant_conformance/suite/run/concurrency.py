"""Concurrency: the run spreads over pytest-xdist workers, --concurrency N of them. By default 1
on loopback (the embedded reference, a local server: little waiting to overlap, and the same cores
serve both); against a target off this machine (or with --concurrency auto) as many as keep this
machine's cores busy while each worker waits on its answers: the pre-flight's read is timed
(`target.round_trip`) and the count follows from it (`from_round_trip`), between
REMOTE_CONCURRENCY and REMOTE_MOST. Each test's generated cases come from --seed and the test's
name, so the verdicts do not depend on which worker ran it; reports, the ledger and measurements
merge on the controller (suite/run/state.py)."""

from __future__ import annotations

import ipaddress
import math
import os
from collections.abc import Generator
from urllib.parse import urlsplit

import pytest

from assistant_conformance.report import redact
from assistant_conformance.report.exits import Exit
from assistant_conformance.suite.config.options import REMOTE_CONCURRENCY, REMOTE_MOST
from assistant_conformance.suite.config.settings import (
    OptionError,
    SuiteSettings,
    is_on,
    option_value,
)
from assistant_conformance.suite.http.policy import Policy
from assistant_conformance.suite.http.target import HarnessError, preflight, remote, round_trip
from assistant_conformance.suite.run.state import run_state

# Client CPU seconds per request of a run in one process (sending, reading, judging, generating):
# bench/run.py measures it ("client CPU per request"), about 3 ms on a 2-core machine.
CLIENT_CPU_PER_REQUEST = 0.003
AUTO = "auto"
# The round trip (seconds) the pre-flight measured to choose the workers: said in the header;
# or why the pre-flight found the target unusable: the run ends so as it starts.
ROUND_TRIP_KEY = pytest.StashKey[float]()
UNUSABLE_KEY = pytest.StashKey[str]()

# The longest single tests: a whole state machine each (seconds of serial requests). Spread apart
# in the collection, they start early on different workers instead of queueing on one.
LONGEST = ("tests/property/test_stateful.py::",)


# A wrapper: before pytest-xdist's own reads -n, whichever plugin loaded first (its hook is
# tryfirst too, and of two such the later loaded runs first: with the package also on PYTHONPATH
# xdist's came first and the run was not spread).
@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config: pytest.Config) -> Generator[None, int | None, int | None]:
    ask_workers(config)
    return (yield)


def ask_workers(config: pytest.Config) -> None:
    """Ask xdist for the workers unless -n was given, xdist is off, or the run cannot be spread
    (a worker, --collect-only, --pdb, --sweep)."""
    if hasattr(config, "workerinput") or not config.pluginmanager.hasplugin("xdist"):
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


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a pytest-xdist worker (every worker orders alike): the longest tests placed evenly
    through the collection, which xdist hands out in contiguous shares."""
    if hasattr(config, "workerinput"):
        items[:] = spread_longest(items)


def spread_longest(items: list[pytest.Item]) -> list[pytest.Item]:
    longest = [item for item in items if item.nodeid.startswith(LONGEST)]
    if not longest:
        return items
    rest = [item for item in items if not item.nodeid.startswith(LONGEST)]
    step = len(items) / len(longest)
    for index, item in enumerate(longest):
        rest.insert(round(index * step), item)
    return rest


def workers(config: pytest.Config) -> int:
    """--concurrency N; else (or with --concurrency auto) from the round trip off this machine,
    and 1 on loopback."""
    given = option_value(config, "concurrency")
    base_url = option_value(config, "base_url")
    if given is None and not (base_url and not is_loopback(base_url)):
        return 1
    if given is None or str(given).strip().lower() == AUTO:
        return measured_workers(config) if base_url else 1  # the embedded reference is local
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


@pytest.hookimpl(wrapper=True, tryfirst=True)  # before the plugin's own pre-flight
def pytest_sessionstart(session: pytest.Session) -> Generator[None, None, None]:
    if (reason := session.config.stash.get(UNUSABLE_KEY, None)) is not None:
        run_state(session.config).stopped = reason
        pytest.exit(f"harness error: {reason}", returncode=Exit.HARNESS)
    return (yield)


def pytest_report_header(config: pytest.Config) -> list[str]:
    seconds = config.stash.get(ROUND_TRIP_KEY, None)
    if seconds is None:
        return []
    count = getattr(config.option, "numprocesses", None) or 1
    return [f"workers: {count}, for a round trip of {seconds * 1000:.0f} ms (the pre-flight's)"]


def is_loopback(base_url: str) -> bool:
    host = (urlsplit(base_url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
