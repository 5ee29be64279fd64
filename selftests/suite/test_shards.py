"""A run split in 3 shards and merged gives what the whole run gives: the same verdict for
every requirement, the same findings (their stable IDs: requirement, operation, check, seed) and
the same exit status; against the reference and five mutants, one per family. Where a polling
loop waited out its bound, the run's later loops of its kind are not judged (flows.Waits): which
test pays the wait depends on the order, and each shard is a run that pays it once, so there the
requirements with findings must agree, not their IDs. A merge refuses, in
one line and exit 4, shards that are not one run's. The split itself is balanced by the shipped
durations (the measured balance is bench/shards.py's).
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from assistant_conformance.proof import mutants
from assistant_conformance.proof.connectors import MutantConnector
from assistant_conformance.proof.suiterun import child_environment
from assistant_conformance.reference.connectors import ReferenceConnector
from assistant_conformance.suite.config import shards

pytestmark = pytest.mark.xdist_group("shards")

SHORT = ["--request-timeout=3", "--process-timeout=3"]
TARGETS = {
    "reference": [],
    "create-thread-200": list(mutants.selection("create-thread-200")),  # property
    "message-create-200": ["tests/scenario/test_conversations.py"],  # statuses
    "any-token-accepted": ["tests/scenario/test_auth.py", "-k", "threads"],  # authentication
    "join-ignores-last-event-id": ["tests/scenario/test_streams.py"],  # stream resumption
    "process-never-starts": ["tests/scenario/test_knowledge.py"],  # knowledge-base processing
}
WAITED_OUT = {"process-never-starts"}  # its processing polls wait out their bound


@pytest.fixture(scope="module")
def tokens() -> list[str]:
    return [secrets.token_urlsafe(24), secrets.token_urlsafe(24)]


def suite(*args: str, tokens: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    clean = child_environment()
    env = {**clean, "ASSISTANT_API_TOKEN": tokens[0], "ASSISTANT_API_ALT_TOKEN": tokens[1]}
    return subprocess.run([sys.executable, "-m", "assistant_conformance", *args], env=env,
                          cwd=cwd, capture_output=True, text=True, timeout=900)  # fmt: skip


def outcome(folder: Path) -> tuple[dict[str, str], set[str], int]:
    doc = json.loads((folder / "conformance.json").read_text())
    verdicts = {r["id"]: r["verdict"] for r in doc["requirements"]}
    found = {p.stem for p in (folder / "exchanges").glob("*.har")}
    return verdicts, found, doc["result"]["exit_status"]


@pytest.mark.parametrize("target", TARGETS)
def test_three_shards_merged_equal_the_whole_run(target, tokens, tmp_path):
    given = tuple(tokens)
    connector = ReferenceConnector(tokens=given) if target == "reference" else None
    server = (connector or MutantConnector(target, given)).start(tmp_path / "target")
    try:
        common = [f"--base-url={server.base_url}", *SHORT]
        whole = suite("run", *common, f"--report-dir={tmp_path / 'whole'}", "--",
                      *TARGETS[target], tokens=tokens, cwd=tmp_path)  # fmt: skip
        folders = [tmp_path / f"shard-{i}" for i in (1, 2, 3)]
        for i, folder in enumerate(folders, 1):
            ran = suite("run", *common, f"--shard={i}/3", f"--report-dir={folder}", "--",
                        *TARGETS[target], tokens=tokens, cwd=tmp_path)  # fmt: skip
            assert ran.returncode in (0, 1, 3), ran.stdout[-2000:]
    finally:
        server.stop()
    merged = suite("merge", *map(str, folders), "--report-dir", str(tmp_path / "merged"),
                   tokens=tokens, cwd=tmp_path)  # fmt: skip
    assert whole.returncode in (0, 1), whole.stdout[-2000:]
    assert merged.returncode == whole.returncode, merged.stdout + merged.stderr
    verdicts, found, status = outcome(tmp_path / "whole")
    merged_verdicts, merged_found, merged_status = outcome(tmp_path / "merged")
    assert merged_status == status == whole.returncode
    assert merged_verdicts == verdicts
    if target in WAITED_OUT:
        assert {i.rsplit("-", 1)[0] for i in merged_found} == {i.rsplit("-", 1)[0] for i in found}
    else:
        assert merged_found == found
    if target != "reference":
        assert found, "the mutant was not caught"


def test_a_merge_refuses_what_is_not_one_runs_shards(tokens, tmp_path):
    folders = {}
    for name, args in {"1": ["--shard=1/2"], "2": ["--shard=2/2"],
                       "other-seed": ["--shard=2/2", "--seed=7"]}.items():  # fmt: skip
        folders[name] = tmp_path / name
        ran = suite("run", *args, f"--report-dir={folders[name]}", "--",
                    "tests/scenario/test_store.py", tokens=tokens, cwd=tmp_path)  # fmt: skip
        assert ran.returncode == 0, ran.stdout[-2000:]
    (tmp_path / "unfinished").mkdir()
    cases = {
        "shard(s) 2/2 missing": [folders["1"]],
        "shard 1/2 given twice": [folders["1"], folders["1"], folders["2"]],
        "another seed": [folders["1"], folders["other-seed"]],
        "not the report folder of a finished run": [folders["1"], tmp_path / "unfinished"],
    }
    for said, given in cases.items():
        ran = suite("merge", *map(str, given), "--report-dir", str(tmp_path / "out"),
                    tokens=tokens, cwd=tmp_path)  # fmt: skip
        assert ran.returncode == 4, (said, ran.stdout, ran.stderr)
        assert said in ran.stderr and len(ran.stderr.strip().splitlines()) == 1, ran.stderr


@pytest.mark.parametrize("count", [2, 3, 4])
def test_the_split_is_whole_disjoint_and_balanced_by_the_shipped_durations(count):
    tests = list(shards.durations(10))
    split = shards.split(tests, count, 10)
    assert sorted(t for share in split for t in share) == sorted(tests)
    cost = shards.durations(10)
    loads = [sum(cost[t] for t in share) for share in split]
    assert max(loads) <= 1.3 * (sum(loads) / count), loads
    assert shards.split(list(reversed(tests)), count, 10) == split  # the order given is no matter


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "1/0", ""])
def test_a_bad_shard_is_refused(text):
    with pytest.raises(ValueError, match="--shard expects I/N"):
        shards.Shard.parse(text)
