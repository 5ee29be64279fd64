"""Start the reference server in a subprocess on a free loopback port and stop it again."""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path


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
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


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
    for token in tokens:
        args.append(f"--token={token}")  # "=": a random token may start with "-"
    args += ["--db", str(db_path), "--token-delay-ms", str(token_delay_ms), *(extra_args or [])]
    # The token travels in argv of a loopback child only; it is never printed.
    log_path = db_path.with_suffix(".log")
    with log_path.open("a") as log:  # stderr goes to a file so a chatty server can never block
        process = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=log, text=True, env=os.environ.copy()
        )
    assert process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + startup_timeout
    while time.monotonic() < deadline:
        if selector.select(timeout=0.1):
            line = process.stdout.readline().strip()
            if line.startswith("http://"):
                return RunningServer(base_url=line, process=process, db_path=db_path)
        if process.poll() is not None:
            error = log_path.read_text().strip().splitlines()
            raise ServerStartError(
                "reference server exited during start-up: " + (error[-1] if error else "no output")
            )
    process.kill()
    raise ServerStartError(f"reference server did not answer within {startup_timeout:.0f} s")
