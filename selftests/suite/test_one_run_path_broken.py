"""A server where only one way of making a run is broken (runs/wait answers 500 after running the
graph) gets a fail on that operation and true verdicts on every other run requirement: the run
control goes on with the ways that work, and no requirement passes on operations it did not see.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from safety_support import ALT_TOKEN, TOKEN, reference_app, run_suite, serve

from assistant_conformance.proof.mutants import with_mutant

RUN_MODULES = ("tests/scenario/test_runs.py", "tests/scenario/test_streams.py")
BROKEN = {"RUN-STATUS": "fail", "ROBUST-NO-5XX": "warn"}
# Wait's own completion cannot be judged on a wait that answers 500; every other run requirement
# these modules check must be judged as on the reference.
UNJUDGEABLE = {"RUN-WAIT-COMPLETES"}

pytestmark = pytest.mark.xdist_group("one-run-path")


def test_wait_broken_alone_fails_wait_and_judges_every_other_run_requirement(
    tmp_path: Path,
) -> None:
    app = with_mutant(reference_app(tmp_path), "wait-500-after-run")
    with serve(app) as url:
        done = run_suite(
            tmp_path / "reports", *RUN_MODULES, f"--base-url={url}", f"--token={TOKEN}",
            f"--alt-token={ALT_TOKEN}",
        )  # fmt: skip
    verdicts = done.verdicts()
    assert done.returncode == 1, done.output
    for requirement, verdict in BROKEN.items():
        assert verdicts[requirement] == verdict, done.output
    run = {r: v for r, v in verdicts.items() if r.startswith("RUN-") and v != "untested"}
    others = {r: v for r, v in run.items() if r not in BROKEN and r not in UNJUDGEABLE}
    assert len(others) >= 12 and set(others.values()) == {"pass"}, others
    control = done.json()["runs"]["agent"]["control"]
    assert "runs/wait: HTTP 500" in control and "runs/stream: HTTP 201" in control, control
    status = next(r for r in done.json()["requirements"] if r["id"] == "RUN-STATUS")
    assert any(
        "runs/wait" in f["actual"] or "wait" in str(f["evidence"]) for f in status["findings"]
    )


def test_no_requirement_passes_on_operations_it_did_not_see(tmp_path: Path) -> None:
    """Runs go to an assistant the target does not know: no run is made, the run list alone is
    exercised, and RUN-STATUS, which names seven operations, is not judged (never a pass)."""
    with serve(reference_app(tmp_path)) as url:
        done = run_suite(
            tmp_path / "reports", *RUN_MODULES, f"--base-url={url}", f"--token={TOKEN}",
            f"--alt-token={ALT_TOKEN}", "--assistant=no-such-assistant",
        )  # fmt: skip
    status = next(r for r in done.json()["requirements"] if r["id"] == "RUN-STATUS")
    assert status["verdict"] == "skip", done.output
    assert status["reason"].startswith("not exercised on 6 of the 7 operations it names"), status
    assert "GET /api/ai/threads/{thread_id}/runs;" not in status["reason"]  # the list was seen
    passed = {r for r, v in done.verdicts().items() if r.startswith("RUN-") and v == "pass"}
    assert passed == {"RUN-PAGING-REQUIRED"}, done.verdicts()
