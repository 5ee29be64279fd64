"""A run spread over workers against the embedded reference: one reference for the run, launched by
the controller (suite/run/shared_reference.py), none by the workers; and the Allure results it
leaves: a container per fixture a test used, none for a parametrize argument (which names no
test)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant_conformance.proof.suiterun import SuiteOptions, run_suite

MODULES = ("tests/scenario/test_store.py", "tests/scenario/test_threads.py")


@pytest.fixture(scope="module")
def spread(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's folder: its log, its reports and pytest's temporary folder."""
    folder = tmp_path_factory.mktemp("spread")
    args = (*MODULES, f"--basetemp={folder / 'tmp'}")
    workers = {"ASSISTANT_API_CONCURRENCY": "2"}
    log = folder / "run.log"
    options = SuiteOptions(folder / "reports", args, log, timeout=300, env=workers, quiet=False)
    run = run_suite(None, options)
    assert run.returncode == 0, run.output
    return folder


def test_one_reference_for_the_run_launched_by_the_controller(spread: Path) -> None:
    log = (spread / "run.log").read_text()
    assert "created: 2/2 workers" in log
    assert (spread / "tmp" / "target0" / "reference.db").is_file()
    assert not list((spread / "tmp").glob("popen-gw*/**/reference.db"))


def test_allure_keeps_fixture_containers_and_none_for_arguments(spread: Path) -> None:
    results = spread / "reports" / "allure-results"
    tests = {json.loads(p.read_text())["uuid"] for p in results.glob("*-result.json")}
    containers = [json.loads(p.read_text()) for p in results.glob("*-container.json")]
    fixtures = {before["name"] for c in containers for before in c.get("befores", [])}
    assert "api" in fixtures  # a fixture the tests use
    assert not fixtures & {"path", "body"}  # test_store's parametrize arguments
    assert all(c.get("children") and set(c["children"]) <= tests for c in containers)
