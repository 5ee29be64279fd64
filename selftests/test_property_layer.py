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
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from assistant_conformance.catalogue import load
from assistant_conformance.mutants import MUTANTS
from assistant_conformance.property_scope import operations, plausible_kb_body, requirements

TOKEN_A = "selftest-token-a"  # principal A of selftests/conftest.py's servers

ROOT = Path(__file__).resolve().parents[1]
LAYER = ["tests/test_property.py", "tests/test_stateful.py"]
# Each mutant is run on the operations it touches and the state machine of their chain of links.
PROPERTY_MUTANTS = {
    "create-thread-200": "createThread or state_machine and threads",
    "search-threads-no-auth": "searchThreads",
    "kb-permission-any-string": "CreateKnowledgebase or UpdateKnowledgebase",
    "status-ids-optional": "GetDocumentStatus or state_machine and knowledge",
    "empty-bulk-500": "BulkCreateDocuments or state_machine and knowledge",
    "deleted-thread-readable": "deleteThread or getThread or state_machine and threads",
    "conversation-search-hangs": "searchConversations or state_machine and conversations",
}
HANGS = {"conversation-search-hangs"}  # run with a short request timeout
SHORT_TIMEOUT = ["--request-timeout", "2"]


@dataclass
class Run:
    report: dict
    output: str
    files: str  # every report file, concatenated: for the token check

    def ids(self, verdict: str) -> set[str]:
        return {r["id"] for r in self.report["requirements"] if r["verdict"] == verdict}


def run_layer(
    base_url: str, report_dir: Path, seed: int = 0, select: str | None = None, extra: list[str] = ()
) -> Run:
    args = [sys.executable, "-m", "pytest", *LAYER, "-q", "-p", "no:cacheprovider"]
    args += ["--base-url", base_url, "--token", TOKEN_A, "--report-dir", str(report_dir)]
    args += ["--seed", str(seed), *extra] + (["-k", select] if select else [])
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)
    report_path = report_dir / "conformance.json"
    assert report_path.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    files = "".join(p.read_text(errors="replace") for p in report_dir.rglob("*") if p.is_file())
    return Run(json.loads(report_path.read_text()), done.stdout + done.stderr, files)


def test_every_operation_maps_to_catalogued_requirements() -> None:
    assert len(operations()) == 49
    for op in operations().values():
        ids = requirements(op.id, stateful=True)
        assert set(ids) <= set(load().requirements), op.id
        assert "AUTH-MISSING-REJECTED" in ids and "ROBUST-NO-5XX" in ids, op.id


VALID_KB = {
    "workspaceId": "0b8f2a55-6f0e-4d7e-9a43-6a1e7f0c2d11",
    "name": "kb",
    "permission": "organization",
    "type": "standard",
    "recall": {"topK": 5, "score": 0.5},
    "parserConfig": {"chunkSize": 500, "chunkOverlap": 50, "delimiter": ". ,"},
}


@pytest.mark.parametrize(
    "change",
    [
        {"extra": 1},  # an undeclared field
        {"name": ""},  # which fields are required is not shown: an empty one may be refused
        {"recall": {"topK": 10**9}},  # bounds are not shown: an extreme number may be refused
        {"parserConfig": {"chunkSize": 10, "chunkOverlap": 10}},
        {"workspaceId": "not-a-uuid"},
        {"permission": "everyone"},
    ],
)
def test_only_plausible_kb_bodies_are_judged_for_acceptance(change: dict) -> None:
    assert plausible_kb_body(VALID_KB) and plausible_kb_body({})
    assert not plausible_kb_body({**VALID_KB, **change})


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
    extra = SHORT_TIMEOUT if name in HANGS else []
    run = run_layer(
        server.base_url, tmp_path / "reports", select=PROPERTY_MUTANTS[name], extra=extra
    )
    expected = set(MUTANTS[name][1])
    must = {rid for rid in expected if load()[rid].level == "MUST"}
    assert run.ids("fail") == must, run.output[-4000:]
    assert run.ids("error") == set(), run.output[-4000:]
    # SHOULD ones warn; warnings the reference gets itself (same seed) are not the mutant's.
    assert run.ids("warn") - reference_run.ids("warn") == expected - must, run.output[-4000:]
    evidence = [f for r in run.report["requirements"] if r["id"] in expected for f in r["findings"]]
    assert evidence and all(f["evidence"] and "curl" in f["evidence"]["curl"] for f in evidence)
    assert TOKEN_A not in run.output + run.files


def test_ignored_auth_runs_and_names_the_operation(start_server, tmp_path) -> None:
    server = start_server(tmp_path / "m.db", extra_args=["--mutant", "search-threads-no-auth"])
    run = run_layer(server.base_url, tmp_path / "reports", select="searchThreads")
    [auth] = [r for r in run.report["requirements"] if r["id"] == "AUTH-MISSING-REJECTED"]
    titles = " ".join(f["actual"] for f in auth["findings"])
    assert "API accepts requests without authentication" in titles  # ignored_auth's own finding
    assert "POST /api/ai/threads/search" in titles


def test_a_stream_that_never_ends_is_cut(start_server, tmp_path) -> None:
    """Each streamed case costs at most max-stream-events or the request timeout: the run ends."""
    server = start_server(tmp_path / "m.db", extra_args=["--mutant", "stream-never-ends"])
    started = time.monotonic()
    select = "streamRun or state_machine and threads"
    run = run_layer(server.base_url, tmp_path / "reports", select=select, extra=SHORT_TIMEOUT)
    assert time.monotonic() - started < 180
    assert run.ids("fail") == set() and run.ids("error") == set(), run.output[-4000:]
