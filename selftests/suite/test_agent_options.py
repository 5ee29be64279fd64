"""--assistant and --run-input against the embedded reference: bad values are one line (exit 4),
and a run too short for a check leaves it not judged with the count, never failed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from safety_support import run_suite

pytestmark = pytest.mark.xdist_group("agent-options")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("{not json", "--run-input is not JSON"),
        ("@/nonexistent/input.json", "--run-input @/nonexistent/input.json: cannot read it"),
    ],
)
def test_bad_run_input_is_a_usage_error(tmp_path: Path, value: str, message: str) -> None:
    done = run_suite(tmp_path, f"--run-input={value}", "tests/scenario/test_runs.py")
    assert done.returncode == 4, done.output
    assert message in done.output and "Traceback" not in done.output


def test_a_run_input_from_a_file_is_used(tmp_path: Path) -> None:
    run_input = tmp_path / "input.json"
    run_input.write_text(json.dumps({"messages": [{"role": "user", "content": "{text}"}]}))
    done = run_suite(
        tmp_path, f"--run-input=@{run_input}", "tests/scenario/test_runs.py", "-k", "wait"
    )
    assert done.returncode == 0, done.output
    assert done.verdicts()["RUN-WAIT-COMPLETES"] == "pass"
    assert done.json()["runs"]["agent"]["input_shape"] == "LangGraph chat messages"


def test_a_run_too_short_to_cancel_is_not_judged(tmp_path: Path) -> None:
    one_word = json.dumps({"messages": [{"role": "user", "content": "hi"}]})  # no {text}
    done = run_suite(
        tmp_path, f"--run-input={one_word}", "tests/scenario/test_runs.py", "-k", "cancel"
    )
    verdicts = done.verdicts()
    assert verdicts["RUN-CANCEL"] == "skip", done.output
    reason = next(r["reason"] for r in done.json()["requirements"] if r["id"] == "RUN-CANCEL")
    assert "before it could be cancelled" in reason and "events" in reason
    assert "fail" not in {v for rid, v in verdicts.items() if rid.startswith("RUN-")}
