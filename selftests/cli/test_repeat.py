"""`assistant-conformance run --repeat N`: N runs against one target, every requirement whose
verdict differed listed with each run's verdict (terminal, repeat.json, repeat.md), exit 6 when
one did; the N runs against the embedded default share one reference."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assistant_conformance.cli import command, repeat
from assistant_conformance.reference.connectors import Endpoint
from assistant_conformance.report.exit_codes import Exit
from assistant_conformance.report.repeat import Repeats

COMMAND = [sys.executable, "-m", "assistant_conformance", "run"]


def _verdicts(**ids: str) -> dict[str, str]:
    return {name.replace("_", "-"): verdict for name, verdict in ids.items()}


def _document(verdicts: dict[str, str]) -> dict[str, object]:
    """A conformance.json with these verdicts (and what else the model requires)."""
    sha = "0" * 64
    groups = ("store", "conversations", "files", "contexts", "chatkit")
    options = {"base_url": None, "strict_conformance": False, "examples": 1, "seed": 0}
    options |= {"request_timeout": 1, "process_timeout": 1, "report_dir": "r", "baseline": None}
    failed = {"requirement": "", "verdict": "warn", "expected": "", "actual": "", "evidence": None}
    requirements = [
        {
            "id": rid,
            "section": rid.split("-")[0],
            "level": "SHOULD",
            "source": "",
            "statement": "",
            "verdict": verdict,
            "reason": "",
            "tests": [],
            "findings": [failed | {"requirement": rid}] if verdict in ("fail", "warn") else [],
        }
        for rid, verdict in verdicts.items()
    ]
    return {
        "format": "assistant-conformance-report/1",
        "suite_version": "0",
        "target": "t",
        "spec": {"openapi_sha256": sha, "requirements_sha256": sha},
        "seed": 0,
        "started": "2026-01-01T00:00:00+00:00",
        "duration_seconds": 0,
        "options": options | {"unsupported": []},
        "result": {"exit_status": 0, "outcome": "conformant", "problems": []},
        "certification": {
            "level": "none",
            "parts": dict.fromkeys(("core", *groups), "met"),
            "notes": {},
        },
        "capabilities": {g: {"status": "not probed", "how": "", "evidence": []} for g in groups},
        "baseline": {"file": None, "entries": []},
        "totals": {},
        "sections": [],
        "requirements": requirements,
        "unattributed_failures": [],
    }


def test_the_requirements_whose_verdicts_differed_are_listed_with_each_runs_verdict() -> None:
    same = Repeats("t", [_verdicts(RUN_STATUS="pass", AUTH_401="warn")] * 3, [0, 0, 0])
    assert same.differing() == {} and same.exit_status() == Exit.CONFORMANT
    runs = [
        _verdicts(RUN_STATUS="pass", AUTH_401="warn", THR_STATUS="pass"),
        _verdicts(RUN_STATUS="fail", AUTH_401="warn", THR_STATUS="pass"),
        None,  # a run that wrote no report is not compared
        _verdicts(RUN_STATUS="pass", AUTH_401="warn", THR_STATUS="skip"),
    ]
    differed = Repeats("t", runs, [0, 1, 3, 0])
    assert differed.differing() == {
        "RUN-STATUS": ["pass", "fail", "-", "pass"],
        "THR-STATUS": ["pass", "pass", "-", "skip"],
    }
    assert differed.exit_status() == Exit.UNSTABLE == 6
    assert differed.table()[2] == "| RUN-STATUS | pass | fail | - | pass |"
    assert Repeats("t", [*runs[:2], None], [0, 1, 4]).exit_status() == Exit.USAGE
    assert Repeats("t", [runs[0], runs[0]], [1, 3]).exit_status() == Exit.HARNESS


def test_repeat_runs_the_command_n_times_and_exits_6_when_a_verdict_differed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    said: list[list[str]] = []
    verdicts = iter(["pass", "warn"])

    def one_run(argv: list[str], out: Path, target: object) -> int:
        said.append(argv)
        out.mkdir(parents=True)
        document = _document(_verdicts(RUN_STATUS="pass", AUTH_401=next(verdicts)))
        (out / "conformance.json").write_text(json.dumps(document))
        return 0

    monkeypatch.setattr(repeat, "_run", one_run)
    monkeypatch.chdir(tmp_path)
    argv = ["--base-url=http://127.0.0.1:9", "--repeat", "2", "--examples=2", "--", "-k", "x"]
    assert command.exit_status(["run", *argv]) == Exit.UNSTABLE
    assert said == [["--base-url=http://127.0.0.1:9", "--examples=2", "--", "-k", "x"]] * 2
    out = capsys.readouterr().out
    assert "| AUTH-401 | pass | warn |" in out and "1 requirements differed (exit 6)" in out
    written = json.loads((tmp_path / "reports" / "repeat.json").read_text())
    assert written["differing"] == [{"id": "AUTH-401", "verdicts": ["pass", "warn"]}]


@pytest.mark.parametrize("times", ["0", "two"])
def test_repeat_takes_a_number_of_runs(times: str) -> None:
    done = subprocess.run(
        [*COMMAND, "--repeat", times], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == Exit.USAGE and "is not a number of runs" in done.stderr


def test_repeated_runs_against_the_embedded_default_judge_one_reference(tmp_path: Path) -> None:
    done = subprocess.run(
        [*COMMAND, "--repeat=2", f"--report-dir={tmp_path}", "--", "tests/scenario/test_usage.py"],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=tmp_path,
    )
    assert done.returncode == Exit.CONFORMANT, done.stdout + done.stderr
    targets = {
        json.loads((tmp_path / "repeat" / i / "conformance.json").read_text())["target"]
        for i in ("1", "2")
    }
    assert len(targets) == 1  # one server, started once for both
    written = json.loads((tmp_path / "repeat.json").read_text())
    assert [r["exit_status"] for r in written["runs"]] == [0, 0] and written["differing"] == []
    assert "2 runs against one target: every verdict the same (exit 0)" in done.stdout


def test_a_started_references_tokens_reach_each_run_in_its_environment_not_its_argv(
    tmp_path: Path,
) -> None:
    """A command line is readable by every user of the machine (`ps`): the tokens of the
    reference started for the runs go in the child's environment, and token words given on the
    command line are dropped so that the started reference's are used."""
    target = Endpoint("http://127.0.0.1:1", ("started-main-token", "started-alt-token"))
    argv = ["--token", "given-token", "--alt-token=given-alt", "-k", "x", "--", "-q"]
    words, env = repeat.run_command(argv, tmp_path, target)
    assert not any("token" in word for word in words), words
    assert "--base-url=http://127.0.0.1:1" in words and words[-1] == "-q"
    assert words[words.index("-k") : words.index("-k") + 2] == ["-k", "x"]
    assert env["ASSISTANT_API_TOKEN"] == "started-main-token"
    assert env["ASSISTANT_API_ALT_TOKEN"] == "started-alt-token"


def test_runs_against_a_given_target_keep_the_words_given(tmp_path: Path) -> None:
    argv = ["--base-url", "http://example.invalid", "--token=given-token"]
    words, _ = repeat.run_command(argv, tmp_path, None)
    assert "--token=given-token" in words and "--base-url" in words
