"""The `assistant-conformance` command: its verbs, its usage errors (exit 4, one usage line), a
report folder it cannot write (one line naming --report-dir, exit 4), and the badge it leaves."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assistant_conformance.cli.command import VERBS, Command, Parser
from assistant_conformance.contract.files import spec_hashes
from assistant_conformance.report.badge import badge
from assistant_conformance.report.conformance_json import CertificationRecord, Document, GateRecord

COMMAND = [sys.executable, "-m", "assistant_conformance"]


def command(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*COMMAND, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["publish"], "unknown verb 'publish'"),
        ([], "a verb is needed"),
        (["run", "--bogus"], "unrecognized arguments: --bogus"),
        (["run", "--examples"], "argument --examples: expected one argument"),
        (["matrix"], "the following arguments are required: targets"),
    ],
)
def test_a_usage_error_is_the_usage_line_and_exit_4(args: list[str], said: str) -> None:
    done = command(*args)
    assert done.returncode == 4
    assert done.stderr.startswith("usage: ") and said in done.stderr


def test_each_verb_is_a_subparser_of_the_one_parser_with_its_handler() -> None:
    """Each verb's module adds its subparser (whose usage errors exit 4) and its handler."""
    verbs = Command("x").verbs.choices
    assert list(verbs) == list(VERBS)
    for verb, module in VERBS.items():
        assert verbs[verb].get_default("func") is importlib.import_module(module).main, verb
        assert isinstance(verbs[verb], Parser) and verbs[verb].prog == f"x {verb}"


def test_version_names_the_suite_and_the_spec_it_checks() -> None:
    done = command("--version")
    assert done.returncode == 0
    assert done.stdout.startswith("assistant-conformance ")
    assert spec_hashes()["openapi_sha256"][:16] in done.stdout


@pytest.mark.parametrize("how", ["run", "pytest"])
def test_reports_that_cannot_be_written_are_one_line_and_exit_4(tmp_path: Path, how: str) -> None:
    (tmp_path / "reports").write_text("a file where the folder would go")
    from assistant_conformance.contract import files

    args = ["run"] if how == "run" else [str(files.tests_dir())]
    runner = COMMAND if how == "run" else [sys.executable, "-m", "pytest"]
    done = subprocess.run([*runner, *args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 4, done.stdout + done.stderr
    errors = [line for line in (done.stdout + done.stderr).splitlines() if "ERROR" in line]
    assert len(errors) == 1 and "give --report-dir DIR" in errors[0], errors


@pytest.mark.parametrize(
    ("level", "outcome", "totals", "message", "color"),
    [
        ("full", "conformant", {"pass": 77}, "full (77 pass)", "brightgreen"),
        ("core + store", "not conformant", {"pass": 60, "fail": 1, "skip": 3},
         "core + store (60 pass, 1 fail)", "green"),
        ("none", "harness error", {"error": 2}, "harness error", "lightgrey"),
    ],
)  # fmt: skip
def test_the_badge_is_a_shields_endpoint(level, outcome, totals, message, color) -> None:
    doc = Document.model_construct(
        result=GateRecord.model_construct(outcome=outcome),
        certification=CertificationRecord.model_construct(level=level),
        totals=totals,
    )
    assert badge(doc) == {
        "schemaVersion": 1, "label": "assistant-conformance", "message": message, "color": color
    }  # fmt: skip


PACKAGE = "assistant_conformance"
ARGPARSE_HELP = 0  # argparse's --help drops a write that failed, and exits 0: quiet too


@pytest.mark.parametrize(
    ("args", "status"),
    [
        ([PACKAGE, "--help"], 141),
        ([PACKAGE, "--version"], 141),
        ([PACKAGE, "matrix", "--help"], ARGPARSE_HELP),
        ([PACKAGE, "audit", "--help"], ARGPARSE_HELP),
        ([f"{PACKAGE}.proof.killtable", "--list"], 141),
        ([f"{PACKAGE}.proof.foreign", "--help"], ARGPARSE_HELP),
        ([f"{PACKAGE}.proof.serve", "--help"], ARGPARSE_HELP),
        ([f"{PACKAGE}.reference.cli", "--help"], ARGPARSE_HELP),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else str(value),
)
def test_every_command_into_a_closed_pipe_ends_quietly(args: list[str], status: int) -> None:
    """`... | head -1` once head has gone: the pipe's reader is closed before the command starts,
    so its first write fails (a reader that stays a while would hide the case)."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", *args], stdout=write, stderr=subprocess.PIPE, text=True,
            timeout=120,
        )  # fmt: skip
    finally:
        os.close(write)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == status, (done.returncode, done.stderr)
