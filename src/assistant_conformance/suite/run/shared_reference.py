"""The embedded reference of a run spread over pytest-xdist's workers: one for the run, launched by
the controller as its session starts, before the workers. Its address is known at once (a socket
bound by the controller) and goes to the workers in their input, each with two tokens of its own
(two principals: a worker's searches and lists meet only its own data, as with a reference of its
own); a request sent before the reference is up waits in the socket's queue, so its start-up
overlaps the workers'. The controller checks it started once the workers are on their way (one
that could not start ends the run in one line), and stops it when they are done. A run in one
process starts its own in the `target` fixture (suite/http/target.py).

`SharedReference` is the plugin object the plugin registers at configure; `handed_reference` is
what the `target` fixture of a worker reads."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from assistant_conformance.reference.connectors import ConnectError, Endpoint
from assistant_conformance.report import redact
from assistant_conformance.suite.http.target import embedded_reference
from assistant_conformance.suite.run.state import harness_stop, run_setup

SHARED = pytest.StashKey[tuple[Endpoint, list[str]]]()  # and tokens not handed out
WORKER_INPUT = "embedded_reference"  # (base URL, token, second principal's token)


def handed_reference(config: pytest.Config) -> tuple[str, str, str] | None:
    """In a worker: the run's reference, as the controller handed it out (None: none was)."""
    found = getattr(config, "workerinput", {}).get(WORKER_INPUT)
    return (found[0], found[1], found[2]) if found else None


class SharedReference:
    """The spread run's one embedded reference: launched as the session starts, handed to each
    worker, checked once the workers are on their way, ended with them. A plugin object,
    registered at configure before `Dealing` (whose session start wraps its launch)."""

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionstart(self, session: pytest.Session) -> Generator[None, None, None]:
        launch_once(session.config)
        started = yield  # pytest-xdist starts the workers
        check_started(session.config)
        return started

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """A worker's share of the reference: its address and the next two tokens (a worker that
        replaces a crashed one, past them, starts a reference of its own)."""
        if (shared := node.config.stash.get(SHARED, None)) is None:
            return
        server, tokens = shared
        if len(tokens) >= 2:
            node.workerinput[WORKER_INPUT] = (server.base_url, tokens.pop(0), tokens.pop(0))

    # Once every worker said it finished (their session's ends, clean-up included, are behind
    # them): the reference ends while pytest-xdist waits for the workers' exit and the reports
    # are written.
    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        try:
            return (yield)
        finally:
            if (shared := session.config.stash.get(SHARED, None)) is not None:
                shared[0].end_soon()

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if (shared := config.stash.get(SHARED, None)) is not None:
            shared[0].stop()  # also where the session ended as it started (no sessionfinish)


def launch_once(config: pytest.Config) -> None:
    """The controller of a spread run against no given target launches the run's reference."""
    setup = run_setup(config)
    settings = setup.settings
    if not setup.controller or not setup.active or settings.base_url or settings.sweep:
        return
    if sys.platform == "win32":  # no socket handed to a child there: each worker starts its own
        return
    connector = embedded_reference(2 * config.option.numprocesses, wait=False)
    server = connector.start(_folder(config))
    for index, token in enumerate(server.tokens):
        redact.register(token, "ASSISTANT_API_ALT_TOKEN" if index % 2 else "ASSISTANT_API_TOKEN")
    config.stash[SHARED] = (server, list(server.tokens))


def _folder(config: pytest.Config) -> Path:
    """The run's temporary folder (pytest's, kept for a few runs as the workers' are)."""
    factory = getattr(config, "_tmp_path_factory", None)
    if factory is not None:
        return Path(factory.mktemp("target"))
    return Path(tempfile.mkdtemp(prefix="assistant-reference-"))


def check_started(config: pytest.Config) -> None:
    if (shared := config.stash.get(SHARED, None)) is None:
        return
    try:
        shared[0].ready()
    except ConnectError as exc:
        harness_stop(config).end(str(exc))
