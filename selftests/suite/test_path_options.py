"""A suite option whose value is an existing path outside the checkout works written either way,
`--report-dir DIR` as users write it or `--report-dir=DIR`, with and without pytest-xdist, with no
test path given (the case where pytest took such a value for the test path and rooted the run
there, without the checkout's settings: suite/config/argv.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import collected_probe
import pytest
import trustme
from safety_support import ROOT

ONE_TEST = "test_created_thread_is_readable_by_its_id"
SUPPORT = Path(collected_probe.__file__).parent


@pytest.mark.parametrize("spread", [False, True], ids=["one process", "xdist"])
@pytest.mark.parametrize("form", ["space", "equals"])
def test_path_options_are_read_as_their_values(tmp_path: Path, form: str, spread: bool) -> None:
    ca = tmp_path / "our-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(ca))
    baseline = tmp_path / "gate" / "known.yaml"
    baseline.parent.mkdir()
    baseline.write_text("AUTH-401: answers 403 here\n", encoding="utf-8")
    reports = tmp_path / "x"
    reports.mkdir()  # an existing folder: the case that used to become the run's root
    given = {"--ca-bundle": ca, "--baseline": baseline, "--report-dir": reports}
    options = [
        word
        for flag, path in given.items()
        for word in ([flag, str(path)] if form == "space" else [f"{flag}={path}"])
    ]
    command = [sys.executable, "-m", "pytest", "-q", "-k", ONE_TEST, *options]
    command += ["-n", "2"] if spread else []
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "1 passed" in run.stdout  # rooted in the checkout: its tests, its settings
    report = json.loads((reports / "conformance.json").read_text(encoding="utf-8"))
    assert report["baseline"]["file"] == str(baseline) and (reports / "junit.xml").exists()
    assert report["transport"]["tls"] == f"verified against {ca} (--ca-bundle)"


# Path options of the plugins a user loads (allure-pytest, pytest's junitxml and tmp_path) and
# the suite's own, each given a folder or file not there yet: pytest-xdist's workers used to be
# given the command as written, after the run had made the folder, and rooted there (2,927 items:
# the checkout's self-tests) where the run rooted in the checkout collects its tests only.
PLUGIN_PATHS = {
    "--alluredir": "allure",
    "--junitxml": "j/x.xml",
    "--basetemp": "bt",
    "--report-dir": "r",
}


def _options(tmp_path: Path, flags: list[str], form: str) -> list[str]:
    words: list[str] = []
    for flag in flags:
        path = str(tmp_path / "new" / PLUGIN_PATHS[flag])
        words += [flag, path] if form == "space" else [f"{flag}={path}"]
    return words


def _collected(command: list[str]) -> int:
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return int(run.stdout.strip().splitlines()[-1].split()[0])  # "648 tests collected in ..."


@pytest.mark.parametrize("form", ["space", "equals"])
@pytest.mark.parametrize("flag", list(PLUGIN_PATHS))
def test_a_plugins_path_option_collects_the_checkouts_tests(
    tmp_path: Path, flag: str, form: str
) -> None:
    plain = [sys.executable, "-m", "pytest", "--co", "-q"]
    expected = _collected(plain)
    assert _collected([*plain, *_options(tmp_path, [flag], form)]) == expected


@pytest.mark.parametrize("form", ["space", "equals"])
def test_the_workers_collect_the_checkouts_tests_whatever_path_options_say(
    tmp_path: Path, form: str
) -> None:
    expected = _collected([sys.executable, "-m", "pytest", "--co", "-q"])
    into = tmp_path / "collected"
    into.mkdir()
    env = {**os.environ, collected_probe.FOLDER: str(into), "PYTHONPATH": str(SUPPORT)}
    options = _options(tmp_path, list(PLUGIN_PATHS), form)
    command = [sys.executable, "-m", "pytest", "-p", "collected_probe", "-n", "2"]
    command += ["-k", "no_test_is_named_so"]
    command += options
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode in (0, 5), run.stdout[-2000:] + run.stderr[-2000:]  # 5: none selected
    assert collected_probe.counts(into) == {"gw0": expected, "gw1": expected}
