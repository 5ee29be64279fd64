"""A server no one here wrote judges the suite: a real LangGraph Agent Server (PyPI) as the target.

Every verdict it gets was judged by hand against the interface document, the RFCs and the server's
answers, and written down in docs/compatibility/langgraph.md; the suite must give exactly those.
The server runs the deterministic graphs of proof/langgraph/ (no LLM) in a venv of its own, made
on first use (about a minute), and starts within a bounded time.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from safety_support import ROOT, Done, run_suite

from assistant_conformance.contract.catalogue import load
from assistant_conformance.proof.connectors import ForeignConnector
from assistant_conformance.proof.foreign import LANGGRAPH_ABSENT
from assistant_conformance.reference.connectors import Endpoint
from assistant_conformance.reference.embedded import TOKENS_VARIABLE

pytestmark = pytest.mark.xdist_group("langgraph")

TOKENS = ("tok-langgraph-main-5c1e", "tok-langgraph-alt-9d3a")
TABLE = ROOT / "docs" / "compatibility" / "langgraph.md"
ROW = re.compile(r"^\| ([A-Z0-9-]+) \| (MUST|SHOULD) \| (pass|fail|warn|skip|unsupported) \|", re.M)
RUN_MODULES = ("tests/scenario/test_runs.py", "tests/scenario/test_streams.py")
NEED_NO_RUN = {"RUN-STATUS", "RUN-PAGING-REQUIRED"}  # judged on the run list alone


def reviewed() -> dict[str, str]:
    """The verdicts of the reviewed table: requirement ID -> verdict."""
    return {m[1]: m[3] for m in ROW.finditer(TABLE.read_text(encoding="utf-8"))}


def suite(server: Endpoint, report_dir: Path, *args: str) -> Done:
    unsupported = f"--unsupported={','.join(LANGGRAPH_ABSENT)}"
    return run_suite(report_dir, unsupported, *args, timeout=600, target=server)


def runs_of(done: Done) -> dict:
    return done.json()["runs"]


@pytest.fixture(scope="module")
def langgraph(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    server = ForeignConnector(tokens=TOKENS).start(tmp_path_factory.mktemp("langgraph"))
    yield server
    server.stop()


def test_the_table_covers_the_catalogue_once() -> None:
    rows = ROW.findall(TABLE.read_text(encoding="utf-8"))
    ids = [row[0] for row in rows]
    assert len(ids) == len(set(ids)), "a requirement appears twice in the table"
    catalogue = load()
    assert set(ids) == set(catalogue.requirements)
    assert {rid: level for rid, level, _ in rows} == {
        rid: r.level for rid, r in catalogue.requirements.items()
    }


def test_every_verdict_is_the_reviewed_one(langgraph: Endpoint, tmp_path: Path) -> None:
    done = suite(langgraph, tmp_path)
    got, want = done.verdicts(), reviewed()
    wrong = {rid: f"{got.get(rid)}, reviewed {v}" for rid, v in want.items() if got.get(rid) != v}
    assert not wrong, f"{wrong}\n{done.stdout[-3000:]}"
    assert done.returncode == 1  # MUST failures: knowledge bases and success statuses
    assert runs_of(done)["agent"]["name"] == "echo" and runs_of(done)["started"] > 0


def test_a_plain_input_agent_gets_the_same_run_verdicts(
    langgraph: Endpoint, tmp_path: Path
) -> None:
    done = suite(langgraph, tmp_path, "--assistant=plain", '--run-input={"input": "{text}"}',
                 *RUN_MODULES)  # fmt: skip
    got, want = done.verdicts(), reviewed()
    runs = {rid: want[rid] for rid in want if rid.startswith("RUN-")}
    assert {rid: got[rid] for rid in runs} == runs, done.stdout[-3000:]
    agent = runs_of(done)["agent"]
    assert agent["problem"] == "", agent
    assert "runs/wait: HTTP 200" in agent["control"] and "joined" in agent["control"], agent


def test_the_control_finds_the_input_a_plain_agent_reads(
    langgraph: Endpoint, tmp_path: Path
) -> None:
    """Without --run-input the control tries the chat messages (a failed run on this agent), then
    a plain `input` text, which it takes: the run verdicts are the same."""
    done = suite(langgraph, tmp_path, "--assistant=plain", *RUN_MODULES)
    got, want = done.verdicts(), reviewed()
    runs = {rid: want[rid] for rid in want if rid.startswith("RUN-")}
    assert {rid: got[rid] for rid in runs} == runs, done.stdout[-3000:]
    assert runs_of(done)["agent"]["input_shape"] == "an object with `input`"


def test_an_agent_refusing_every_input_judges_no_run(langgraph: Endpoint, tmp_path: Path) -> None:
    done = suite(langgraph, tmp_path, "--assistant=plain", '--run-input={"other": "{text}"}',
                 *RUN_MODULES)  # fmt: skip
    verdicts = {rid: v for rid, v in done.verdicts().items() if rid.startswith("RUN-")}
    judged = {rid for rid, verdict in verdicts.items() if verdict != "skip"}
    assert judged <= NEED_NO_RUN, verdicts  # the rest needs a run: not judged, never failed
    problem = runs_of(done)["agent"]["problem"]
    assert "refused every input" in problem and "runs/stream" in problem, problem
    assert "refused every input" in (tmp_path / "conformance.md").read_text(encoding="utf-8")


def test_no_assistant_for_testing_starts_no_run(tmp_path: Path) -> None:
    server = ForeignConnector(graphs=("plain",), tokens=TOKENS).start(tmp_path / "server")
    try:
        done = suite(server, tmp_path / "report", *RUN_MODULES)
    finally:
        server.stop()
    assert runs_of(done)["started"] == 0
    assert "no assistant is named for testing" in done.stdout  # the header says so up front
    verdicts = done.verdicts()
    assert verdicts["RUN-STREAM-RESUME"] == "skip" and verdicts["RUN-CANCEL"] == "skip"


def test_the_launcher_stopped_by_a_signal_ends_and_stops_its_server(tmp_path: Path) -> None:
    """`python -m assistant_conformance.proof.foreign` (its token from the environment, not argv)
    ends on SIGTERM, its server with it (it hung there once: the handler waited on the server
    while the interrupted wait held its lock)."""
    launcher = subprocess.Popen(
        [sys.executable, "-m", "assistant_conformance.proof.foreign", "langgraph", "--graph",
         "echo", "--workdir", str(tmp_path)],
        stdout=subprocess.PIPE, text=True, env={**os.environ, TOKENS_VARIABLE: TOKENS[0]},
    )  # fmt: skip
    try:
        assert launcher.stdout is not None
        base_url = launcher.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:"), base_url
        launcher.send_signal(signal.SIGTERM)
        assert launcher.wait(timeout=60) == 0  # the bound only stops a hang
    finally:
        launcher.kill()
    server_pids = [
        int(pid) for pid in os.listdir("/proc") if pid.isdigit() and str(tmp_path) in _cwd_of(pid)
    ]
    assert not server_pids, f"the LangGraph server outlived its launcher: {server_pids}"


def _cwd_of(pid: str) -> str:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return ""
