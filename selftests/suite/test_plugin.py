"""The suite's plugin: options, harness errors as one line, verdicts from findings."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from assistant_conformance.suite.run.memory import CollectorSchedule

SMOKE_TEST = """
import pytest
from assistant_conformance.suite.judging.findings import expect, expect_status

@pytest.mark.req("AUTH-MISSING-REJECTED", "AUTH-401")
def test_unauthenticated(anonymous_api):
    response = anonymous_api.post("/api/ai/threads/search", json={})
    expect("AUTH-MISSING-REJECTED", not response.is_success, "no 2xx", response, response)
    expect_status("AUTH-401", response, STATUS)
"""


@dataclass
class SmokeRun:
    """A run of SMOKE_TEST in this process (pytester): its exit status and output."""

    returncode: int
    stdout: str
    stderr: str


def run_suite(
    pytester: pytest.Pytester, *args: str, status: int = 401, env: dict[str, str] | None = None
) -> SmokeRun:
    """The plugin's hooks on a one-test suite, run in this process: its state is on the run's
    config (suite/run/state.py), so this process's own run and the one started here share
    nothing."""
    (pytester.path / "test_smoke.py").write_text(SMOKE_TEST.replace("STATUS", str(status)))
    with pytest.MonkeyPatch.context() as patch:
        for name, value in (env or {}).items():
            patch.setenv(name, value)
        run = pytester.runpytest_inprocess(
            "-q", "-p", "no:cacheprovider", "--report-dir", str(pytester.path / "reports"), *args
        )
    return SmokeRun(int(run.ret), str(run.stdout), str(run.stderr))


def verdicts(folder: Path) -> dict[str, str]:
    report = json.loads((folder / "reports" / "conformance.json").read_text())
    return {r["id"]: r["verdict"] for r in report["requirements"]}


def test_embedded_reference_passes(pytester):
    run = run_suite(pytester)
    assert run.returncode == 0, run.stdout
    assert verdicts(pytester.path)["AUTH-401"] == "pass"


def test_failed_should_is_a_warning(pytester):
    run = run_suite(pytester, status=403)
    assert run.returncode == 0, run.stdout
    assert verdicts(pytester.path)["AUTH-401"] == "warn"
    assert "Expected: HTTP 403" in run.stdout


def test_failed_should_fails_under_strict(pytester):
    run = run_suite(pytester, "--strict-conformance", status=403)
    assert run.returncode == 1
    assert verdicts(pytester.path)["AUTH-401"] == "fail"


def test_unreachable_target_is_one_line_harness_error(pytester):
    run = run_suite(pytester, "--base-url", "http://127.0.0.1:9", "--token", "some-secret-token")
    assert run.returncode == 3
    said = run.stdout + run.stderr
    assert "harness error: cannot reach target http://127.0.0.1:9" in said
    assert "some-secret-token" not in said
    # Refused at once, not waited out: the pre-flight's first read met a refused connection (no
    # timeout), and the run ended there, before any test. Its seconds: bench/hostile.py.
    assert "connection refused (nothing listens there)" in said
    assert "test_unauthenticated" not in said and not (pytester.path / "reports").exists()


def test_rejected_token_is_one_line_harness_error(pytester, reference_server):
    run = run_suite(
        pytester, "--base-url", reference_server.base_url, "--token", "wrong-token-1234"
    )
    assert run.returncode == 3
    assert "rejects the token (HTTP 401)" in run.stdout + run.stderr
    assert "wrong-token-1234" not in run.stdout + run.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--base-url", "ftp://x"], "--base-url must start with http:// or https://"),
        (["--base-url", "http://127.0.0.1:9"], "--base-url needs --token"),
        (["--examples", "many"], "--examples expects int, got 'many'"),
    ],
)
def test_bad_option_is_a_usage_error(pytester, args, message):
    run = run_suite(pytester, *args)
    assert run.returncode == 4
    assert message in run.stderr


def test_environment_supplies_options(pytester, reference_server):
    env = {
        "ASSISTANT_API_BASE_URL": reference_server.base_url,
        "ASSISTANT_API_TOKEN": "selftest-token-a",
    }
    run = run_suite(pytester, env=env)
    assert run.returncode == 0, run.stdout
    report = json.loads((pytester.path / "reports" / "conformance.json").read_text())
    assert report["target"] == reference_server.base_url


def test_command_line_wins_over_environment(pytester, reference_server):
    env = {
        "ASSISTANT_API_BASE_URL": "http://127.0.0.1:9",
        "ASSISTANT_API_TOKEN": "selftest-token-a",
    }
    run = run_suite(pytester, "--base-url", reference_server.base_url, env=env)
    assert run.returncode == 0, run.stdout


@pytest.mark.parametrize(
    ("credential", "breaking", "charged"),
    [
        ("Bearer selftest-run-token", True, "ROBUST-BAD-INPUT-4XX"),
        ("Bearer selftest-run-token", False, "STORE-STATUS"),
        ("Bearer someone-elses-token", False, "AUTH-401"),
        (None, False, "AUTH-401"),
    ],
)
def test_a_fault_is_charged_to_what_the_request_should_have_got(credential, breaking, charged):
    """No answer within the bounds: to input that breaks the document, the bad-input requirement
    (a SHOULD); to a request that follows it with the run's credential, the operation's success
    status (a MUST); to a request without one, AUTH-401 (a 401 is what it should get)."""
    import httpx

    from assistant_conformance.report import redact
    from assistant_conformance.suite.http import exchange, observe
    from assistant_conformance.suite.judging import answer_charges, findings

    redact.register("selftest-run-token")
    headers = {"Authorization": credential} if credential else {}
    url = "http://127.0.0.1:9/api/ai/store/items/search"
    request = httpx.Request("POST", url, content=b"[", headers=headers)
    record = findings.TestRecord(frozenset(), strict=False)
    with findings.recording(record):
        try:
            with (
                observe.breaking_input("ROBUST-BAD-INPUT-4XX")
                if breaking
                else contextlib.nullcontext()
            ):
                raise observe.AnswerFault(
                    observe.CUT, "closed", exchange.request_evidence(request, None, {})
                )
        except observe.AnswerFault as fault:
            assert answer_charges.charge_fault(fault).endswith(f"(charged to {charged})")
    assert [f.requirement for f in record.findings] == [charged]


OTHER_CONFTEST = """
import gc

SEEN = [gc.isenabled()]


def pytest_configure(config):
    SEEN.append(gc.isenabled())
"""
OTHER_TEST = """
import gc
import os

from conftest import SEEN


def test_the_collector_is_as_it_was():
    assert SEEN == [True, True] and gc.isenabled()  # at start-up: imported, configured
    assert gc.get_freeze_count() == 0  # nothing frozen after the collection


def test_the_run_is_not_spread_over_workers():
    assert "PYTEST_XDIST_WORKER" not in os.environ
"""


def test_another_projects_pytest_keeps_its_collector(tmp_path: Path) -> None:
    """The package installed, another project's tests: the plugin leaves the garbage collector as
    it was (only a run of the suite turns it off through start-up: suite/run/memory.py), and the
    run in one process (only a run of the suite asks pytest-xdist for its workers)."""
    (tmp_path / "conftest.py").write_text(OTHER_CONFTEST)
    (tmp_path / "test_other.py").write_text(OTHER_TEST)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_other.py"]
    as_a_user = ("ASSISTANT_API_CONCURRENCY", "PYTEST_XDIST_WORKER")  # (the self-tests' own)
    env = {k: v for k, v in os.environ.items() if k not in as_a_user}
    run = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]


def test_a_run_of_the_suite_has_the_collector_off_until_its_collection() -> None:
    schedule = CollectorSchedule()
    try:
        assert not gc.isenabled()
        collection = schedule.pytest_collection()
        next(collection)  # the collection starts
        assert gc.isenabled()
        collection.close()
        gc.disable()
    finally:
        schedule.pytest_unconfigure()
    assert gc.isenabled()  # as it was at configure
