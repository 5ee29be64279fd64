"""Output into a pipe whose reader went away (`assistant-conformance replay DIR | head -1`): no
traceback, ever.

`closed` points stdout at the null device: what is still buffered, and what the interpreter
flushes at exit, goes nowhere. The commands end there (cli/__init__.py: exit 141, as a shell sees
a writer that SIGPIPE ended). A suite run does not: its terminal is made `Quiet` (the plugin), and
the run goes on to its end unheard, so that its reports, its clean-up and its exit status are the
whole run's, not those of a run cut where its reader stopped reading.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TextIO

from assistant_conformance.report.exit_codes import Exit


def closed() -> None:
    """stdout's reader is gone: from now on stdout writes to the null device."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)


class Quiet:
    """A text stream that, once its reader is gone, writes nowhere instead of raising."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            written = self.stream.write(text)
            self.stream.flush()  # nothing left buffered for a later flush to fail on
            return written
        except BrokenPipeError:
            closed()
            return len(text)

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            closed()
            self.stream.flush()  # what was buffered: to the null device now

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, ...: the stream's
        return getattr(self.stream, name)


def quiet_stdout() -> None:
    """Make the process's own stdout Quiet (before pytest's terminal takes it: the plugin's
    pytest_configure runs first); a stream some other code put there is left as it is."""
    if sys.stdout is sys.__stdout__ and sys.stdout is not None:
        sys.stdout = Quiet(sys.stdout)


def exit_quietly(main: Callable[[], int | None]) -> NoReturn:
    """Run a command's `main` and exit with its status. Output into a closed pipe ends it
    quietly, exit 141 (SIGPIPE's, as a shell sees it; 1 would read as a finding); stdout is
    flushed here, also after argparse's exits, so that a closed pipe is caught."""
    try:
        try:
            code = main()
        finally:
            sys.stdout.flush()
    except BrokenPipeError:
        closed()
        code = Exit.CLOSED_PIPE
    sys.exit(code)
