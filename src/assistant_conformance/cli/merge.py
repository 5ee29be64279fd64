"""`assistant-conformance merge DIR... [--report-dir OUT]`: the reports of one run from the
report folders of its shards (`--shard I/N`): conformance.json, .md, .html, junit.xml,
allure-results/ and the findings' exchanges. Exit status: that of one run (0, 1, 3); 4 when the
folders are not one run's shards (said in one line).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from assistant_conformance.report.conformance_json import Document
from assistant_conformance.report.document import cleanup_lines
from assistant_conformance.report.exit_codes import Exit
from assistant_conformance.suite.run.results import ShardMergeError, merge


def add_verb(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = verbs.add_parser("merge", description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", type=Path, nargs="+", help="the shards' report folders")
    parser.add_argument("--report-dir", type=Path, default=Path("reports"))
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    prog = args.prog
    if args.report_dir.resolve() in {f.resolve() for f in args.folders}:
        print(
            f"{prog}: error: --report-dir must not be one of the shards' folders", file=sys.stderr
        )
        return Exit.USAGE
    try:
        run = merge(args.folders, args.report_dir)
    except ShardMergeError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return Exit.USAGE
    doc = Document.of_run(run)
    for line in cleanup_lines(doc):
        print(line)
    totals = ", ".join(f"{n} {v}" for v, n in doc.totals.items())
    count = sum(doc.totals.values())
    print(f"{len(args.folders)} shards merged; {count} requirements: {totals}")
    result = doc.result
    print(f"result: {result.outcome} (exit {result.exit_status}); reports in {args.report_dir}/")
    return int(result.exit_status)
