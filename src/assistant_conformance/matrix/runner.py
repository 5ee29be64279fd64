"""One suite run per target, a bounded number at a time, each into its own report folder with the
same seed, depth and selection. A target that could not be run becomes an `error` column with the
reason; the others still complete."""

from __future__ import annotations

import contextvars
import dataclasses
import json
import re
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant_conformance.matrix.targets import MatrixTarget, Plan
from assistant_conformance.proof.suiterun import SuiteOptions, run_suite
from assistant_conformance.reference.connectors import ConnectError
from assistant_conformance.report import redact
from assistant_conformance.report.conformance_json import Document, DocumentError, load_document

COMPLETED, NOT_RUN = "completed", "error"
COLUMN_FILE, COLUMN_FORMAT = "column.json", "assistant-conformance-matrix-column/1"
KEPT = ("status", "reason", "exit_status", "seconds", "versions")  # of a column, in column.json
JUDGED_EXITS = (0, 1)  # the gate's verdicts: conformant, or a violation
NOT_NEEDED = ("langsmith_plugin", "allure_pytest")  # start-up time, and no Allure results wanted
_REASON = re.compile(r"^(?:harness error|usage error|ERROR): (.+)$", re.M)


@dataclass
class Column:
    target: MatrixTarget
    status: str  # completed / error
    reason: str = ""
    exit_status: int | None = None
    seconds: float = 0.0
    versions: dict[str, str] = field(default_factory=dict)
    document: Document | None = None  # the target's conformance.json

    @property
    def folder(self) -> str:
        """The target's report folder, relative to the matrix's."""
        return f"targets/{self.target.name}"


def suite_args(target: MatrixTarget, plan: Plan) -> list[str]:
    command = [arg for name in NOT_NEEDED for arg in ("-p", f"no:{name}")]
    # "=": before the plugin loads, a separate value would read as a test path
    command.append(f"--seed={plan.seed}")
    if plan.examples is not None:
        command.append(f"--examples={plan.examples}")
    if target.unsupported:
        command.append(f"--unsupported={','.join(target.unsupported)}")
    if plan.requirements:
        command += ["-k", " or ".join(plan.requirements)]
    return command + list(target.options)


def run_target(target: MatrixTarget, plan: Plan, out: Path, workdir: Path) -> Column:
    """Make the target ready, run the suite against it into out/targets/NAME/, stop it."""
    report_dir = out / "targets" / target.name
    report_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        endpoint = target.connector().start(workdir / target.name)
    except ConnectError as exc:
        reason = redact.text(str(exc))
        (report_dir / "suite.log").write_text(f"not run: {reason}\n", encoding="utf-8")
        column = Column(target, NOT_RUN, reason, seconds=time.monotonic() - started)
        save_column(column, plan, report_dir)
        return column
    for token in endpoint.tokens:
        redact.register(token)  # a reason or log line quoting it is masked
    log_path = report_dir / "suite.log"
    options = SuiteOptions(
        report_dir, tuple(suite_args(target, plan)), log=log_path, timeout=plan.timeout
    )
    try:
        run = run_suite(endpoint, options)
    finally:
        endpoint.stop()
    status = run.returncode
    column = Column(target, COMPLETED, exit_status=status, versions=dict(endpoint.versions))
    column.seconds = time.monotonic() - started
    column.document = run.document
    if status is None:
        column.status, column.reason = NOT_RUN, f"the run did not end within {plan.timeout:g} s"
    elif status not in JUDGED_EXITS or column.document is None:
        column.status, column.reason = NOT_RUN, ending_reason(status, run.stdout)
    save_column(column, plan, report_dir)
    return column


def save_column(column: Column, plan: Plan, report_dir: Path) -> None:
    """The column's own record (`column.json`): `matrix merge` builds a grid from such folders."""
    kept = {
        "format": COLUMN_FORMAT,
        "plan": {
            "seed": plan.seed,
            "examples": plan.examples,
            "requirements": list(plan.requirements),
        },
        "target": dataclasses.asdict(column.target),
        **{k: getattr(column, k) for k in KEPT},
    }
    (report_dir / COLUMN_FILE).write_text(json.dumps(kept, indent=2) + "\n", encoding="utf-8")


def load_column(report_dir: Path) -> tuple[dict[str, Any], Column]:
    """A column saved in `report_dir`, and the plan it was run with."""
    kept = json.loads((report_dir / COLUMN_FILE).read_text(encoding="utf-8"))
    if kept.get("format") != COLUMN_FORMAT:
        raise ValueError(f"{report_dir / COLUMN_FILE}: not a {COLUMN_FORMAT} file")
    raw = kept["target"]
    target = MatrixTarget(
        **{**raw, "unsupported": tuple(raw["unsupported"]), "options": tuple(raw["options"])}
    )
    column = Column(
        target,
        kept["status"],
        kept["reason"],
        kept["exit_status"],
        kept["seconds"],
        kept["versions"],
    )
    column.document = document_in(report_dir)
    return kept["plan"], column


def document_in(report_dir: Path) -> Document | None:
    """The conformance.json the run wrote in `report_dir` (None: it wrote none, or not one)."""
    report = report_dir / "conformance.json"
    if not report.exists():
        return None
    try:
        return load_document(report)
    except DocumentError:
        return None


def ending_reason(status: int, log: str) -> str:
    """The run's own one-line reason for ending without verdicts (the suite's exit 3 and 4)."""
    found = _REASON.findall(log)
    line = found[-1] if found else (log.strip().splitlines() or ["no output"])[-1]
    return redact.text(f"exit {status}: {line.strip()}")[:300]


def run_all(
    plan: Plan, out: Path, on_done: Callable[[Column], None] = lambda column: None
) -> list[Column]:
    """Every target, plan.jobs at a time; the columns in the file's order."""
    with (
        tempfile.TemporaryDirectory(prefix="matrix-") as workdir,
        ThreadPoolExecutor(max_workers=plan.jobs) as pool,
    ):
        context = contextvars.copy_context()  # the matrix's secrets, in every thread

        def one(target: MatrixTarget) -> Column:
            column = run_target(target, plan, out, Path(workdir))
            on_done(column)
            return column

        return list(pool.map(lambda target: context.copy().run(one, target), plan.targets))
