"""Installed, not cloned: the wheel holds every file a checkout run reads, and a fresh virtualenv
holding only the wheel runs the suite from an empty folder (the checkout neither the working
directory nor on sys.path) with the checkout's verdicts, against the reference and against a
mutant by URL, and the matrix. (The GitHub Action, which installs from its own folder, is
selftests/cli/test_action.py's.)
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import httpx
import pytest
from conftest import TOKEN_A, TOKEN_B
from safety_support import ROOT

from assistant_conformance.proof import mutants

pytestmark = pytest.mark.xdist_group("installed")
MUTANT = "knowledges-prefix-diverges"  # a MUST broken: exit 1; its selection names tests/...
SETTINGS_OF_THE_CHECKOUT = {"pyproject.toml", "tox.ini", "conftest.py"}  # where pytest looks
AUDIT = """
import json, os, sys
root, seen = os.path.realpath(sys.argv[1]), set()
def record(event, args):
    mode = args[1] if len(args) > 1 and isinstance(args[1], str) else "r"
    if event == "open" and isinstance(args[0], str) and not set(mode) & set("wax+"):
        path = os.path.realpath(args[0])
        if path.startswith(root + os.sep) and os.path.isfile(path):
            seen.add(os.path.relpath(path, root))
sys.addaudithook(record)
import pytest
status = pytest.main(sys.argv[3:])
json.dump(sorted(seen), open(sys.argv[2], "w"))
sys.exit(status)
"""


@dataclass
class Venv:
    path: Path
    wheel: Path
    seconds: float  # to make it and install the wheel

    def bin(self, name: str) -> str:
        return str(self.path / "bin" / name)

    def env(self) -> dict[str, str]:
        """Only the venv: no PYTHONPATH, no ASSISTANT_API_* settings of ours."""
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("ASSISTANT_API_", "PY"))}
        return {**clean, "PATH": f"{self.path / 'bin'}:{os.environ['PATH']}"}


@cache
def built(workdir: Path) -> Venv:
    wheels = workdir / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (wheel,) = wheels.glob("assistant_conformance-*.whl")
    started = time.monotonic()
    venv = workdir / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", str(wheel)],
        check=True, capture_output=True, timeout=900,
    )  # fmt: skip
    return Venv(venv, wheel, time.monotonic() - started)


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    return built(tmp_path_factory.mktemp("installed"))


def verdicts(report_dir: Path) -> dict[str, str]:
    document = json.loads((report_dir / "conformance.json").read_text(encoding="utf-8"))
    return {r["id"]: r["verdict"] for r in document["requirements"]}


@pytest.fixture(scope="module")
def checkout_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], list[str]]:
    """The whole suite from the checkout (pytest), with every file of the checkout it opened."""
    out = tmp_path_factory.mktemp("checkout")
    opened = out / "opened.json"
    command = [sys.executable, "-c", AUDIT, str(ROOT), str(opened), "-q", f"--report-dir={out}"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]
    return verdicts(out), json.loads(opened.read_text())


def in_wheel(checkout_path: str) -> str | None:
    """Where a file of the checkout is in the wheel (None: none is meant to be)."""
    first, _, rest = checkout_path.partition("/")
    if first in ("spec", "tests"):
        return f"assistant_conformance/{first}/{rest}"
    if checkout_path.startswith("src/assistant_conformance/"):
        return checkout_path.removeprefix("src/")
    return None


def test_the_wheel_holds_every_file_a_checkout_run_reads(venv: Venv, checkout_run) -> None:
    names = set(zipfile.ZipFile(venv.wheel).namelist())
    tracked = subprocess.run(
        ["git", "ls-files", "spec", "tests", "src/assistant_conformance"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    _, opened = checkout_run
    read = [
        p
        for p in opened
        if "__pycache__" not in p and not p.startswith((".venv", "reports", ".hypothesis"))
    ]  # fmt: skip (what the run made itself: its caches, its reports)
    assert {p for p in read if in_wheel(p) is None} <= SETTINGS_OF_THE_CHECKOUT, read
    assert {"spec/openapi.yaml", "spec/requirements.yaml", "spec/interface.md"} <= set(read)
    missing = [p for p in [*tracked, *read] if (w := in_wheel(p)) and w not in names]
    assert missing == []


def test_the_packaged_pytest_settings_are_the_checkouts() -> None:
    import configparser
    import tomllib

    checkout = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]
    packaged = configparser.ConfigParser()
    packaged.read(ROOT / "src/assistant_conformance/suite/pytest.ini")
    ini = checkout["ini_options"]
    assert packaged["pytest"]["addopts"].split() == ini["addopts"]
    assert packaged["pytest"]["minversion"] == ini["minversion"]
    assert packaged.getboolean("pytest", "xfail_strict") == ini["xfail_strict"]
    assert packaged["pytest"]["filterwarnings"].split() == ini["filterwarnings"]
    assert set(ini) - set(packaged["pytest"]) == {"testpaths", "cache_dir"}  # run gives them


def run_installed(venv: Venv, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [venv.bin("assistant-conformance"), "run", *args]
    return subprocess.run(
        command, cwd=cwd, env=venv.env(), capture_output=True, text=True, timeout=600
    )


def test_a_fresh_virtualenv_runs_the_suite_from_an_empty_folder(
    venv: Venv, checkout_run, tmp_path: Path
) -> None:
    where = subprocess.run(
        [venv.bin("python"), "-c", "import assistant_conformance as a, sys; print(a.__file__);"
         "print(any(p.startswith(sys.argv[1]) for p in sys.path))", str(ROOT)],
        cwd=tmp_path, env=venv.env(), capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert where[0].startswith(str(venv.path)) and where[1] == "False"
    version = subprocess.run(
        [venv.bin("assistant-conformance"), "--version"], env=venv.env(), capture_output=True,
        text=True, check=True,
    ).stdout  # fmt: skip
    assert version.startswith("assistant-conformance ") and "openapi.yaml sha256" in version
    done = run_installed(venv, tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    checkout_verdicts, _ = checkout_run
    assert verdicts(tmp_path / "reports") == checkout_verdicts
    assert (tmp_path / "reports" / "badge.json").exists()


@pytest.fixture
def mutant_server(venv: Venv, tmp_path: Path) -> Iterator[str]:
    """The mutant, served by the installed package's `assistant-reference` (by URL)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [venv.bin("assistant-reference"), "--mutant", MUTANT, "--port", str(port),
               "--token", TOKEN_A, "--token", TOKEN_B, "--db", str(tmp_path / "m.db")]  # fmt: skip
    server = subprocess.Popen(command, env=venv.env(), stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(f"{url}/api/ai/threads/x", timeout=1)
            break
        except httpx.HTTPError:
            time.sleep(0.2)
    yield url
    server.terminate()
    server.wait(timeout=10)


def test_installed_and_checkout_give_a_mutant_the_same_verdicts(
    venv: Venv, mutant_server: str, tmp_path: Path
) -> None:
    target = [f"--base-url={mutant_server}", f"--token={TOKEN_A}", f"--alt-token={TOKEN_B}"]
    selection = list(mutants.selection(MUTANT))
    installed = run_installed(venv, tmp_path, *target, "--", *selection)
    assert installed.returncode == 1, installed.stdout[-3000:]
    checkout = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *target, f"--report-dir={tmp_path / 'checkout'}",
         *selection], cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert checkout.returncode == 1, checkout.stdout[-3000:]
    assert verdicts(tmp_path / "reports") == verdicts(tmp_path / "checkout")
    assert verdicts(tmp_path / "reports")["KB-PREFIXES-IDENTICAL"] == "fail"


def test_the_matrix_runs_from_the_installed_package(venv: Venv, tmp_path: Path) -> None:
    """Local kinds (the reference, a mutant) started by the installed package, one grid."""
    plan = tmp_path / "targets.yaml"
    plan.write_text(
        "seed: 0\njobs: 2\nrequirements: [KB-PREFIXES-IDENTICAL, THR-STATUS]\ntargets:\n"
        "  - {name: reference, kind: reference}\n"
        f"  - {{name: broken, kind: mutant, mutant: {MUTANT}}}\n"
    )
    done = subprocess.run(
        [venv.bin("assistant-conformance"), "matrix", str(plan), "--report-dir", "out"],
        cwd=tmp_path, env=venv.env(), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    grid = json.loads((tmp_path / "out" / "matrix.json").read_text())
    cells = {t["name"]: t["status"] for t in grid["targets"]}
    assert cells == {"reference": "completed", "broken": "completed"}, cells
