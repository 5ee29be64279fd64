"""The GitHub Action (action.yml) run as a runner runs it, nothing set up before it: each `run:`
step with its shell, its `${{ }}` filled in, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_ENV and
GITHUB_PATH as files, in a job whose only python3 is the system's externally managed one. The
suite installs into an environment of its own, runs against the reference and sets the outputs; a
second use in the same job reuses the install, quietly; a Python set up before the step keeps its
packages; a Python too old or an install that cannot finish fails in one line with exit-code 3.
No token shows anywhere.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import TOKEN_A, TOKEN_B
from safety_support import ROOT

pytestmark = pytest.mark.xdist_group("action")

SYSTEM_PYTHON = Path("/usr/bin/python3")  # Debian's and Ubuntu's, marked EXTERNALLY-MANAGED
SELECTION = '-k "RUN-JOIN-RESUME or THR-STATUS"'
REPORT_FILES = ("conformance.json", "conformance.md", "conformance.html", "junit.xml", "badge.json")
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
ASKS = """
import os, sys, sysconfig
managed = os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))
print(sys.version_info >= (3, 11), managed, sys.prefix != sys.base_prefix)
"""


def why_not_externally_managed(python: Path) -> str | None:
    """None when `python` is a system Python (3.11+) that pip refuses to install into."""
    if not python.exists():
        return f"no {python} on this machine"
    said = subprocess.run([str(python), "-I", "-c", ASKS], capture_output=True, text=True)
    recent, managed, in_venv = said.stdout.split()
    if recent != "True":
        return f"{python} is older than 3.11"
    if managed != "True" or in_venv == "True":
        return f"{python} is not externally managed (no EXTERNALLY-MANAGED marker)"
    return None


def the_action(tmp_path: Path) -> Path:
    """The working tree's action as a runner downloads it (its files, not the checkout's caches,
    venvs or build folders): installing it builds in there, not in the shared checkout."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split("\0")  # fmt: skip
    action = tmp_path / "_actions" / "assistant-conformance"
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (action / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, action / name)
    return action


@dataclass
class Used:
    """One use of the action: its outputs, each step's exit status and log, the summary."""

    outputs: dict[str, str]
    statuses: dict[str, int] = field(default_factory=dict)
    logs: dict[str, str] = field(default_factory=dict)
    summary: str = ""


@dataclass
class Job:
    """One job on a runner: its temp folder, workspace, environment and PATH."""

    root: Path
    path: str
    extra_env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.used = 0
        self.temp, self.workspace = self.root / "runner-temp", self.root / "workspace"
        self.github_env, self.github_path = self.root / "github_env", self.root / "github_path"
        for folder in (self.temp, self.workspace):
            folder.mkdir(parents=True)
        for file in (self.github_env, self.github_path):
            file.touch()

    def env(self) -> dict[str, str]:
        """The runner's own: no virtualenv, no pyenv, no ASSISTANT_API_* or PYTHON* of ours."""
        dropped = ("ASSISTANT_API_", "PY", "VIRTUAL_ENV", "PIP_BREAK", "PIP_USER", "PIP_TARGET")
        clean = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
        return {**clean, **self.extra_env, "PATH": self.path, "RUNNER_TEMP": str(self.temp),
                "GITHUB_WORKSPACE": str(self.workspace), "GITHUB_ENV": str(self.github_env),
                "GITHUB_PATH": str(self.github_path), "CI": "true",
                "GITHUB_ACTIONS": "true"}  # fmt: skip

    def uses(self, action: Path, given: dict[str, str]) -> Used:
        """`uses:` the composite action at `action` with `given` inputs; stops at a failed step."""
        spec = yaml.safe_load((action / "action.yml").read_text())
        assert spec["runs"]["using"] == "composite"
        inputs = {name: str(i.get("default", "")) for name, i in spec["inputs"].items()}
        inputs.update(given)
        github = {
            "action_path": str(action),
            "action_ref": "v0.1.0",
            "workspace": str(self.workspace),
        }
        contexts: dict[str, dict[str, Any]] = {
            "inputs": inputs, "github": github, "runner": {"temp": str(self.temp)}, "steps": {},
        }  # fmt: skip
        used, self.used = Used(outputs={}), self.used + 1
        files = self.root / f"use-{self.used}"
        files.mkdir()
        for number, step in enumerate(spec["runs"]["steps"]):
            assert "uses" not in step and "if" not in step, "a step this runner does not run"
            assert step["shell"] == "bash", step["shell"]
            name = step.get("id", f"step{number}")
            outputs, summary = files / f"output-{name}", files / f"summary-{name}.md"
            env = {**self.env(), "GITHUB_OUTPUT": str(outputs), "GITHUB_STEP_SUMMARY": str(summary),
                   "GITHUB_ACTION_PATH": str(action)}  # fmt: skip
            env.update({k: filled(str(v), contexts) for k, v in step.get("env", {}).items()})
            script = files / f"{name}.sh"
            script.write_text(filled(step["run"], contexts))
            done = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                cwd=self.workspace, env=env, capture_output=True, text=True, timeout=900,
            )  # fmt: skip
            used.statuses[name], used.logs[name] = done.returncode, done.stdout + done.stderr
            said = outputs.read_text() if outputs.exists() else ""
            contexts["steps"][name] = {"outputs": dict(x.split("=", 1) for x in said.splitlines())}
            used.summary += summary.read_text() if summary.exists() else ""
            if done.returncode:
                break
        used.outputs = {k: filled(o["value"], contexts) for k, o in spec["outputs"].items()}
        return used


def filled(text: str, contexts: dict[str, dict[str, Any]]) -> str:
    """Every `${{ a.b || c.d }}` of `text`, as the runner evaluates it (an unknown name fails)."""

    def value(name: str) -> str:
        head, _, rest = name.partition(".")
        if head == "steps":
            step, outputs, key = rest.split(".")
            assert outputs == "outputs", name
            return str(contexts["steps"].get(step, {"outputs": {}})["outputs"].get(key, ""))
        return str(contexts[head][rest])

    def one(match: re.Match[str]) -> str:
        return next((v for v in map(value, match[1].split(" || ")) if v), "")

    return EXPRESSION.sub(one, text)


def packages(python: Path) -> list[str]:
    """What `pip freeze --all` lists (read without pip: a bare system Python may have none)."""
    listing = (
        "import importlib.metadata as m\n"
        "for d in m.distributions(): print(f'{d.name}=={d.version}')"
    )
    done = subprocess.run([str(python), "-c", listing], capture_output=True, text=True,
                          check=True, env={"PATH": "/usr/bin:/bin"}, cwd="/")  # fmt: skip
    return sorted(done.stdout.splitlines())


def installed_files(temp: Path) -> dict[str, int]:
    """Every file under the runner's temp folder and when it was written (caches aside)."""
    return {
        str(p): p.stat().st_mtime_ns
        for p in temp.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }  # fmt: skip


@pytest.fixture(scope="module")
def action(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return the_action(tmp_path_factory.mktemp("action"))


@pytest.fixture
def target(reference_server) -> dict[str, str]:
    return {"base-url": reference_server.base_url, "token": TOKEN_A, "alt-token": TOKEN_B,
            "args": SELECTION}  # fmt: skip


@pytest.fixture
def new_job(tmp_path: Path) -> Iterator[Callable[..., Job]]:
    """Jobs of one's own; their runner temp folders (the installs) removed after the test."""
    made: list[Job] = []

    def new(path: str, **env: str) -> Job:
        made.append(Job(tmp_path / f"job-{len(made)}", path, env))
        return made[-1]

    yield new
    for job in made:
        shutil.rmtree(job.temp, ignore_errors=True)


@pytest.fixture(scope="module")
def job_python(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A Python the job set up before the step (not externally managed), holding a pin of its
    own that the suite's test stack would replace (pytest 8.0; the suite needs 8.3 or newer)."""
    venv = tmp_path_factory.mktemp("setup-python") / "python"
    base = Path(sys.base_prefix) / "bin" / "python3"
    subprocess.run([str(base), "-m", "venv", str(venv)], check=True, timeout=300)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "pytest==8.0.0"],
                   check=True, capture_output=True, timeout=600)  # fmt: skip
    yield venv


def assert_ran(used: Used, workspace: Path) -> None:
    """exit-code 0, the certification of the report, its files, the summary its markdown."""
    assert set(used.statuses.values()) == {0}, used.logs
    assert used.outputs["exit-code"] == "0", used.logs
    report = Path(used.outputs["report-dir"])
    assert report == workspace / "conformance-reports"
    assert all((report / name).is_file() for name in REPORT_FILES), sorted(os.listdir(report))
    assert (report / "allure-results").is_dir()
    document = json.loads((report / "conformance.json").read_text())
    assert used.outputs["certification"] == document["certification"]["level"]
    assert used.summary == (report / "conformance.md").read_text() != ""


def assert_no_token(job: Job, *used: Used) -> None:
    written = [p.read_text(errors="replace") for p in job.workspace.rglob("*") if p.is_file()]
    said = [text for u in used for text in (*u.logs.values(), u.summary, *u.outputs.values())]
    for text in [*said, *written]:
        assert TOKEN_A not in text and TOKEN_B not in text


def test_on_a_bare_runner_the_system_python_is_enough_and_a_second_use_reuses(
    action: Path, target: dict[str, str], new_job: Callable[..., Job]
) -> None:
    if reason := why_not_externally_managed(SYSTEM_PYTHON):
        pytest.skip(f"needs an externally managed system Python: {reason}")
    job = new_job("/usr/bin:/bin")  # the only python3: the system's
    assert shutil.which("python3", path=job.path) == str(SYSTEM_PYTHON)
    before = packages(SYSTEM_PYTHON)
    first = job.uses(action, target)
    assert_ran(first, job.workspace)
    install_log = {name: log for name, log in first.logs.items() if name != "run"}
    assert set(install_log.values()) == {""}, install_log  # quiet
    installed = installed_files(job.temp)
    assert installed, "nothing installed under the runner's temp folder"

    second = job.uses(action, target)
    assert_ran(second, job.workspace)
    assert {name: log for name, log in second.logs.items() if name != "run"} == install_log
    assert installed_files(job.temp) == installed  # reused: nothing written again
    assert job.github_env.read_text() == job.github_path.read_text() == ""  # the job's own
    assert packages(SYSTEM_PYTHON) == before
    assert_no_token(job, first, second)


def test_a_python_set_up_before_it_keeps_its_packages(
    action: Path, target: dict[str, str], job_python: Path, new_job: Callable[..., Job]
) -> None:
    before = packages(job_python / "bin" / "python")
    job = new_job(f"{job_python / 'bin'}:/usr/bin:/bin")
    used = job.uses(action, target)
    assert_ran(used, job.workspace)
    assert packages(job_python / "bin" / "python") == before
    assert "pytest==8.0.0" in before
    assert job.github_env.read_text() == job.github_path.read_text() == ""
    assert_no_token(job, used)


@pytest.fixture
def old_python(tmp_path: Path) -> Path:
    """A virtual environment of a Python older than 3.11 (its own: nothing else to harm)."""
    found = [shutil.which(f"python3.{minor}") for minor in (10, 9, 8)]
    found += sorted(map(str, Path(sys.base_prefix).parent.glob("3.*/bin/python3")))
    asks = "import sys; sys.exit(not (3, 8) <= sys.version_info < (3, 11))"
    old = [
        p
        for p in found
        if p and subprocess.run([p, "-c", asks], capture_output=True).returncode == 0
    ]
    if not old:
        pytest.skip("no Python older than 3.11 (3.8 to 3.10) on this machine")
    venv = tmp_path / "old-python"
    subprocess.run([old[-1], "-m", "venv", "--without-pip", str(venv)], check=True)
    return venv / "bin"


def one_line(used: Used) -> str:
    (step,) = [name for name, status in used.statuses.items() if status]
    lines = used.logs[step].splitlines()
    assert len(lines) == 1, used.logs[step]
    assert used.statuses[step] == 3 and used.outputs["exit-code"] == "3", used.logs
    assert used.outputs["report-dir"] == ""
    return lines[0]


def test_a_python_older_than_3_11_fails_in_one_line_with_exit_code_3(
    action: Path, target: dict[str, str], old_python: Path, new_job: Callable[..., Job]
) -> None:
    job = new_job(f"{old_python}:/usr/bin:/bin")
    line = one_line(job.uses(action, target))
    assert "3.11" in line and str(old_python / "python3") in line, line


def test_an_install_that_cannot_finish_fails_in_one_line_with_exit_code_3(
    action: Path,
    target: dict[str, str],
    job_python: Path,
    new_job: Callable[..., Job],
    tmp_path: Path,
) -> None:
    nowhere = tmp_path / "no-packages"
    nowhere.mkdir()
    offline = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(nowhere)}  # no index, no wheels
    job = new_job(f"{job_python / 'bin'}:/usr/bin:/bin", **offline)
    line = one_line(job.uses(action, target))
    assert "could not install" in line and "setuptools" in line, line
