"""python -m assistant_conformance: the `assistant-conformance` command."""

from assistant_conformance.cli import main

main(prog="python -m assistant_conformance")
