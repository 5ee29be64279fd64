"""The data scenario tests (KBs, conversations, chat-kit) catch the mutants built for them.

Each mutant of the reference server (assistant_conformance.mutants) breaks one requirement; the
scenario modules that check it run against it, and conformance.json must report exactly the
registry's requirement IDs failed (MUST) or warned (SHOULD), no fewer and no others. The same
modules against the unmutated reference report nothing, so "no others" means something.

All runs start at once (one server and one pytest process each) and are awaited together.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import TOKEN_A, TOKEN_B

from assistant_conformance.mutants import MUTANTS
from assistant_conformance.reference import embedded

ROOT = Path(__file__).resolve().parents[1]
KNOWLEDGE = ("tests/test_knowledge.py", "tests/test_knowledge_prefixes.py")
CONVERSATIONS = ("tests/test_conversations.py",)
FILES = ("tests/test_files.py",)
MODULES = {  # mutant -> the scenario modules that must catch it
    "status-answers-other-documents": KNOWLEDGE,
    "process-never-starts": KNOWLEDGE,
    "knowledges-prefix-diverges": KNOWLEDGE,
    "kb-description-truncated": KNOWLEDGE,
    "messages-ignore-limit": CONVERSATIONS,
    "messages-ignore-offset": CONVERSATIONS,
    "conversation-patch-not-persisted": CONVERSATIONS,
    "chatkit-secret-never-works": FILES,
}
CONTROL = ""  # the unmutated reference
RUN_TIMEOUT = 240  # seconds for all runs together


@dataclass
class SuiteRun:
    server: embedded.RunningServer
    process: subprocess.Popen[str]
    report_dir: Path

    def failed_or_warned(self) -> set[str]:
        document = json.loads((self.report_dir / "conformance.json").read_text(encoding="utf-8"))
        return {r["id"] for r in document["requirements"] if r["verdict"] in ("fail", "warn")}


def start_run(name: str, modules: tuple[str, ...], workdir: Path) -> SuiteRun:
    workdir.mkdir(parents=True)
    extra = ["--mutant", name] if name else []
    server = embedded.start([TOKEN_A, TOKEN_B], workdir / "reference.db", extra_args=extra)
    report_dir = workdir / "reports"
    command = [
        sys.executable, "-m", "pytest", *modules, "-q", "-p", "no:cacheprovider",
        "--base-url", server.base_url, "--token", TOKEN_A, "--alt-token", TOKEN_B,
        "--report-dir", str(report_dir), "--process-timeout", "1",
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_API_")}
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    return SuiteRun(server, process, report_dir)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, SuiteRun]]:
    base = tmp_path_factory.mktemp("scenario-mutants")
    every_module = tuple(sorted({m for modules in MODULES.values() for m in modules}))
    plan = {**MODULES, CONTROL: every_module}
    started: dict[str, SuiteRun] = {}
    try:
        for name, modules in plan.items():
            started[name] = start_run(name, modules, base / (name or "control"))
        for run in started.values():
            run.process.communicate(timeout=RUN_TIMEOUT)
        yield started
    finally:
        for run in started.values():
            if run.process.poll() is None:
                run.process.kill()
                run.process.wait()
            run.server.stop()


def test_scenario_modules_pass_against_the_reference(runs: dict[str, SuiteRun]) -> None:
    assert runs[CONTROL].failed_or_warned() == set()


@pytest.mark.parametrize("name", sorted(MODULES))
def test_mutant_is_reported_by_its_requirement(runs: dict[str, SuiteRun], name: str) -> None:
    _, expected = MUTANTS[name]
    assert runs[name].failed_or_warned() == set(expected)
