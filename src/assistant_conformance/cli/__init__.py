"""The `assistant-conformance` command (also `python -m assistant_conformance`):

    assistant-conformance run [suite options] [-- pytest args]   the suite, from any directory
    assistant-conformance run --repeat N [...]                    N runs, the verdicts compared
    assistant-conformance matrix FILE [...]                       the suite against several targets
    assistant-conformance replay REPORT_DIR [FINDING-ID ...]      reproduce findings of a report
    assistant-conformance merge DIR... [--report-dir OUT]         one run's reports from its shards
    assistant-conformance audit FILE.har... [--report-dir DIR]    judge recorded exchanges
    assistant-conformance proxy --upstream URL [--port N]         judge live traffic as it passes
    assistant-conformance --version                               the suite's version and hashes

An unknown verb or option prints the usage and exits 4 (report/exits.py). Each verb imports what
it needs when it runs: `run` hands pytest a process that has not loaded its plugins yet. Output
into a pipe its reader closed (`| head -1`) ends a command quietly, exit 141; `run` goes on to its
end unheard, with the run's own exit status (report/pipe.py).
"""

from __future__ import annotations

import sys

from assistant_conformance import __version__
from assistant_conformance.report import pipe
from assistant_conformance.report.exits import Exit

USAGE = (
    "usage: assistant-conformance {run,matrix,replay,merge,audit,proxy} ... | --version | --help"
)


def version() -> str:
    from assistant_conformance.contract.files import spec_hashes
    from assistant_conformance.suite.run.identity import suite_sha256

    spec = spec_hashes()
    return (
        f"assistant-conformance {__version__} (suite sha256 {suite_sha256()[:16]}, spec: "
        f"openapi.yaml sha256 {spec['openapi_sha256'][:16]}, requirements.yaml sha256 "
        f"{spec['requirements_sha256'][:16]})"
    )


def main(argv: list[str] | None = None, prog: str = "assistant-conformance") -> None:
    args = sys.argv[1:] if argv is None else argv
    pipe.exit_quietly(lambda: _verb(args, prog))


def _verb(args: list[str], prog: str) -> int:
    verb, rest = (args[0], args[1:]) if args else ("", [])
    if verb in ("--version", "-V"):
        print(version())
        return Exit.CONFORMANT
    if verb in ("--help", "-h"):
        print(f"{USAGE}\n\n{__doc__}")
        return Exit.CONFORMANT
    if verb == "run":
        from assistant_conformance.cli import run

        return run.main(rest, prog=f"{prog} run")  # becomes pytest (but --repeat: returns)
    if verb == "replay":
        from assistant_conformance.cli import replay

        return replay.main(rest, prog=f"{prog} replay")
    if verb == "merge":
        from assistant_conformance.cli import merge

        return merge.main(rest, prog=f"{prog} merge")
    if verb == "audit":
        from assistant_conformance.cli import audit

        return audit.main(rest, prog=f"{prog} audit")
    if verb == "proxy":
        from assistant_conformance.cli import proxy

        return proxy.main(rest, prog=f"{prog} proxy")
    if verb == "matrix":
        from assistant_conformance.matrix import cli

        return cli.main(rest, prog=f"{prog} matrix")
    print(USAGE, file=sys.stderr)
    print(f"{prog}: error: {'unknown verb ' + repr(verb) if verb else 'a verb is needed'}",
          file=sys.stderr)  # fmt: skip
    return Exit.USAGE
