"""The suite in a child process against a target, as the kill table, the matrix, bench and the
self-tests run it: `run_suite(endpoint, options) -> SuiteResult`, one function. The child is the
installed suite (`python -m assistant_conformance run`, from the folder of its log) or a checkout's
(`python -m pytest` from it: its conftest loads the plugin), forked where it can be (forks.py),
bounded in time, with none of the parent's ASSISTANT_API_* settings (each run's options are its
own) but ASSISTANT_API_CONCURRENCY: how many processes a run may take is the machine's to say, not
the target's. The target's address is an option of the run, its tokens are in the run's
environment only. The result is typed: the exit status, conformance.json read into its model
(report/conformance_json.py), the report folder, the output."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant_conformance.proof.forks import SuiteForks
from assistant_conformance.reference.connectors import Endpoint
from assistant_conformance.report.conformance_json import Document, DocumentError, load_document

RUN_SECONDS = 900.0  # seconds one run may take, unless the caller says
TAIL = 4000  # characters of a run's output kept where only its end matters


@dataclass(frozen=True)
class SuiteOptions:
    """How one run goes. `args`: pytest's (test paths, options; `--opt=value` where the option is
    the plugin's: before it loads, a separate value would read as a test path). `log`: its output
    (None: a temporary file, read into the result and removed); `errors_apart`: its stderr kept
    apart from its stdout. `checkout`: run `python -m pytest` from this checkout instead of the
    installed suite. `env`: settings added to the run's environment. `quiet`: pytest's -q.
    `fresh`: a process of its own, never forked (forks.py), as a user starts one: its start-up
    and its CPU (the caller's RUSAGE_CHILDREN) are what bench/ measures."""

    report_dir: Path
    args: tuple[str, ...] = ()
    log: Path | None = None
    errors_apart: bool = False
    timeout: float = RUN_SECONDS
    env: Mapping[str, str] = field(default_factory=dict)
    checkout: Path | None = None
    quiet: bool = True
    fresh: bool = False


@dataclass(frozen=True)
class SuiteResult:
    """One run: its exit status (None: it did not end within its time, and was ended), its
    conformance.json as the typed model (None: none written, or not one: `problem` says), its
    report folder, its output (stdout; stderr when kept apart) and its wall time."""

    returncode: int | None
    report_dir: Path
    document: Document | None
    problem: str
    stdout: str
    stderr: str
    seconds: float

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    @property
    def tail(self) -> str:
        """The end of its output (its stderr's, where kept apart and not empty)."""
        return (self.stderr or self.stdout)[-TAIL:]

    def verdicts(self) -> dict[str, str]:
        """Requirement ID -> verdict ({} without a document)."""
        return self.document.verdicts() if self.document is not None else {}

    def json(self) -> dict[str, Any]:
        """conformance.json as written (a test asserting on its keys as they are on disk)."""
        text = (self.report_dir / "conformance.json").read_text(encoding="utf-8")
        return dict(json.loads(text))


def run_suite(target: Endpoint | None, options: SuiteOptions) -> SuiteResult:
    """The suite against `target` (None: what `options.args` say; no address there, the embedded
    reference), reporting into `options.report_dir`."""
    report_dir = options.report_dir
    cache = f"cache_dir={report_dir / '.pytest_cache'}"  # not a checkout's: runs go side by side
    args = ["-q"] if options.quiet else []
    args += [f"--report-dir={report_dir}", "-o", cache, *options.args]
    env = {**child_environment(), **options.env}
    if target is not None:
        args.append(f"--base-url={target.base_url}")
        env.update(target.environment())
    temporary = Path(tempfile.mkdtemp(prefix="suite-run-")) if options.log is None else None
    log = options.log or Path(str(temporary)) / "stdout"
    errors = log.with_name(log.name + ".stderr") if options.errors_apart else None
    if options.checkout is not None:
        argv, cwd = ["-m", "pytest", *args], options.checkout
    else:
        argv, cwd = ["-m", "assistant_conformance", "run", "--", *args], log.parent
    started = time.monotonic()
    status = run_python(argv, cwd, env, log, options.timeout, errors, fresh=options.fresh)
    seconds = time.monotonic() - started
    said = [_text(log), _text(errors)]
    if temporary is not None:
        shutil.rmtree(temporary, ignore_errors=True)
    elif errors is not None:
        errors.unlink(missing_ok=True)
    document, problem = _read_document(report_dir, status, options.timeout)
    return SuiteResult(status, report_dir, document, problem, said[0], said[1], seconds)


def _read_document(
    report_dir: Path, status: int | None, timeout: float
) -> tuple[Document | None, str]:
    if status is None:
        return None, f"the suite run did not end within {timeout:g} s"
    report = report_dir / "conformance.json"
    if not report.exists():
        return None, f"no conformance.json (pytest exit {status})"
    try:
        return load_document(report), ""
    except DocumentError as exc:
        return None, str(exc)


MACHINE_SETTINGS = ("ASSISTANT_API_CONCURRENCY",)


def child_environment() -> dict[str, str]:
    """This process's environment without the suite's settings of a target (ASSISTANT_API_*),
    the machine's (MACHINE_SETTINGS) kept."""
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("ASSISTANT_API_") or k in MACHINE_SETTINGS
    }


def run_python(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    log_path: Path,
    timeout: float,
    errors_path: Path | None = None,
    fresh: bool = False,
) -> int | None:
    """`python -m NAME ARGS` (ARGV) in `cwd` with exactly `env`, its output to `log_path` (its
    errors to `errors_path` where given): its exit status, None past `timeout`. Forked from this
    process's forker where there is one and the run would start as it did (forks.py: no start-up
    imports per run), else (or `fresh`) a process of its own."""
    if not fresh and (forker := _forker()) is not None and forker.starts_like(env):
        return forker.run(argv, cwd, env, log_path, timeout, errors_path)
    with log_path.open("w", encoding="utf-8") as log, contextlib.ExitStack() as more:
        errors = (
            more.enter_context(errors_path.open("w", encoding="utf-8")) if errors_path else None
        )
        try:
            done = subprocess.run(
                [sys.executable, *argv],
                cwd=cwd,
                env=env,
                stdout=log,
                stderr=errors or subprocess.STDOUT,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return None
    return done.returncode


_forks: list[SuiteForks] = []  # this process's forker, started by its first run
_starting = threading.Lock()


def _forker() -> SuiteForks | None:
    """This process's forker (started once, ended at exit); None where there is no fork."""
    if not hasattr(os, "fork"):
        return None
    with _starting:
        if not _forks or not _forks[-1].alive():
            _forks.append(SuiteForks(child_environment()))
            if len(_forks) == 1:
                atexit.register(lambda: _forks[-1].close())
        return _forks[-1]


def _text(path: Path | None) -> str:
    """What a run wrote to `path` ("" where it wrote nothing, not even the file)."""
    if path is None or not path.exists():
        return ""
    return path.read_text(encoding="utf-8", errors="replace")
