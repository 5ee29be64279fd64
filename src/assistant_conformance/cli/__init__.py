"""The `assistant-conformance` command (also `python -m assistant_conformance`):

    assistant-conformance run [suite options] [-- pytest args]   the suite, from any directory
    assistant-conformance matrix FILE [...]                       the suite against several targets
    assistant-conformance replay REPORT_DIR [FINDING-ID ...]      reproduce findings of a report
    assistant-conformance merge DIR... [--report-dir OUT]         one run's reports from its shards
    assistant-conformance --version                               the suite's version and hashes

An unknown verb or option prints the usage and exits 4 (report/exits.py). Each verb imports what
it needs when it runs: `run` hands pytest a process that has not loaded its plugins yet.
"""

from __future__ import annotations

import sys

from assistant_conformance import __version__
from assistant_conformance.report.exits import Exit

USAGE = "usage: assistant-conformance {run,matrix,replay,merge} ... | --version | --help"


def version() -> str:
    from assistant_conformance.report.catalogue import spec_hashes
    from assistant_conformance.suite.identity import suite_sha256

    spec = spec_hashes()
    return (
        f"assistant-conformance {__version__} (suite sha256 {suite_sha256()[:16]}, spec: "
        f"openapi.yaml sha256 {spec['openapi_sha256'][:16]}, requirements.yaml sha256 "
        f"{spec['requirements_sha256'][:16]})"
    )


def main(argv: list[str] | None = None, prog: str = "assistant-conformance") -> None:
    args = sys.argv[1:] if argv is None else argv
    verb, rest = (args[0], args[1:]) if args else ("", [])
    if verb in ("--version", "-V"):
        print(version())
        sys.exit(Exit.CONFORMANT)
    if verb in ("--help", "-h"):
        print(f"{USAGE}\n\n{__doc__}")
        sys.exit(Exit.CONFORMANT)
    if verb == "run":
        from assistant_conformance.cli import run

        run.main(rest, prog=f"{prog} run")
    if verb == "replay":
        from assistant_conformance.cli import replay

        sys.exit(replay.main(rest, prog=f"{prog} replay"))
    if verb == "merge":
        from assistant_conformance.cli import merge

        sys.exit(merge.main(rest, prog=f"{prog} merge"))
    if verb == "matrix":
        from assistant_conformance.matrix import cli as matrix

        sys.exit(matrix.run(rest, prog=f"{prog} matrix"))
    print(USAGE, file=sys.stderr)
    print(f"{prog}: error: {'unknown verb ' + repr(verb) if verb else 'a verb is needed'}",
          file=sys.stderr)  # fmt: skip
    sys.exit(Exit.USAGE)
