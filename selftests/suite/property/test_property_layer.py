"""The property layer (tests/property/test_property.py, tests/property/test_stateful.py) against the
reference server and against servers that hang or skip auth. (Its mutants, each caught by the
requirement it breaks, are rows of the kill-rate table: selftests/proof/test_mutants.py.)

Each run is a subprocess `pytest ... --base-url URL --token T`, as a user would run it; the verdicts
are read from reports/conformance.json. The reference must pass with the default seed and another.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest

from assistant_conformance.contract.catalogue import load
from assistant_conformance.contract.openapi import operations
from assistant_conformance.report import redact
from assistant_conformance.report.conformance_json import report_schema
from assistant_conformance.suite.http import clients
from assistant_conformance.suite.http.policy import Policy
from assistant_conformance.suite.property.cases import plausible_kb_body
from assistant_conformance.suite.property.generation import schema
from assistant_conformance.suite.property.runner import Runner, Withheld
from assistant_conformance.suite.property.scope import requirements
from assistant_conformance.suite.safety.guard import Guard
from assistant_conformance.suite.safety.ledger import Ledger, read_ledger
from assistant_conformance.suite.safety.session import SafetySession

TOKEN_A = "selftest-token-a"  # principal A of selftests/conftest.py's servers

ROOT = Path(__file__).resolve().parents[3]
LAYER = ["tests/property/test_property.py", "tests/property/test_stateful.py"]
SHORT_TIMEOUT = ["--request-timeout", "2"]


@dataclass
class Run:
    report: dict
    output: str
    files: str  # every report file, concatenated: for the token check
    report_dir: Path

    def ids(self, verdict: str) -> set[str]:
        return {r["id"] for r in self.report["requirements"] if r["verdict"] == verdict}


def run_layer(
    base_url: str, report_dir: Path, seed: int = 0, select: str | None = None, extra: list[str] = ()
) -> Run:
    args = [sys.executable, "-m", "pytest", *LAYER, "-q", "-o", f"cache_dir={report_dir}/.cache"]
    args += ["--base-url", base_url, "--token", TOKEN_A, "--report-dir", str(report_dir)]
    args += ["--seed", str(seed), *extra] + (["-k", select] if select else [])
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)
    report_path = report_dir / "conformance.json"
    assert report_path.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    files = "".join(p.read_text(errors="replace") for p in report_dir.rglob("*") if p.is_file())
    output = done.stdout + done.stderr
    report = json.loads(report_path.read_text())
    jsonschema.validate(report, report_schema())  # the shipped schema, generated from the model
    return Run(report, output, files, report_dir)


def test_every_operation_maps_to_catalogued_requirements() -> None:
    assert len(operations()) == 49
    for op in operations():
        ids = requirements(op.operation_id, stateful=True)
        assert set(ids) <= set(load().requirements), op.operation_id
        assert "AUTH-MISSING-REJECTED" in ids and "ROBUST-NO-5XX" in ids, op.operation_id


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


def test_reference_passes_with_another_seed(reference_server, tmp_path) -> None:
    assert_clean(run_layer(reference_server.base_url, tmp_path, seed=1))


def test_what_the_layer_created_is_gone_at_the_end(reference_run: Run, client) -> None:
    """Every generated create is in the ledger before its answer, and removed at the end: the
    ledger closes with nothing left, and the resources themselves answer 404."""
    (ledger,) = (reference_run.report_dir / "ledger").glob("*.jsonl")
    records = read_ledger(ledger)
    created = [r for r in records if r["event"] == "created"]
    removed = {r["seq"] for r in records if r["event"] == "removed"}
    assert len(created) > 50 and {r["seq"] for r in created} <= removed
    assert records[-1] == {"event": "closed", "left": []}
    readable = [r["delete"]["path"] for r in created if "/contexts/" not in r["delete"]["path"]]
    assert readable and [p for p in readable if client.get(p).status_code != 404] == []


def test_the_token_never_appears(reference_run: Run) -> None:
    assert TOKEN_A not in reference_run.output
    assert TOKEN_A not in reference_run.files


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
    select = "streamRun or state_machine and threads"
    # Ended (run_layer's run is bounded: past its time it raises), and nothing failed: each
    # endless stream was cut and read as a stream that ended. Its seconds: bench/hostile.py.
    run = run_layer(server.base_url, tmp_path / "reports", select=select, extra=SHORT_TIMEOUT)
    assert run.ids("fail") == set() and run.ids("error") == set(), run.output[-4000:]


# --- owned data only, in the generated layer ----------------------------------------------------


@pytest.fixture
def run_guard() -> Guard:
    return Guard(read_only=False, request_timeout=10)


@pytest.fixture
def guarded_runner(reference_server, tmp_path, run_guard) -> Iterator[Runner]:
    """A runner as the property layer makes one: its session from the run's clients, the run's
    guard and ledger around it."""
    redact.register(TOKEN_A, "SELFTEST_TOKEN")  # as the plugin does: the run's own credential
    policy = Policy()
    ledger = Ledger(tmp_path / "ledger", reference_server.base_url)
    safety = SafetySession(run_guard, ledger, policy)
    with clients.session(policy, around=safety.around("main", TOKEN_A)) as session:
        yield Runner(reference_server.base_url, TOKEN_A, 10, session, policy, ledger=ledger)


def test_generated_create_is_in_the_ledger_before_its_answer(guarded_runner) -> None:
    create = schema()["/api/ai/threads"]["POST"].Case(body={"metadata": {}})
    answer = guarded_runner.send(create).json()
    assert guarded_runner.ledger is not None
    records = read_ledger(guarded_runner.ledger.path)
    events = [(r["event"], r.get("seq")) for r in records[1:]]
    assert events == [("intent", 1), ("created", 1)]  # the intent went out first
    assert records[2]["delete"]["path"] == f"/api/ai/threads/{answer['thread_id']}"


def test_generated_write_on_data_the_run_did_not_create_is_withheld(
    guarded_runner, run_guard, client_b
) -> None:
    """A thread of another principal that the target showed (e.g. in a search answer): a generated
    DELETE naming it is not sent; one naming an unknown id is (it checks a 404)."""
    theirs = client_b.post("/api/ai/threads", json={}).json()["thread_id"]
    run_guard.remember({"thread_id": theirs})  # the target showed it to the run
    delete = schema()["/api/ai/threads/{thread_id}"]["DELETE"]
    with pytest.raises(Withheld):
        guarded_runner.send(delete.Case(path_parameters={"thread_id": theirs}))
    assert client_b.get(f"/api/ai/threads/{theirs}").status_code == 200
    unknown = delete.Case(path_parameters={"thread_id": "5f1d6c0e-0000-4000-8000-000000000000"})
    assert guarded_runner.send(unknown).status_code == 404
    assert guarded_runner.sent == 1 and len(guarded_runner.withheld) == 1
