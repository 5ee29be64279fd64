"""`assistant-conformance replay REPORT_DIR [FINDING-ID ...] [--base-url URL] [--token T ...]`:
reproduce findings of a report from their exchanges (REPORT_DIR/exchanges/ID.har), without
running the suite: each is sent again to the target (by default the report's), judged again by
its check, and said to `still fail` (expected / actual, as in the report) or to `now pass`.

Tokens come from the options or the environment (ASSISTANT_API_TOKEN, ASSISTANT_API_ALT_TOKEN),
never from the files, which hold none. What the replay creates it removes
(suite/evidence/replay.py). A finding judged by its test's own code (check `test`) is judged by
running that test once more, alone, at the report's seed.

A finding whose exchanges cannot be sent again as they were (a write the guard refuses, a value
the new answers do not give, a resource the reported run made before the exchanges it kept, a
credential not given) is `not replayed`, with why: it is not judged, and counts toward no exit.
Exit 1 if a finding still fails; else 0 if one now passes; 3 if none could be judged (every one
not replayed: nothing was proved), or the target cannot be reached or refuses the token; 4 for a
bad option, an unknown ID or a folder without exchanges.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assistant_conformance.contract import catalogue
from assistant_conformance.report import redact
from assistant_conformance.report.exit_codes import Exit
from assistant_conformance.suite.evidence.har import Recorded, recorded_findings
from assistant_conformance.suite.evidence.replay import Replayer
from assistant_conformance.suite.evidence.unreplayed import NotReplayed
from assistant_conformance.suite.http.policy import Policy
from assistant_conformance.suite.http.target import HarnessError, Target, preflight
from assistant_conformance.suite.judging.checks import CheckKind

STILL_FAILS, NOW_PASSES, NOT_REPLAYED = "still fails", "now passes", "not replayed"


@dataclass
class ReplayOutcome:
    said: str
    actual: Any = ""
    seconds: float = 0.0


def add_verb(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = verbs.add_parser("replay", description=__doc__.split("\n\n")[0])
    parser.add_argument("report_dir", type=Path, metavar="REPORT_DIR")
    parser.add_argument("ids", nargs="*", metavar="FINDING-ID", help="default: every finding")
    parser.add_argument(
        "--base-url",
        default=os.environ.get("ASSISTANT_API_BASE_URL"),
        help="the target [env ASSISTANT_API_BASE_URL] (default: the report's)",
    )
    parser.add_argument(
        "--token",
        default=os.environ.get("ASSISTANT_API_TOKEN"),
        help="bearer token (default: $ASSISTANT_API_TOKEN; needed)",
    )
    parser.add_argument(
        "--alt-token",
        default=os.environ.get("ASSISTANT_API_ALT_TOKEN"),
        help="a second principal's token (default: $ASSISTANT_API_ALT_TOKEN; none)",
    )
    for name, what in (("request", "a request may take"), ("process", "a stream or poll may last")):
        parser.add_argument(
            f"--{name}-timeout", type=float, help=f"seconds {what} (default: the report run's)"
        )
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    prog = args.prog
    chosen = _chosen(args.report_dir, args.ids)
    first = chosen[0].finding
    base_url = (args.base_url or first.target).rstrip("/")
    if not args.token:
        return _usage(prog, "a token is needed: --token or ASSISTANT_API_TOKEN")
    request_timeout = args.request_timeout or first.request_timeout
    process_timeout = args.process_timeout or first.process_timeout
    with redact.scope():
        redact.register(args.token, "ASSISTANT_API_TOKEN")
        redact.register(args.alt_token, "ASSISTANT_API_ALT_TOKEN")
        policy = Policy(deadline=request_timeout)
        target = Target(base_url, args.token, args.alt_token)
        try:
            preflight(target, policy)
        except HarnessError as exc:
            print(f"{prog}: {exc}", file=sys.stderr)
            return Exit.HARNESS
        outcomes = _replay_all(chosen, target, policy, args, process_timeout)
    return _exit(outcomes)


def _chosen(report_dir: Path, ids: list[str]) -> list[Recorded]:
    known = recorded_findings(report_dir) if report_dir.is_dir() else {}
    if not known:
        print(
            f"no exchanges in {report_dir}/exchanges: a run with findings writes them there",
            file=sys.stderr,
        )
        sys.exit(Exit.USAGE)
    unknown = [i for i in ids if i not in known]
    if unknown:
        print(
            f"unknown finding ID {', '.join(unknown)}; known: {', '.join(known)}", file=sys.stderr
        )
        sys.exit(Exit.USAGE)
    return [known[i] for i in ids] if ids else list(known.values())


def _usage(prog: str, message: str) -> int:
    print(f"{prog}: error: {message}", file=sys.stderr)
    return Exit.USAGE


def _replay_all(
    chosen: list[Recorded], target: Target, policy: Policy, args: Any, process_timeout: float
) -> list[ReplayOutcome]:
    replayer = Replayer.open(target, policy, args.report_dir)
    outcomes = []
    try:
        tests = [r for r in chosen if r.finding.kind == CheckKind.TEST]
        reruns = _rerun_all(tests, target, args)
        for recorded in chosen:
            outcome = reruns.get(recorded.finding.id) or _one(
                recorded, replayer, args, process_timeout
            )
            outcomes.append(outcome)
            _show(recorded, outcome)
            sys.stdout.flush()  # each finding as it is judged: a replay can take minutes
    finally:
        cleaned = replayer.close()
    _summary(chosen, outcomes, target.base_url)
    left = f", {len(cleaned['left'])} left" if cleaned["left"] else ""
    print(f"removed {cleaned['removed']} resource(s) the replay created{left}")
    return outcomes


def _summary(chosen: list[Recorded], outcomes: list[ReplayOutcome], base_url: str) -> None:
    """What was judged, and each finding that was not, with why (it counts toward no exit)."""
    counts = {
        said: sum(1 for o in outcomes if o.said == said)
        for said in (STILL_FAILS, NOW_PASSES, NOT_REPLAYED)
    }
    judged = counts[STILL_FAILS] + counts[NOW_PASSES]
    print(
        f"replayed {judged} of {len(outcomes)} finding(s) against {base_url}: "
        f"{counts[STILL_FAILS]} still fail, {counts[NOW_PASSES]} now pass, "
        f"{counts[NOT_REPLAYED]} not replayed"
    )
    for recorded, outcome in zip(chosen, outcomes, strict=True):
        if outcome.said == NOT_REPLAYED:
            print(redact.text(f"  not replayed: {recorded.finding.id}: {outcome.actual}"))


def _one(
    recorded: Recorded, replayer: Replayer, args: Any, process_timeout: float
) -> ReplayOutcome:
    started = time.monotonic()
    try:
        answers, check = replayer.answers(recorded, process_timeout, args.process_timeout)
        held, actual = replayer.judge(check, recorded.finding.requirement, answers)
        said = NOW_PASSES if held else STILL_FAILS
    except NotReplayed as exc:
        said, actual = NOT_REPLAYED, str(exc)
    return ReplayOutcome(said, actual, time.monotonic() - started)


def _rerun_all(tests: list[Recorded], target: Target, args: Any) -> dict[str, ReplayOutcome]:
    """Checks that are their tests' own code: those tests, run once more together at the seed
    (one pytest for all of them: each shows the time they took together)."""
    if not tests:
        return {}
    started = time.monotonic()
    try:
        again = _rerun(tests, target, args)
    except NotReplayed as exc:
        return {r.finding.id: ReplayOutcome(NOT_REPLAYED, str(exc), 0.0) for r in tests}
    seconds = time.monotonic() - started
    outcomes = {}
    for recorded in tests:
        finding = recorded.finding
        same = [r for r in again.values() if r.finding.test == finding.test]
        alike = [r for r in same if r.finding.requirement == finding.requirement]
        found = again.get(finding.id) or (alike[0] if alike else None)
        said, actual = (STILL_FAILS, found.finding.actual) if found else (NOW_PASSES, "")
        outcomes[finding.id] = ReplayOutcome(said, actual, seconds)
    return outcomes


def _rerun(tests: list[Recorded], target: Target, args: Any) -> dict[str, Recorded]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_API_")}
    env["ASSISTANT_API_TOKEN"] = target.token
    if target.alt_token:
        env["ASSISTANT_API_ALT_TOKEN"] = target.alt_token
    finding = tests[0].finding
    nodes = list(dict.fromkeys(r.finding.test for r in tests))
    with tempfile.TemporaryDirectory(prefix="conformance-replay-") as folder:
        command = [
            sys.executable,
            "-m",
            "assistant_conformance",
            "run",
            f"--base-url={target.base_url}",
            f"--seed={finding.seed}",
            f"--report-dir={folder}",
            f"--request-timeout={args.request_timeout or finding.request_timeout}",
            f"--process-timeout={args.process_timeout or finding.process_timeout}",
            "--concurrency=1",  # a finding's few tests: workers would only add their start-ups
            "--",
            *nodes,
            "-q",
            "-p",
            "no:allure_pytest",
            "-p",
            "no:langsmith_plugin",
        ]
        ran = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if ran.returncode not in (Exit.CONFORMANT, Exit.VIOLATION):
            lines = (ran.stderr.strip() or ran.stdout.strip()).splitlines() or [""]
            raise NotReplayed(f"its test did not run (exit {ran.returncode}): {lines[-1]}")
        return recorded_findings(Path(folder))


def _show(recorded: Recorded, outcome: ReplayOutcome) -> None:
    finding = recorded.finding
    count = len(recorded.entries)
    print(f"{finding.id}  {outcome.said}  ({outcome.seconds:.1f} s, {count} exchanges)")
    if outcome.said == NOW_PASSES:
        return
    requirement = catalogue.load()[finding.requirement]
    print(
        f"  [{requirement.id}] {requirement.level} ({requirement.source}): {requirement.statement}"
    )
    if outcome.said == STILL_FAILS:
        print(f"  Expected: {finding.expected}")
        print(redact.text(f"  Actual:   {outcome.actual}"))
    else:
        print(redact.text(f"  Not replayed: {outcome.actual}"))


def _exit(outcomes: list[ReplayOutcome]) -> int:
    """1 if one still fails; else 0 if one now passes; else 3: nothing could be judged (a
    replay that proved nothing is not a pass). A finding not replayed counts toward neither."""
    said = {o.said for o in outcomes}
    if STILL_FAILS in said:
        return Exit.VIOLATION
    return Exit.CONFORMANT if NOW_PASSES in said else Exit.HARNESS
