"""Fixtures for the project's own tests: reference servers on loopback. The self-tests are laid
out like the package's rooms (tree/ for rules over the whole tree); their helpers are in support/,
importable from any folder (this file puts it on the path)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))
# Each suite run a self-test starts takes one process: the self-tests already run side by side
# (-n), and a worker's start costs more than it gives there. A test of the spread asks for its own.
os.environ["ASSISTANT_API_CONCURRENCY"] = "1"

import httpcore  # noqa: F401  (see pytest_plugins below)
import httpx
import pytest

from assistant_conformance.proof import serve
from assistant_conformance.reference import embedded
from assistant_conformance.report import redact

# pytest's own fixture for running pytest in this process (`pytester.runpytest_inprocess`): a
# self-test of a plugin hook's effect needs no process of its own. Such a run drops the modules it
# imported when it ends: httpx imports httpcore at its first transport and keeps its exception
# classes, so httpcore is imported here, once for every run (else a second run's connection
# error is not httpx's).
pytest_plugins = ("pytester",)

TOKEN_A = "selftest-token-a"
TOKEN_B = "selftest-token-b"


@pytest.fixture(autouse=True)
def secrets_of_a_run() -> Iterator[redact.Secrets]:
    """Each test registers secrets as a run of its own does (redaction scoped to one run)."""
    with redact.scope() as secrets:
        yield secrets


@pytest.fixture(scope="session")
def reference_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[embedded.RunningServer]:
    """One reference server for the session, two principals, short token delay."""
    db = tmp_path_factory.mktemp("reference") / "reference.db"
    server = embedded.start([TOKEN_A, TOKEN_B], db, token_delay_ms=10)
    yield server
    server.stop()


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Callable[..., embedded.RunningServer]]:
    """Start (and restart) servers of one's own, e.g. on the same database file."""
    started: list[embedded.RunningServer] = []

    def start(db: Path | None = None, **kwargs: object) -> embedded.RunningServer:
        server = serve.start_server([TOKEN_A, TOKEN_B], db or tmp_path / "own.db", **kwargs)  # type: ignore[arg-type]
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def _client(server: embedded.RunningServer, token: str) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {token}"}
    # verify=False: plain-http loopback; skips loading the CA bundle (0.2 s per client)
    with httpx.Client(
        base_url=server.base_url, headers=headers, timeout=10, verify=False
    ) as client:
        yield client


@pytest.fixture
def client(reference_server: embedded.RunningServer) -> Iterator[httpx.Client]:
    """An httpx client of principal A on the shared reference server."""
    yield from _client(reference_server, TOKEN_A)


@pytest.fixture
def client_b(reference_server: embedded.RunningServer) -> Iterator[httpx.Client]:
    """An httpx client of principal B on the shared reference server."""
    yield from _client(reference_server, TOKEN_B)


# Longest first: under xdist the kill table's runs (minutes, several at once) start while the
# other worker takes everything else.
FIRST = ("test_variants", "test_mutants")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under `--dist loadgroup` a module's tests share a worker, so a module fixture is made once
    (a module may name a group it shares with others: the safety batch)."""
    for item in items:
        if not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
    items.sort(key=lambda item: item.module.__name__ not in FIRST)
