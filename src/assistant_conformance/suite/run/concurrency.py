"""Concurrency: the run spreads over pytest-xdist workers, --concurrency N of them; by default
REMOTE_CONCURRENCY against a target off this machine and 1 on loopback (the embedded reference, a
local server: little waiting to overlap, and the same cores serve both). Each test's generated
cases come from --seed and the test's name, so the verdicts do not depend on which worker ran
it; reports, the ledger and measurements merge on the controller (suite/run/state.py)."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

import pytest

from assistant_conformance.suite.config.options import REMOTE_CONCURRENCY
from assistant_conformance.suite.config.settings import OptionError, is_on, option_value

# The longest single tests: a whole state machine each (seconds of serial requests). Spread apart
# in the collection, they start early on different workers instead of queueing on one.
LONGEST = ("tests/property/test_stateful.py::",)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own reads -n
def pytest_cmdline_main(config: pytest.Config) -> None:
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
    """--concurrency, else REMOTE_CONCURRENCY off this machine and 1 on loopback."""
    given = option_value(config, "concurrency")
    if given is None:
        base_url = option_value(config, "base_url")
        return REMOTE_CONCURRENCY if base_url and not is_loopback(base_url) else 1
    try:
        return max(1, int(given))
    except ValueError:
        raise OptionError(f"--concurrency expects int, got {given!r}") from None


def is_loopback(base_url: str) -> bool:
    host = (urlsplit(base_url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
