"""The official LangGraph JavaScript client (@langchain/langgraph-sdk) works against the reference.

What test_reference_langgraph_sdk.py does with the Python client: selftests/support/js/check.mjs
makes every call the client offers for the reference's assistants, threads, runs and store routes
(apiUrl `<base>/api/ai`, the bearer through defaultHeaders, no retries), each check asserting what
it read back and how many requests it took. The client is the one pinned by
selftests/support/js/package-lock.json, installed with `npm ci` (js_client.py). Without Node.js the
test is skipped, saying so; where Node is required (`ASSISTANT_SELFTEST_NODE=required` or `CI=true`,
as .ci/run sets) it fails instead.
"""

from __future__ import annotations

import json
import os
import time

import js_client
import pytest
from conftest import TOKEN_A

CHECKS = [
    "assistants search, count, get",
    "threads create, get, update, search",
    "threads getState, updateState, getHistory, copy, delete",
    "runs.stream values",
    "runs.stream updates",
    "runs.stream messages",
    "runs.stream messages-tuple",
    "runs.stream custom",
    "runs.stream without streamMode: values alone",
    "runs.joinStream without and with lastEventId",
    "runs.stream cut, then joinStream resumes from lastEventId",
    "runs create, get, list, wait",
    "runs cancel (interrupt, rollback)",
    "store putItem, getItem, searchItems, listNamespaces, deleteItem",
]


def node_required() -> bool:
    return (
        os.environ.get("ASSISTANT_SELFTEST_NODE") == "required"
        or os.environ.get("CI", "").lower() == "true"
    )


def test_the_javascript_client_runs_every_call(reference_server):
    absent = js_client.missing()
    if absent:
        why = f"no {absent} here (apt-get install nodejs npm)"
        if node_required():
            pytest.fail(f"{why}; Node.js is required here (CI)")
        pytest.skip(f"not judged: {why}; CI requires it")
    started = time.perf_counter()
    where, installed = js_client.install()
    took = time.perf_counter() - started
    done = js_client.run_checks(where, f"{reference_server.base_url}/api/ai", TOKEN_A)
    assert TOKEN_A not in done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines, f"check.mjs printed nothing (exit {done.returncode}):\n{done.stderr}"
    result = json.loads(lines[-1])
    failed = {c["name"]: c.get("error") for c in result["checks"] if not c["ok"]}
    assert failed == {}, "\n\n".join(f"{name}:\n{error}" for name, error in failed.items())
    assert done.returncode == 0, done.stderr
    assert result["client"] == "@langchain/langgraph-sdk 1.15.0"
    assert [c["name"] for c in result["checks"]] == CHECKS
    assert result["calls"] == sum(c["calls"] for c in result["checks"]) >= 60
    print(  # shown with -s: the install's time (cold: npm ci ran) and the calls made
        f"\n{result['client']} on node {result['node']}: {len(CHECKS)} checks, "
        f"{result['calls']} requests; npm ci {'ran' if installed else 'not needed'} "
        f"({took:.1f} s), checks {sum(c['ms'] for c in result['checks']) / 1000:.1f} s"
    )
