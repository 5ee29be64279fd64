"""python -m assistant_conformance.matrix FILE: the same as `assistant-conformance matrix FILE`."""

import sys

from assistant_conformance.matrix.cli import main

sys.exit(main(sys.argv[1:], prog="python -m assistant_conformance.matrix"))
