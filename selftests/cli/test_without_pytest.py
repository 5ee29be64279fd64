"""`assistant-conformance audit` and `replay` judge without pytest: neither imports it (nor its
plugins), so a HAR is judged, and a finding replayed, where only the package and its libraries
are installed, with none of a test run's start-up."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import TOKEN_A
from har_support import exchange, har

from assistant_conformance.proof.suiterun import child_environment

FIXTURES = Path(__file__).resolve().parents[1] / "audit" / "fixtures"
# The command's main, then which of pytest's packages the process imported (a line of JSON).
LOADED = (
    "import json, sys\n"
    "from assistant_conformance.cli import main\n"
    "try:\n"
    "    main(sys.argv[1:])\n"
    "except SystemExit as done:\n"
    "    status = done.code\n"
    "runner = ('pytest', '_pytest', 'pluggy', 'xdist', 'allure_pytest')\n"
    "print(json.dumps([status, sorted(m for m in sys.modules if m.split('.')[0] in runner)]))\n"
)


def loaded(*args: str, env: dict[str, str] | None = None) -> tuple[int, list[str], str]:
    """The command's exit status, the test runner's modules it imported, and its output."""
    done = subprocess.run([sys.executable, "-c", LOADED, *args], capture_output=True, text=True,
                          timeout=180, env=env or child_environment())  # fmt: skip
    assert done.stdout.strip(), done.stderr[-3000:]
    status, modules = json.loads(done.stdout.splitlines()[-1])
    return status, modules, done.stdout + done.stderr


def test_an_audit_imports_no_pytest(tmp_path: Path) -> None:
    har_file = str(FIXTURES / "firefox.har")
    status, modules, said = loaded("audit", har_file, "--report-dir", str(tmp_path / "reports"))
    assert status == 0 and "result: conformant" in said, said
    assert (tmp_path / "reports" / "junit.xml").is_file()  # its own JUnit, as before
    assert modules == [], modules


def test_a_replay_imports_no_pytest(reference_server, tmp_path: Path) -> None:
    """A finding replayed against the reference (sent, judged again, its creations removed)."""
    base = reference_server.base_url
    entry = exchange("POST", "/api/ai/threads/search", 200, body={}, answer=[], token=None,
                     headers={"Authorization": "[REDACTED]"})  # fmt: skip
    entry["request"]["url"] = f"{base}/api/ai/threads/search"
    finding = {"id": "AUTH-INVALID-REJECTED-0a1b2c3d", "requirement": "AUTH-INVALID-REJECTED",
               "verdict": "fail", "expected": "not a 2xx", "actual": "HTTP 200", "seed": 0,
               "test": "tests/scenario/test_auth.py::t", "target": base, "prefix": "",
               "check": {"kind": "status-class", "entry": 0, "classes": [1, 3, 4, 5]},
               "bounds": {"request_timeout": 5, "process_timeout": 10}}  # fmt: skip
    entry.update(_credential="main", _provenance=[])  # the run's main token, as a run writes it
    written = har([entry])
    written["log"]["_finding"] = finding
    (tmp_path / "exchanges").mkdir()
    (tmp_path / "exchanges" / f"{finding['id']}.har").write_text(json.dumps(written))
    env = {**child_environment(), "ASSISTANT_API_TOKEN": TOKEN_A}
    status, modules, said = loaded("replay", str(tmp_path), env=env)
    assert status == 1 and "AUTH-INVALID-REJECTED-0a1b2c3d  still fails" in said, said
    assert modules == [], modules
