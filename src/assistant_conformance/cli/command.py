"""The `assistant-conformance` command (also `python -m assistant_conformance`):

    assistant-conformance run [suite options] [-- pytest args]   the suite, from any directory
    assistant-conformance run --repeat N [...]                    N runs, the verdicts compared
    assistant-conformance matrix FILE [...]                       the suite against several targets
    assistant-conformance replay REPORT_DIR [FINDING-ID ...]      reproduce findings of a report
    assistant-conformance merge DIR... [--report-dir OUT]         one run's reports from its shards
    assistant-conformance audit FILE.har... [--report-dir DIR]    judge recorded exchanges
    assistant-conformance proxy --upstream URL [--port N]         judge live traffic as it passes
    assistant-conformance --version                               the suite's version and hashes

An unknown verb or option prints the usage and exits 4 (report/exit_codes.py). Each verb imports
what it needs when it runs: `run` hands pytest a process that has not loaded its plugins yet. Output
into a pipe its reader closed (`| head -1`) ends a command quietly, exit 141; `run` goes on to its
end unheard, with the run's own exit status (report/closed_pipe.py).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NoReturn

from assistant_conformance import __version__
from assistant_conformance.report.exit_codes import Exit

USAGE = "assistant-conformance {run,matrix,replay,merge,audit,proxy} ... | --version | --help"
# Each verb and the module that adds its subparser (`add_verb`) with its handler (`func`, the
# module's `main`). A command builds the subparser of its own verb only: every verb's would import
# every verb's dependencies (the matrix's and the proxy's take seconds) before any work.
VERBS = {
    "run": "assistant_conformance.cli.run",
    "matrix": "assistant_conformance.cli.matrix",
    "matrix merge": "assistant_conformance.cli.matrix_merge",  # one verb of two words
    "replay": "assistant_conformance.cli.replay",
    "merge": "assistant_conformance.cli.merge",
    "audit": "assistant_conformance.cli.audit",
    "proxy": "assistant_conformance.cli.proxy",
}
FLAGS = ("-h", "--help", "-V", "--version")  # the command's own options, before any verb
PASSED_ON = "passed_on"  # a verb whose subparser has this default takes the words after `--`


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors exit USAGE (argparse's own exit status is 2)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(Exit.USAGE, f"{self.prog}: error: {message}\n")


class Say(argparse.Action):
    """An option that prints a text (made when it is asked for) and ends the command, exit 0."""

    def __init__(self, option_strings: Sequence[str], dest: str, text: Callable[[], str]) -> None:
        super().__init__(option_strings, dest, nargs=0)
        self.text = text

    def __call__(self, parser: argparse.ArgumentParser, *given: Any) -> None:
        print(self.text())
        parser.exit(Exit.CONFORMANT)


def _help() -> str:
    return f"usage: {USAGE}\n\n{__doc__}"


def version() -> str:
    from assistant_conformance.contract.files import spec_hashes
    from assistant_conformance.suite.run.identity import suite_sha256

    spec = spec_hashes()
    return (
        f"assistant-conformance {__version__} (suite sha256 {suite_sha256()[:16]}, spec: "
        f"openapi.yaml sha256 {spec['openapi_sha256'][:16]}, requirements.yaml sha256 "
        f"{spec['requirements_sha256'][:16]})"
    )


def verb_of(argv: list[str]) -> tuple[str, list[str]]:
    """The verb of a command line, and the words after it (`matrix merge` is one verb)."""
    if argv[:2] == ["matrix", "merge"]:
        return "matrix merge", argv[2:]
    return (argv[0], argv[1:]) if argv else ("", [])


class Command:
    """The command's one parser, with a subparser for each of `verbs` (each verb's module adds
    its own); `status` parses a command line and hands it to its verb's handler, which reads its
    options, `prog` (its verb's, which its messages begin with) and `words` (its words as given:
    a command line it writes down or runs again)."""

    def __init__(self, prog: str, verbs: Iterable[str] = VERBS) -> None:
        self.parser = Parser(prog=prog, usage=USAGE, add_help=False)
        self.parser.add_argument("-h", "--help", action=Say, text=_help)
        self.parser.add_argument("-V", "--version", action=Say, text=version)
        self.verbs = self.parser.add_subparsers(dest="verb", prog=prog)
        for verb in verbs:
            importlib.import_module(VERBS[verb]).add_verb(self.verbs)
        for subparser in self.verbs.choices.values():
            subparser.set_defaults(prog=subparser.prog)  # what a handler's own errors begin with

    def status(self, argv: list[str]) -> int:
        """Parse `argv`, run its verb's handler: the command's exit status. Words after `--` are
        not parsed: they go to a verb that passes them on (`run`: to pytest)."""
        verb, words = verb_of(argv)
        if verb in FLAGS:
            self.parser.parse_args(argv)  # each prints and ends the command
        if verb not in self.verbs.choices:
            self.parser.error(f"unknown verb {verb!r}" if verb else "a verb is needed")
        passes_on = self.verbs.choices[verb].get_default(PASSED_ON) is not None
        split = words.index("--") if passes_on and "--" in words else len(words)
        args, unknown = self.parser.parse_known_args([verb, *words[:split]])
        if unknown:  # said by the verb's parser, with its usage (argparse's own: the command's)
            self.verbs.choices[verb].error(f"unrecognized arguments: {' '.join(unknown)}")
        args.words = words
        if passes_on:
            setattr(args, PASSED_ON, words[split + 1 :])
        return int(args.func(args))


def exit_status(argv: list[str], prog: str = "assistant-conformance") -> int:
    """The exit status of the command line `argv`; only its verb's subparser is built."""
    verb, _ = verb_of(argv)
    return Command(prog, [verb] if verb in VERBS else []).status(argv)
