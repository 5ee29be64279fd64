"""`assistant-conformance run --repeat N [suite options] [-- pytest args]`: the suite N times
against one target, one run after another, and every requirement whose verdict differed.

Each run is the plain `run` with the same options and its own reports, in
`<report dir>/repeat/<i>/`; then `<report dir>/repeat.json` and `repeat.md` list the requirements
whose verdicts differed, with each run's verdict, and the terminal shows the same table. All N
judge the same target: the one given (`--base-url`), else one embedded reference started here for
the N runs (a fresh database, two principals of random tokens, never printed), not one each: a
difference is then the suite's or the server's, never a new server's. Exit: 6 when a verdict
differed (report/exit_codes.py); else the runs' status, the worst of them (3 over 1 over 0); a run
stopped by a usage error (4) or interrupted (2) ends the repeats with its status.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from assistant_conformance.reference.connectors import ConnectError, Endpoint, ReferenceConnector
from assistant_conformance.report.exit_codes import Exit
from assistant_conformance.report.repeat import Repeats, verdicts_of

RUNS_FOLDER = "repeat"  # under the report dir: one folder per run


def main(argv: list[str], times: int, report_dir: Path, prog: str) -> int:
    """`argv`: the `run` command's words without --repeat; `times` runs; their reports under
    `report_dir`."""
    target = None if _target_given(argv) else _reference(report_dir)
    where = target.base_url if target is not None else "the target given"
    repeats = Repeats(where)
    try:
        for i in range(1, times + 1):
            out = report_dir / RUNS_FOLDER / str(i)
            print(f"{prog}: run {i} of {times} against {where}, reports in {out}/", flush=True)
            code = _run(argv, out, target)
            repeats.exits.append(code)
            repeats.verdicts.append(verdicts_of(out / "conformance.json"))
            if code in (Exit.USAGE, Exit.INTERRUPTED):
                break
    except KeyboardInterrupt:
        repeats.exits.append(Exit.INTERRUPTED)
        repeats.verdicts.append(None)
    finally:
        if target is not None:
            target.stop()
    repeats.write(report_dir)
    if repeats.differing():
        print("\n".join(["", *repeats.table()]))
    print(f"\n{repeats.summary()}; written: {report_dir / 'repeat.md'}, repeat.json")
    return repeats.exit_status()


def _target_given(argv: list[str]) -> bool:
    words = argv[: argv.index("--")] if "--" in argv else argv
    flagged = any(w == "--base-url" or w.startswith("--base-url=") for w in words)
    return flagged or bool(os.environ.get("ASSISTANT_API_BASE_URL"))


def _reference(report_dir: Path) -> Endpoint:
    """The embedded reference the N runs share, two principals of random tokens."""
    folder = Path(tempfile.mkdtemp(prefix="conformance-repeat-"))
    try:
        return ReferenceConnector(prefix="repeat").start(folder)
    except ConnectError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(Exit.HARNESS) from None


def _run(argv: list[str], out: Path, target: Endpoint | None) -> int:
    """One `run` with the given words, reporting to `out`, against `target` where one was
    started here."""
    command, env = run_command(argv, out, target)
    return subprocess.run(command, env=env, check=False).returncode


TOKEN_FLAGS = ("--token", "--alt-token")


def run_command(
    argv: list[str], out: Path, target: Endpoint | None
) -> tuple[list[str], dict[str, str]]:
    """The child's command and environment for one run. Where the target was started here, its
    address goes on the command line and its tokens in the environment (a command line is
    visible to every user of the machine); the token words given are dropped, so that the
    started reference's tokens are the ones used."""
    split = argv.index("--") if "--" in argv else len(argv)
    words, env = argv[:split], dict(os.environ)
    own = [f"--report-dir={out}"]
    if target is not None:
        words = _without_tokens(words)
        own.append(f"--base-url={target.base_url}")
        env.update(target.environment())
    command = [sys.executable, "-m", "assistant_conformance", "run", *words, *own]
    return [*command, *argv[split:]], env


def _without_tokens(words: list[str]) -> list[str]:
    """`words` without `--token T`, `--token=T` and the same of `--alt-token`."""
    kept: list[str] = []
    skip_next = False
    for word in words:
        if skip_next:
            skip_next = False
        elif word in TOKEN_FLAGS:
            skip_next = True
        elif not word.startswith(tuple(f"{flag}=" for flag in TOKEN_FLAGS)):
            kept.append(word)
    return kept
