"""An option's value written with a space (`--alluredir /tmp/x`, `--report-dir /tmp/x`), for
every option of every plugin the run loads.

pytest finds its root folder and configuration before it loads any plugin's options, so it reads
the separate value of a plugin's option as a test path when that path exists: the run would be
rooted there, without the project's settings or test paths, and collect every test under the
current folder. Two moments meet it:
- the command as given: an existing path written so is noticed as soon as this plugin is loaded
  (every plugin's options known by then), and the same command runs again with the values
  attached (`--alluredir=/tmp/x`), which pytest reads right; where it cannot (pytest called from
  another program), it stops with one line saying how to write the option;
- pytest-xdist's workers: each is given the command as it was written, after the run made its
  folders (allure's results, the report folder), which now exist: the workers are given the
  command with every separate value attached instead (`attach_values`, called at configure).
Which words are an option's separate value is asked of pytest's own parser, with every plugin's
options, not of a list of names. `assistant-conformance run` always writes them attached.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import pytest

FILE_OR_DIR = "file_or_dir"  # pytest's positional arguments, as its parser names them


def separate(argv: list[str], parser: pytest.Parser) -> list[int]:
    """The indexes in `argv` of long options whose value is the next word (`--flag value`), as
    `parser` reads them (every option it knows)."""
    found: list[int] = []
    index = 0
    while index < len(argv) - 1:
        word = argv[index]
        if word == "--":
            break
        if word.startswith("--") and "=" not in word and _takes(parser, word, argv[index + 1]):
            found.append(index)
            index += 2
            continue
        index += 1
    return found


def _takes(parser: pytest.Parser, flag: str, value: str) -> bool:
    """Whether `parser` reads `value` as `flag`'s value (not as a test path)."""
    try:
        read = parser.parse_known_args([flag, value])
    except (pytest.UsageError, SystemExit):
        return False
    return value not in (getattr(read, FILE_OR_DIR, None) or [])


def attached(argv: list[str], indexes: list[int]) -> list[str]:
    """`argv` with the separate value after each of `indexes` attached (`--flag=value`)."""
    out: list[str] = []
    skip = False
    for index, word in enumerate(argv):
        if skip:
            skip = False
        elif index in indexes:
            out.append(f"{word}={argv[index + 1]}")
            skip = True
        else:
            out.append(word)
    return out


def mistaken(argv: list[str], indexes: list[int]) -> list[str]:
    """The options among `indexes` whose separate value pytest takes for a test path (it exists)."""
    return [f"{argv[i]} {argv[i + 1]}" for i in indexes if Path(argv[i + 1]).exists()]


def root_the_run(early_config: pytest.Config, args: list[str]) -> None:
    """Before pytest loads the initial conftests (the plugin's hook): a command whose separate
    value pytest took for a test path runs again with it attached, or stops in one line."""
    worker = "PYTEST_XDIST_WORKER" in os.environ and not sys.argv[1:]  # (its argv is ["-c"])
    if worker:  # a worker's command was attached by its controller
        return
    found = mistaken(args, separate(args, early_config._parser))
    if not found:  # pytest rooted the run right (the workers: attach_values)
        return
    command = sys.argv[1:]
    if command and args[-len(command) :] == command:  # the pytest command: again, as pytest reads
        if capture := early_config.pluginmanager.getplugin("capturemanager"):
            capture.suspend_global_capture(in_=True)  # the terminal's own output, not pytest's
        sys.stdout.flush()
        sys.stderr.flush()
        again = attached(command, separate(command, early_config._parser))
        os.execv(sys.executable, [sys.executable, "-m", "pytest", *again])
    raise pytest.UsageError(
        f"{found[0]}: pytest takes an existing path given this way for a test path; write "
        f"{found[0].replace(' ', '=', 1)}"
    )


def attach_values(config: pytest.Config) -> None:
    """pytest-xdist gives each worker the command as invoked: every separate value attached, so
    that a folder the run has made since is not read as a test path there (called at the
    plugin's configure, before pytest-xdist's)."""
    given = list(config.invocation_params.args)
    if indexes := separate(given, config._parser):
        config.invocation_params = dataclasses.replace(
            config.invocation_params, args=tuple(attached(given, indexes))
        )
