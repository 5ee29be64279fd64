"""`assistant-conformance run [--repeat N] [suite options] [-- pytest args]`: the suite from the
installed package, from any working directory, with the same options, environment variables and
exit statuses as `pytest` in a checkout; the reports go to ./reports unless --report-dir.
`--repeat N` runs it N times against one target and compares the verdicts (cli/repeat.py).

The suite's own options are checked here (an unknown one: the usage line, exit 4) and handed to
pytest with the suite's checks (`assistant_conformance.tests`) and settings (suite/pytest.ini),
rooted where the checks are, so a test reads `tests/scenario/test_runs.py::...` as in a checkout; a
pytest argument naming the checks that way (`tests/...`) is taken to be one of them. pytest's
cache (--lf, --ff) is kept beside the reports; Hypothesis' (its unicode tables, 190 MB and seconds
to build) in the user's cache, not in the working folder. The run is `python -m pytest` itself (the
process becomes it), as in a checkout: nothing is imported before pytest loads its plugins.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from assistant_conformance.contract import files
from assistant_conformance.suite.config.options import OPTIONS

SUITE_PATH = "tests"  # how a checkout (and the test ids) name the checks


def add_verb(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`run`: the suite's options; the words after `--` are passed on to pytest."""
    parser = verbs.add_parser(
        "run",
        usage="%(prog)s [suite options] [-- pytest args]",
        description="The conformance suite from the installed package (see docs/options.md).",
    )
    for opt in OPTIONS:
        help_text = f"{opt.help} [env {opt.env}]"
        if opt.is_flag:
            parser.add_argument(opt.flag, action="store_true", default=None, help=help_text)
        elif opt.repeat:
            parser.add_argument(opt.flag, action="append", default=None, help=help_text)
        else:
            parser.add_argument(opt.flag, default=None, help=help_text, metavar=opt.dest.upper())
    parser.add_argument(
        "--repeat",
        type=_times,
        metavar="N",
        help="run the suite N times against one target and list every requirement whose "
        "verdict differed (exit 6 when one did; see docs/reports.md)",
    )
    parser.set_defaults(func=main, passed_on=[])


def _times(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of runs (1 or more)")
    return int(value)


def without_repeat(argv: list[str]) -> list[str]:
    """The command's words without `--repeat N` (before any `--`)."""
    split = argv.index("--") if "--" in argv else len(argv)
    out: list[str] = []
    words = iter(argv[:split])
    for word in words:
        if word == "--repeat":
            next(words, None)
        elif not word.startswith("--repeat="):
            out.append(word)
    return [*out, *argv[split:]]


def suite_flags(options: dict[str, object]) -> list[str]:
    """The suite options given, as pytest reads them (`--name=value`: a value that is a path
    is never taken for a test path)."""
    flags: list[str] = []
    for opt in OPTIONS:
        value = options.get(opt.dest)
        if value is None:
            continue
        if opt.is_flag:
            flags.append(opt.flag)
        else:
            values = value if isinstance(value, list) else [value]
            flags += [f"{opt.flag}={v}" for v in values]
    return flags


def _suite_path(word: str) -> bool:
    return (word == SUITE_PATH or word.startswith(f"{SUITE_PATH}/")) and not Path(word).exists()


def rebased_args(args: list[str]) -> tuple[list[str], bool]:
    """pytest arguments with `tests/...` read as the installed checks (also as the value of an
    option: `--ignore=tests/scenario/test_x.py`); and whether any names checks to run (then they,
    not all of them, run)."""
    out: list[str] = []
    named = False
    for arg in args:
        flag, equals, value = arg.partition("=")
        if arg.startswith("-") and equals and _suite_path(value):
            arg = f"{flag}={files.suite_root() / value}"
        elif _suite_path(arg) and not (out and out[-1].startswith("--")):
            arg, named = str(files.suite_root() / arg), True
        elif _suite_path(arg):  # the value of an option written apart (`--ignore tests/x`)
            arg = str(files.suite_root() / arg)
        elif not (out and out[-1].startswith("--")) and _exists(arg.partition("::")[0]):
            named = True  # checks named by a path of this folder (a checkout's `tests/...`)
        out.append(arg)
    return out, named


def pytest_args(args: argparse.Namespace) -> list[str]:
    """The arguments of the pytest run the parsed command line `args` asks for."""
    given = vars(args)
    extra, named = rebased_args(args.passed_on)
    report_dir = report_dir_of(given)
    return [
        *([] if named else [str(files.tests_dir())]),
        "-c", str(files.pytest_ini()),
        f"--rootdir={files.suite_root()}",
        "-o", f"cache_dir={report_dir / '.pytest_cache'}",
        *suite_flags({**given, "report_dir": str(report_dir)}),
        *extra,
    ]  # fmt: skip


def report_dir_of(options: dict[str, object]) -> Path:
    """Where the run's reports go: --report-dir, else ASSISTANT_API_REPORT_DIR, else ./reports."""
    named = options.get("report_dir") or os.environ.get("ASSISTANT_API_REPORT_DIR") or "reports"
    return Path(str(named)).resolve()


def main(args: argparse.Namespace) -> int:
    """The run (this process becomes pytest, or runs it in place where it is imported already:
    a child of the suite's forks); with --repeat, N runs compared (their status)."""
    given = vars(args)
    if args.repeat:
        from assistant_conformance.cli import repeat

        return repeat.main(without_repeat(args.words), args.repeat, report_dir_of(given), args.prog)
    pytest_words = pytest_args(args)
    hypothesis_home = str(files.user_cache() / "hypothesis")
    os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", hypothesis_home)
    sys.stdout.flush()
    if "pytest" in sys.modules:  # a child of the suite's forks (proof/forks.py): imported already
        import pytest

        return int(pytest.main(pytest_words))
    os.execv(sys.executable, [sys.executable, "-m", "pytest", *pytest_words])


def _exists(path: str) -> bool:
    """Whether `path` names a file or folder here (a `-k` expression is no path, however long)."""
    try:
        return Path(path).exists()
    except (OSError, ValueError):
        return False
