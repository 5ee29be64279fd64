"""`assistant-conformance audit` judges recorded exchanges it did not send.

- a file that is not a HAR, or is cut short, is refused in one line, exit 4, nothing written;
- the same traffic saved as a browser saves it (tokens in the clear, no custom fields) is judged
  as the proxy judged it, but how each stream stopped (the file does not say): untested; no
  token in any report;
- a server mounted elsewhere (`--base-path`): the same verdicts; without it nothing is judged
  (exit 3, said in one line);
- a run's own exchanges (reports/exchanges/*.har of runs against mutants): the audit gives the
  verdicts the run gave for what they exercised, or says why traffic cannot judge one (untested).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph_sdk")
from audit_support import audited, client_traffic, upstream_of, verdicts
from safety_support import ALT_TOKEN, TOKEN, serve

from assistant_conformance.audit.proxy import Proxy
from assistant_conformance.audit.session import HAR_FILE
from assistant_conformance.cli import command
from assistant_conformance.proof.connectors import MutantConnector
from assistant_conformance.proof.suiterun import child_environment

pytestmark = pytest.mark.xdist_group("audit")
ALONE = "not judgeable from traffic: "


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """Client traffic against the reference, as the proxy recorded it, and its verdicts."""
    workdir = tmp_path_factory.mktemp("recorded")
    with serve(upstream_of("reference", workdir)) as upstream:
        proxy = Proxy(upstream, workdir / "live", say=lambda _: None)
        with serve(proxy) as base:
            client_traffic(base)
        live = proxy.finish()
    return workdir / "live" / HAR_FILE, {rid: r.verdict for rid, r in live.requirements.items()}


def rewritten(har: Path, into: Path, change: Any) -> Path:
    document = json.loads(har.read_text())
    for entry in document["log"]["entries"]:
        change(entry)
    into.write_text(json.dumps(document))
    return into


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(None, id="truncated"),
        pytest.param(b"not json at all", id="not-json"),
        pytest.param(b'{"log": {"entries": [{"request": {}}]}}', id="json-not-har"),
        pytest.param(b"\x1f\x8b\x08\x00\xff\xfe binary", id="binary"),
    ],
)
def test_a_file_that_is_not_a_har_is_one_line_and_exit_4(
    content: bytes | None, recorded, tmp_path: Path, capsys
) -> None:
    bad = tmp_path / "bad.har"
    whole = recorded[0].read_bytes()
    bad.write_bytes(content if content is not None else whole[: len(whole) // 2])
    code = command.exit_status(
        ["audit", str(recorded[0]), str(bad), "--report-dir", str(tmp_path / "report")]
    )
    said = capsys.readouterr()
    assert code == 4
    assert len(said.err.strip().splitlines()) == 1 and str(bad) in said.err, said.err
    assert "Traceback" not in said.err and not (tmp_path / "report").exists()


def test_a_browser_har_is_judged_as_the_proxy_judged_it(recorded, tmp_path: Path) -> None:
    har, live = recorded
    tokens = {"credential-1": f"Bearer {TOKEN}", "credential-2": "Bearer not-a-token-at-all"}

    def as_a_browser_saves_it(entry: dict[str, Any]) -> None:
        label = entry.pop("_principal")
        for name in [k for k in entry if k.startswith("_")]:
            del entry[name]
        for header in entry["request"]["headers"]:
            if header["name"].lower() == "authorization" and label in tokens:
                header["value"] = tokens[label]

    browser = rewritten(har, tmp_path / "browser.har", as_a_browser_saves_it)
    assert TOKEN in browser.read_text()
    code, document = audited([browser], tmp_path / "report")
    found = verdicts(document)
    assert code == 0
    assert found["RUN-STREAM-ENDS"] == "untested" and live["RUN-STREAM-ENDS"] == "pass"
    assert {k: v for k, v in found.items() if k != "RUN-STREAM-ENDS"} == {
        k: v for k, v in live.items() if k != "RUN-STREAM-ENDS"
    }
    for path in (tmp_path / "report").iterdir():
        assert TOKEN not in path.read_text(), path


def test_a_server_mounted_elsewhere_is_read_with_its_base_path(
    recorded, tmp_path: Path, capsys
) -> None:
    har, live = recorded

    def at_the_root(entry: dict[str, Any]) -> None:
        entry["request"]["url"] = entry["request"]["url"].replace("/api/ai/", "/")

    moved = rewritten(har, tmp_path / "root.har", at_the_root)
    code = command.exit_status(["audit", str(moved), "--report-dir", str(tmp_path / "unread")])
    assert code == 3
    assert "nothing was judged" in capsys.readouterr().out
    code, document = audited([moved], tmp_path / "report", "--base-path", "/")
    assert code == 0 and verdicts(document) == live


# A run's exchanges: a mutant, and the checks that catch it (a module, narrowed).
RUNS = {
    "deleted-thread-readable": ["tests/scenario/test_threads.py", "-k", "deleted"],
    "conversation-patch-not-persisted": ["tests/scenario/test_conversations.py", "-k", "patch"],
    "join-ignores-last-event-id": ["tests/scenario/test_streams.py", "-k", "join_after"],
}


@pytest.mark.parametrize("mutant", RUNS)
def test_a_runs_own_exchanges_are_audited_to_the_runs_verdicts(mutant: str, tmp_path: Path):
    server = MutantConnector(mutant, (TOKEN, ALT_TOKEN)).start(tmp_path / "mutant")
    report = tmp_path / "run"
    clean = child_environment()
    env = {**clean, "ASSISTANT_API_TOKEN": TOKEN, "ASSISTANT_API_ALT_TOKEN": ALT_TOKEN}
    try:
        command = [sys.executable, "-m", "assistant_conformance", "run",
                   f"--base-url={server.base_url}", f"--report-dir={report}",
                   "--request-timeout=5", "--process-timeout=10", "--", *RUNS[mutant]]  # fmt: skip
        ran = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True,
                             timeout=600)  # fmt: skip
    finally:
        server.stop()
    assert ran.returncode in (0, 1), ran.stdout[-3000:]
    run = verdicts(json.loads((report / "conformance.json").read_text()))
    hars = sorted((report / "exchanges").glob("*.har"))
    kept = {json.loads(h.read_text())["log"]["_finding"]["requirement"] for h in hars}
    code, document = audited(hars, tmp_path / "audit")
    found = {r["id"]: r for r in document["requirements"]}
    broken = {rid for rid, r in found.items() if r["verdict"] in ("fail", "warn")}
    assert broken <= {rid for rid, verdict in run.items() if verdict in ("fail", "warn")}
    assert kept & broken, (kept, broken)  # the mutant's finding, judged from its exchanges
    for rid in kept:  # the run's verdict, or untested saying why
        judged = found[rid]["verdict"] == run[rid]
        assert judged or found[rid]["reason"].startswith(ALONE), (rid, found[rid], run[rid])
    assert code == ran.returncode
