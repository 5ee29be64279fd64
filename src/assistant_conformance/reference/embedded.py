"""Start the reference server in a subprocess on a free loopback port and stop it again."""

from __future__ import annotations

import os
import selectors
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

# The reference's tokens, one per line: how a started reference is handed them (a command line is
# readable by every user of the machine; an environment is not).
TOKENS_VARIABLE = "ASSISTANT_REFERENCE_TOKENS"


def given_tokens(on_command_line: list[str]) -> list[str]:
    """The tokens of TOKENS_VARIABLE (one a line), then those given on a command line."""
    return [t for t in (*os.environ.get(TOKENS_VARIABLE, "").splitlines(), *on_command_line) if t]


class ServerStartError(RuntimeError):
    """The reference server did not start; the message says why in one line."""


@dataclass
class RunningServer:
    base_url: str
    process: subprocess.Popen[str]
    db_path: Path

    @property
    def log_path(self) -> Path:
        return self.db_path.with_suffix(".log")

    def stop(self) -> None:
        self.process.terminate()  # a no-op once it has ended
        self.reap()

    def reap(self) -> None:
        """Wait for the server to end after `process.terminate()` (at most 5 s, then kill it)."""
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def ready(self, startup_timeout: float = 20.0) -> None:
        """Wait until the server says it listens (it prints its URL, which `start` reads)."""
        assert self.process.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(self.process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + startup_timeout
        while time.monotonic() < deadline:
            if selector.select(timeout=0.1):
                line = self.process.stdout.readline().strip()
                if line.startswith("http://"):
                    self.base_url = self.base_url or line
                    return
            if self.process.poll() is not None:
                error = self.log_path.read_text().strip().splitlines()
                raise ServerStartError(
                    "reference server exited during start-up: "
                    + (error[-1] if error else "no output")
                )
        self.process.kill()
        raise ServerStartError(f"reference server did not answer within {startup_timeout:.0f} s")


def start(
    tokens: list[str],
    db_path: Path,
    token_delay_ms: int = 20,
    extra_args: list[str] | None = None,
    startup_timeout: float = 20.0,
    module: str = "assistant_conformance.reference",
) -> RunningServer:
    """Run `python -m <module>` (the reference's command line) and wait until it prints its URL."""
    args = [sys.executable, "-m", module, "--port", "0"]
    args += [*_arguments(db_path, token_delay_ms), *(extra_args or [])]
    server = _spawn(args, tokens, "", db_path)
    server.ready(startup_timeout)
    return server


def launch(tokens: list[str], db_path: Path, token_delay_ms: int = 20) -> RunningServer:
    """Run the reference on a loopback socket bound here, without waiting for it: its address is
    known at once, and requests sent before it is up wait in the socket's queue (`ready()` waits
    for it; a server that ends closes the socket, and what waited is refused)."""
    listening = socket.create_server(("127.0.0.1", 0))
    with listening:
        host, port = listening.getsockname()[:2]
        fd = listening.fileno()
        args = [sys.executable, "-m", "assistant_conformance.reference", f"--fd={fd}"]
        args += _arguments(db_path, token_delay_ms)
        return _spawn(args, tokens, f"http://{host}:{port}", db_path, keep=(fd,))


def _arguments(db_path: Path, token_delay_ms: int) -> list[str]:
    # The server ends with the pipe on its stdin (`_spawn`): a starting process killed leaves
    # none behind.
    args = ["--db", str(db_path), "--token-delay-ms", str(token_delay_ms)]
    return [*args, "--end-with-stdin"]


def _spawn(
    args: list[str], tokens: list[str], base_url: str, db_path: Path, keep: tuple[int, ...] = ()
) -> RunningServer:
    log_path = db_path.with_suffix(".log")
    with log_path.open("a") as log:  # stderr goes to a file so a chatty server can never block
        process = subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env={**os.environ, TOKENS_VARIABLE: "\n".join(tokens)},
            pass_fds=keep,
        )
    return RunningServer(base_url=base_url, process=process, db_path=db_path)
