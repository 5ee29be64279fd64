"""`assistant-conformance audit FILE.har [FILE.har ...] [--report-dir DIR] [--base-path P]`: judge
every exchange of HAR files (saved from a browser's developer tools, written by a proxy or
gateway, or the suite's own reports/exchanges/*.har) against the document, without sending a
request. Same catalogue, verdicts, reports and exit statuses as a run (docs/audit.md): 0 every
requirement the exchanges exercised held (the others are untested), 1 a MUST failed, 3 nothing
could be judged (no exchange to a documented operation with an answer), 4 a bad option, a report
folder that cannot be written or a file that is not a HAR (said in one line, before any work).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from assistant_conformance.report import redact
from assistant_conformance.report.exit_codes import Exit

if TYPE_CHECKING:
    from assistant_conformance.report.model import Run

FINDINGS_SHOWN = 5  # findings printed per requirement; the reports hold them all


def add_verb(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = verbs.add_parser("audit", description=__doc__.split("\n\n")[0].split(": ", 1)[1])
    parser.add_argument("files", type=Path, nargs="+", metavar="FILE.har")
    report_dir_option(parser)
    base_path_option(parser)
    parser.set_defaults(func=main)


def report_dir_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--report-dir",
        type=Path,
        default=Path("reports"),
        help="where the reports are written (default: reports)",
    )


def base_path_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--base-path",
        help="where the API is mounted, if not under /api/ai (e.g. / for a server at the root): "
        "the path after it is read as under /api/ai (default: none: the document's /api/ai "
        "paths, wherever they appear in a URL)",
    )


def report_dir_problem(path: Path) -> str | None:
    """Why the reports cannot be written to `path` (None: they can), found without writing
    anything there: the folder, or the nearest that exists above it, takes a file."""
    where = path
    while not where.exists() and where != where.parent:
        where = where.parent
    if not where.is_dir():
        return f"--report-dir {str(path)!r}: {str(where)!r} is not a folder"
    try:
        tempfile.TemporaryFile(dir=where).close()
    except OSError as exc:
        return f"--report-dir {str(path)!r}: cannot write in {str(where)!r} ({exc.strerror or exc})"
    if where != path and not os.access(where, os.W_OK | os.X_OK):
        return f"--report-dir {str(path)!r}: cannot make a folder in {str(where)!r}"
    return None


def main(args: argparse.Namespace) -> int:
    prog = args.prog
    started = time.monotonic()
    if (problem := report_dir_problem(args.report_dir)) is not None:
        return _usage(prog, problem)
    from assistant_conformance.audit import harfile, outcome
    from assistant_conformance.audit.judge import finding_line
    from assistant_conformance.audit.proxy import DEFAULT_DEADLINE
    from assistant_conformance.audit.rules import Judging
    from assistant_conformance.report.model import PASS

    with redact.scope():
        try:
            captures = [harfile.load_har(path) for path in args.files]
        except harfile.NotAHar as exc:
            return _usage(prog, str(exc))
        gc.freeze()  # the exchanges are kept to the end: no collection need walk them again
        judgings = [Judging(c, args.base_path) for c in captures]
        shown: Counter[str] = Counter()
        for judging in judgings:
            for found in judging.all():
                if found.verdict != PASS:
                    shown[found.requirement] += 1
                    if shown[found.requirement] <= FINDINGS_SHOWN:
                        print(redact.text(finding_line(found)))
        for requirement, count in shown.items():
            if count > FINDINGS_SHOWN:
                print(
                    f"... and {count - FINDINGS_SHOWN} more {requirement} findings (in the reports)"
                )
        run = outcome.run_of_findings(
            judgings,
            invocation="assistant-conformance audit",
            report_dir=args.report_dir,
            started=started,
            deadline=DEFAULT_DEADLINE,
        )
        outcome.write_reports(run, args.report_dir)
        summary_lines(run, args.report_dir)
    return int(run.gate.exit_status)


def _usage(prog: str, message: str) -> int:
    print(f"{prog}: error: {message}", file=sys.stderr)
    return Exit.USAGE


def summary_lines(run: Run, report_dir: Path) -> None:
    """The counts of exchanges and verdicts, and the outcome, in three lines."""
    from assistant_conformance.report.conformance_json import Document

    doc = Document.of_run(run)
    seen = doc.audit
    assert seen is not None  # an audit's run
    beyond = (
        (seen.unread, "not read (a body nested too deep)"),
        (seen.unrecorded, "passed on past the recording's cap, not recorded"),
    )
    more = "".join(f", {count} {what}" for count, what in beyond if count)
    print(
        f"{seen.exchanges} exchanges in {len(seen.files)} file(s): {seen.judged} "
        f"judged, {seen.off_document} to no documented operation (counted, not judged), "
        f"{seen.unanswered} without an answer{more}"
    )
    totals = ", ".join(f"{n} {v}" for v, n in doc.totals.items())
    untested = (
        f" (untested: {seen.not_judgeable} not judgeable from traffic, "
        f"{seen.not_exercised} not exercised by these exchanges)"
    )
    print(
        f"{sum(doc.totals.values())} requirements: {totals}"
        f"{untested if 'untested' in doc.totals else ''}"
    )
    result = doc.result
    problems = f": {'; '.join(result.problems[:3])}" if result.exit_status else ""
    print(
        f"result: {result.outcome} (exit {result.exit_status}){problems}; reports in {report_dir}/"
    )
