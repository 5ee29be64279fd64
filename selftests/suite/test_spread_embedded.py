"""A run spread over workers against the embedded reference: one reference for the run, launched by
the controller (suite/run/shared_reference.py), none by the workers; and the Allure results it
leaves: a container per fixture a test used, none for a parametrize argument (which names no
test). Its workers forked from one process that imported the suite once
(suite/run/forked_workers.py), plain popen workers where the user chose the spread; the stand-in's
side: the worker's status, a crash, the zygote ended with its workers, and python itself where the
zygote is gone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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


POSIX = pytest.mark.skipif(not hasattr(os, "fork"), reason="forked workers are POSIX only")

# A plugin each process of the run loads (-p): the controller writes its pid, each worker its pid
# and its parent's.
PARENTS = """
import os

def pytest_configure(config):
    name = f"worker-{os.getpid()}" if hasattr(config, "workerinput") else "controller"
    folder = os.environ["SELFTEST_PARENTS_DIR"]
    with open(os.path.join(folder, name), "w") as said:
        said.write(f"{os.getpid()} {os.getppid()}")
"""


def parents_in_a_spread_run(folder: Path, *args: str) -> tuple[int, list[int]]:
    """The controller's pid and each worker's parent, in a spread run of two workers."""
    (folder / "plugin").mkdir()
    (folder / "plugin" / "parents_of_workers.py").write_text(PARENTS)
    said = folder / "said"
    said.mkdir()
    env = {
        "PYTHONPATH": str(folder / "plugin"),
        "SELFTEST_PARENTS_DIR": str(said),
        "ASSISTANT_API_CONCURRENCY": "2",
    }
    run_args = ("-p", "parents_of_workers", "tests/scenario/test_store.py", *args)
    log = folder / "run.log"
    options = SuiteOptions(folder / "reports", run_args, log, timeout=300, env=env, quiet=False)
    run = run_suite(None, options)
    assert run.returncode == 0, run.output
    controller = int((said / "controller").read_text().split()[0])
    workers = [int(p.read_text().split()[1]) for p in said.glob("worker-*")]
    assert len(workers) == 2, log.read_text()
    return controller, workers


@POSIX
def test_the_workers_of_a_spread_run_are_forked(tmp_path: Path) -> None:
    controller, parents = parents_in_a_spread_run(tmp_path)
    assert controller not in parents  # a popen worker's parent is the controller
    assert len(set(parents)) == 1  # one zygote, forked by the controller


@POSIX
def test_the_users_own_dealing_gets_popen_workers(tmp_path: Path) -> None:
    controller, parents = parents_in_a_spread_run(tmp_path, "--dist=load")
    assert parents == [controller, controller]


# Runs in a process of its own (a fork keeps only the calling thread): a zygote, a stand-in run
# as execnet runs it with `-u -c CODE`, what it printed and its status; then the same once the
# zygote is ended (the stand-in then starts python itself).
STANDIN = """
import shlex, subprocess, sys
from assistant_conformance.suite.run.forked_workers import Zygote

zygote = Zygote.start()
python = shlex.split(zygote.spec().split("python=", 1)[1])
code = sys.argv[1]
first = subprocess.run([*python, "-u", "-c", code], capture_output=True, text=True, timeout=120)
zygote.stop()
then = subprocess.run([*python, "-u", "-c", code], capture_output=True, text=True, timeout=120)
print(zygote.pid, first.returncode, first.stdout.strip(), then.returncode, then.stdout.strip())
"""


def through_a_standin(code: str) -> list[str]:
    ran = subprocess.run(
        [sys.executable, "-c", STANDIN, code], capture_output=True, text=True, timeout=300
    )
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.split()


@POSIX
def test_the_standin_ends_with_the_forked_workers_status() -> None:
    said = through_a_standin("import os, sys; print(os.getppid()); sys.exit(3)")
    zygote, status, parent, status_then, parent_then = said
    assert (status, parent) == ("3", zygote)  # the zygote's child
    assert status_then == "3" and parent_then != zygote  # python itself


@POSIX
def test_a_worker_killed_ends_its_standin_so() -> None:
    said = through_a_standin("import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert said[1:] == [str(-9), str(-9)]


@POSIX
def test_the_zygote_ends_the_workers_still_running() -> None:
    """The stand-in of a worker that would never end: started, the zygote stopped (as at the
    run's end), the worker is gone and the stand-in ends."""
    script = """
import shlex, subprocess, os
from assistant_conformance.suite.run.forked_workers import Zygote

zygote = Zygote.start()
python = shlex.split(zygote.spec().split("python=", 1)[1])
code = "import os, sys; print(os.getpid(), flush=True); sys.stdin.read()"
pipe = subprocess.PIPE
standin = subprocess.Popen([*python, "-u", "-c", code], stdin=pipe, stdout=pipe)
worker = int(standin.stdout.readline())
zygote.stop()
stat = f"/proc/{worker}/stat"
print(standin.wait(timeout=120), os.path.exists(stat) and open(stat).read().split()[2])
"""
    ran = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert ran.returncode == 0, ran.stderr
    status, worker = ran.stdout.split()
    assert status == "1"  # no status came: the zygote ended it
    assert worker in ("False", "Z")  # gone (or a zombie not yet reaped by init)
