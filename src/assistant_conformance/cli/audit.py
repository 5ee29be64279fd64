"""`assistant-conformance audit FILE.har [FILE.har ...] [--report-dir DIR] [--base-path P]`: judge
every exchange of HAR 1.2 files (saved from a browser's developer tools, written by a proxy or
gateway, or the suite's own reports/exchanges/*.har) against the document, without sending a
request. Same catalogue, verdicts, reports and exit statuses as a run (docs/audit.md): 0 every
requirement the exchanges exercised held (the others are untested), 1 a MUST failed, 3 nothing
could be judged (no exchange to a documented operation with an answer), 4 a bad option or a file
that is not a HAR (said in one line).
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

from assistant_conformance.report import redact
from assistant_conformance.report.exits import Exit, Parser

FINDINGS_SHOWN = 5  # findings printed per requirement; the reports hold them all


def parser(prog: str) -> Parser:
    parser = Parser(prog=prog, description=__doc__.split("\n\n")[0].split(": ", 1)[1])
    parser.add_argument("files", type=Path, nargs="+", metavar="FILE.har")
    parser.add_argument("--report-dir", type=Path, default=Path("reports"))
    parser.add_argument(
        "--base-path",
        help="where the API is mounted, if not under /api/ai (e.g. / for a server at the root): "
        "the path after it is read as under /api/ai",
    )
    return parser


def main(argv: list[str], prog: str = "assistant-conformance audit") -> int:
    args = parser(prog).parse_args(argv)
    started = time.monotonic()
    from assistant_conformance.audit import capture, outcome
    from assistant_conformance.audit.judge import finding_line
    from assistant_conformance.audit.proxy import DEFAULT_DEADLINE
    from assistant_conformance.audit.rules import Judging
    from assistant_conformance.report.model import PASS

    with redact.scope():
        try:
            captures = [capture.load_har(path) for path in args.files]
        except capture.NotAHar as exc:
            print(f"{prog}: error: {exc}", file=sys.stderr)
            return Exit.USAGE
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
        run = outcome.run_of_findings(judgings, invocation="assistant-conformance audit",
                             report_dir=args.report_dir, started=started,
                             deadline=DEFAULT_DEADLINE)  # fmt: skip
        outcome.write_reports(run, args.report_dir)
        summary_lines(run, args.report_dir)
    return int(run.gate.exit_status)


def summary_lines(run: object, report_dir: Path) -> None:
    """The counts of exchanges and verdicts, and the outcome, in three lines."""
    from assistant_conformance.report.document import to_dict

    doc = to_dict(run)  # type: ignore[arg-type]
    seen = doc["audit"]
    print(f"{seen['exchanges']} exchanges in {len(seen['files'])} file(s): {seen['judged']} "
          f"judged, {seen['off_document']} to no documented operation (counted, not judged), "
          f"{seen['unanswered']} without an answer")  # fmt: skip
    totals = ", ".join(f"{n} {v}" for v, n in doc["totals"].items())
    print(f"{sum(doc['totals'].values())} requirements: {totals}")
    result = doc["result"]
    problems = f": {'; '.join(result['problems'][:3])}" if result["exit_status"] else ""
    print(f"result: {result['outcome']} (exit {result['exit_status']}){problems}; "
          f"reports in {report_dir}/")  # fmt: skip
