"""A tiny conformance suite run through the plugin in a subprocess, for the report self-tests.

Four tests: a MUST and a SHOULD whose expected statuses the caller picks (so the same suite
passes, fails a MUST or warns a SHOULD against the reference), one that passes, one that skips,
and a chat-kit test (a capability group). The reference server runs with distinctive tokens, so
a test can look for them in every file the run writes.
"""

from __future__ import annotations

from pathlib import Path

from assistant_conformance.proof.suiterun import SuiteOptions, SuiteResult, run_suite

TOKEN = "tok-Distinctive-Main-7f3a9c1e"
ALT_TOKEN = "tok-Distinctive-Alt-52b8d0aa"

SUITE = """
import pytest
from assistant_conformance.suite.judging.findings import expect, expect_status

@pytest.mark.req("AUTH-MISSING-REJECTED")
def test_unauthenticated_is_rejected(anonymous_api):
    response = anonymous_api.post("/api/ai/threads/search", json={})
    expect("AUTH-MISSING-REJECTED", not response.is_success, "no 2xx", response, response)

@pytest.mark.req("THR-STATUS")
def test_thread_search_status(api):
    response = api.post("/api/ai/threads/search", json={"limit": 1})
    expect_status("THR-STATUS", response, MUST_STATUS)

@pytest.mark.req("AUTH-401")
def test_missing_token_is_401(anonymous_api):
    response = anonymous_api.post("/api/ai/threads/search", json={})
    expect_status("AUTH-401", response, SHOULD_STATUS)

@pytest.mark.req("ROBUST-UNKNOWN-ID-404")
def test_not_applicable_here():
    pytest.skip("not applicable to this target")

@pytest.mark.req("CHATKIT-STATUS")
def test_chatkit_session(api):
    response = api.post("/api/ai/v1/chatkit/sessions", json={})
    expect_status("CHATKIT-STATUS", response, 201)
"""


Run = SuiteResult  # what a run of the tiny suite gives


def run_tiny_suite(
    workdir: Path, base_url: str, *args: str, must_status: int = 200, should_status: int = 401
) -> SuiteResult:
    workdir.mkdir(parents=True, exist_ok=True)
    suite = SUITE.replace("MUST_STATUS", str(must_status))
    (workdir / "test_tiny.py").write_text(suite.replace("SHOULD_STATUS", str(should_status)))
    report_dir = workdir / "reports"
    more = (
        "-p",
        "no:cacheprovider",
        f"--base-url={base_url}",
        f"--token={TOKEN}",
        f"--alt-token={ALT_TOKEN}",
        f"--junitxml={report_dir / 'junit.xml'}",  # not the suite's checks: no default places
        f"--alluredir={report_dir / 'allure-results'}",
    )
    options = SuiteOptions(report_dir, (*more, *args), timeout=300, checkout=workdir)
    return run_suite(None, options)
