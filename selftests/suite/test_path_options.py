"""A suite option whose value is an existing path outside the checkout works written either way,
`--report-dir DIR` as users write it or `--report-dir=DIR`, with and without pytest-xdist, with no
test path given (the case where pytest took such a value for the test path and rooted the run
there, without the checkout's settings: suite/config/argv.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import trustme
from safety_support import ROOT

ONE_TEST = "test_created_thread_is_readable_by_its_id"


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
