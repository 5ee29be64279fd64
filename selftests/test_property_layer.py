"""The property layer (tests/test_property.py, tests/test_stateful.py) against the reference server
and against deliberately wrong variants of it (assistant_conformance.mutants).

Each run is a subprocess `pytest ... --base-url URL --token T`, as a user would run it; the verdicts
are read from reports/conformance.json. The reference must pass with every seed; each mutant must
be reported with exactly the requirement it breaks (failed for a MUST, warned for a SHOULD).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from assistant_conformance.catalogue import load
from assistant_conformance.mutants import MUTANTS

TOKEN_A = "selftest-token-a"  # principal A of selftests/conftest.py's servers

ROOT = Path(__file__).resolve().parents[1]
LAYER = ["tests/test_property.py", "tests/test_stateful.py"]
# Each mutant is run on the operations it touches plus the state machine (all operations, linked).
PROPERTY_MUTANTS = {
    "create-thread-200": "createThread or state_machine",
    "search-threads-no-auth": "searchThreads or state_machine",
    "kb-permission-any-string": "CreateKnowledgebase or UpdateKnowledgebase or state_machine",
    "status-ids-optional": "GetDocumentStatus or state_machine",
    "empty-bulk-500": "BulkCreateDocuments or state_machine",
    "deleted-thread-readable": "deleteThread or getThread or state_machine",
}


@dataclass
class Run:
    report: dict
    output: str
    files: str  # every report file, concatenated: for the token check

    def ids(self, verdict: str) -> set[str]:
        return {r["id"] for r in self.report["requirements"] if r["verdict"] == verdict}


def run_layer(base_url: str, report_dir: Path, seed: int = 0, select: str | None = None) -> Run:
    args = [sys.executable, "-m", "pytest", *LAYER, "-q", "-p", "no:cacheprovider"]
    args += ["--base-url", base_url, "--token", TOKEN_A, "--report-dir", str(report_dir)]
    args += ["--seed", str(seed)] + (["-k", select] if select else [])
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)
    report_path = report_dir / "conformance.json"
    assert report_path.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    files = "".join(p.read_text(errors="replace") for p in report_dir.rglob("*") if p.is_file())
    return Run(json.loads(report_path.read_text()), done.stdout + done.stderr, files)


@pytest.fixture(scope="module")
def reference_run(reference_server, tmp_path_factory) -> Run:
    return run_layer(reference_server.base_url, tmp_path_factory.mktemp("reference-0"))


def assert_clean(run: Run) -> None:
    assert run.ids("fail") == set(), run.output[-4000:]
    assert run.ids("error") == set(), run.output[-4000:]
    assert not run.report.get("unattributed_failures"), run.report.get("unattributed_failures")


def test_reference_passes_the_whole_layer(reference_run: Run) -> None:
    assert_clean(reference_run)
    tested = {r["id"] for r in reference_run.report["requirements"] if r["tests"]}
    assert {"AUTH-MISSING-REJECTED", "KB-ALLOWED-VALUES", "THR-DELETE-GONE", "RUN-STATUS"} <= tested


@pytest.mark.parametrize("seed", [1, 2])
def test_reference_passes_with_other_seeds(reference_server, tmp_path, seed: int) -> None:
    assert_clean(run_layer(reference_server.base_url, tmp_path, seed=seed))


def test_the_token_never_appears(reference_run: Run) -> None:
    assert TOKEN_A not in reference_run.output
    assert TOKEN_A not in reference_run.files


@pytest.mark.parametrize("name", sorted(PROPERTY_MUTANTS))
def test_mutant_is_reported_with_its_requirement(
    name: str, start_server, tmp_path, reference_run: Run
) -> None:
    server = start_server(tmp_path / "mutant.db", token_delay_ms=5, extra_args=["--mutant", name])
    run = run_layer(server.base_url, tmp_path / "reports", select=PROPERTY_MUTANTS[name])
    expected = set(MUTANTS[name][1])
    must = {rid for rid in expected if load()[rid].level == "MUST"}
    assert run.ids("fail") == must, run.output[-4000:]
    assert run.ids("error") == set(), run.output[-4000:]
    # SHOULD ones warn; warnings the reference itself gets (with the same seed) are not the mutant's.
    assert run.ids("warn") - reference_run.ids("warn") == expected - must, run.output[-4000:]
    evidence = [f for r in run.report["requirements"] if r["id"] in expected for f in r["findings"]]
    assert evidence and all(f["evidence"] and "curl" in f["evidence"]["curl"] for f in evidence)
    assert TOKEN_A not in run.output + run.files
