"""The one way the processes of a run share data (suite/config/run_folder.py): counts while it runs,
measurements under typed keys gathered at its end, one folder the controller discards."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from assistant_conformance.suite.config.run_folder import Measurements, RunFolder
from assistant_conformance.suite.run import stats


def _in_a_child(work: object) -> None:
    """Run `work()` in a forked process of its own (another pid, as a pytest-xdist worker)."""
    pid = os.fork()
    if pid == 0:  # the child
        code = 1
        try:
            work()  # type: ignore[operator]
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.skipif(sys.platform == "win32", reason="no fork")
def test_what_each_process_measured_is_gathered_once_under_its_key(tmp_path: Path) -> None:
    folder = RunFolder.of(tmp_path, "session1")

    def worker(operation: str) -> None:
        measured = Measurements()
        measured.add(stats.RESENT, stats.ResentRecord(operation=operation))
        measured.add(stats.SENT, stats.SentRecord(requests=3))
        folder.publish(measured)

    _in_a_child(lambda: worker("GET /a"))
    _in_a_child(lambda: worker("GET /b"))
    own = Measurements()
    own.add(stats.SENT, stats.SentRecord(requests=1))
    gathered = folder.gather(own)
    assert sorted(r["operation"] for r in gathered.get(stats.RESENT)) == ["GET /a", "GET /b"]
    assert sorted(r["requests"] for r in gathered.get(stats.SENT)) == [1, 3, 3]
    assert stats.transport_counts(gathered)["requests"] == 7
    assert json.loads(json.dumps(gathered.as_dict())) == gathered.as_dict()  # results.json's
    other = RunFolder.of(tmp_path, "session2")  # another run in the same report folder
    assert other.gather(Measurements()).as_dict() == {}
    folder.discard()
    assert not folder.path or not folder.path.exists()
    assert folder.gather(Measurements()).as_dict() == {}


@pytest.mark.skipif(sys.platform == "win32", reason="no fork")
def test_a_count_is_the_same_in_every_process_of_the_run(tmp_path: Path) -> None:
    folder = RunFolder.of(tmp_path, "session")
    _in_a_child(lambda: folder.counts("budget.json").add("sessions", 2))
    assert folder.counts("budget.json").add("sessions") == 3
    alone = RunFolder()  # a replay, a self-test: this process alone, nothing written
    assert alone.counts("budget.json").add("sessions") == 1
    assert alone.gather(Measurements()).as_dict() == {}
