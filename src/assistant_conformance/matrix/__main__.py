"""python -m assistant_conformance.matrix FILE: the same as `assistant-conformance matrix FILE`
(the command's `matrix` verb, cli/matrix.py; `matrix merge` too)."""

import sys

from assistant_conformance.cli import main

main(["matrix", *sys.argv[1:]], prog="python -m assistant_conformance")
