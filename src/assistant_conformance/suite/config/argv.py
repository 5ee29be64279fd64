"""A suite option whose value is a path, written with a space (`--report-dir /tmp/x`).

pytest finds its root folder and configuration before it loads any plugin, so it reads such a
value as a test path when the path exists: the run would be rooted there, without the
project's settings or test paths. The plugin notices it as soon as it is loaded, and runs the
same command again with the values attached (`--report-dir=/tmp/x`), which pytest reads right;
where it cannot (pytest called from another program), it stops with one line saying how to
write the option. A path that does not exist yet is read right, but pytest-xdist's workers are
given the command as it was written, after the run made its report folder: the command runs
again attached then too. `assistant-conformance run` always writes them attached.
"""

from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path

import pytest

PATH_OPTIONS = ("--report-dir", "--baseline", "--ca-bundle")


def attached(argv: list[str]) -> list[str]:
    """`argv` with every path option's separate value attached to it (`--flag=value`)."""
    out: list[str] = []
    words = iter(argv)
    for word in words:
        if word == "--":
            out += [word, *words]
            break
        if word in PATH_OPTIONS:
            value = next(words, None)
            out.append(word if value is None else f"{word}={value}")
        else:
            out.append(word)
    return out


def separate(argv: list[str]) -> list[str]:
    """The path options of `argv` written with a separate value."""
    return [f"{flag} {value}" for flag, value in itertools.pairwise(argv) if flag in PATH_OPTIONS]


def mistaken(argv: list[str]) -> list[str]:
    """The path options of `argv` whose separate value pytest takes for a test path."""
    return [said for said in separate(argv) if Path(said.split(" ", 1)[1]).exists()]


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, args: list[str]) -> None:
    worker = "PYTEST_XDIST_WORKER" in os.environ and not sys.argv[1:]  # (its argv is ["-c"])
    if worker or not separate(args):  # a worker's command was judged by its controller
        return
    command = sys.argv[1:]
    if command and args[-len(command) :] == command:  # the pytest command: again, as pytest reads
        if capture := early_config.pluginmanager.getplugin("capturemanager"):
            capture.suspend_global_capture(in_=True)  # the terminal's own output, not pytest's
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(sys.executable, [sys.executable, "-m", "pytest", *attached(command)])
    if not (found := mistaken(args)):
        return
    raise pytest.UsageError(
        f"{found[0]}: pytest takes an existing path given this way for a test path; write "
        f"{found[0].replace(' ', '=', 1)}"
    )
