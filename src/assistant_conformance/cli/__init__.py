"""The `assistant-conformance` command: `main`, its entry point. Its parser is one argparse parser
with a subparser per verb (cli/command.py); each verb's module adds its subparser and handler."""

from __future__ import annotations

import sys

from assistant_conformance.cli import command
from assistant_conformance.report import closed_pipe


def main(argv: list[str] | None = None, prog: str = "assistant-conformance") -> None:
    args = sys.argv[1:] if argv is None else argv
    closed_pipe.exit_quietly(lambda: command.exit_status(args, prog))
