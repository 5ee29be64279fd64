"""The suite's forks (proof/forks.py): runs forked from one process that imported the suite once
end as the processes they stand for would (status, log, folder, environment), and a run past its
time is ended with what it started."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from pathlib import Path

import pytest

from assistant_conformance.proof.forks import SuiteForks
from assistant_conformance.proof.suiterun import child_environment


def test_a_forked_run_has_its_folder_environment_log_and_status(tmp_path: Path) -> None:
    forks = SuiteForks(child_environment())
    try:
        env = {**child_environment(), "FORKED_RUN_MARK": "seen"}
        script = tmp_path / "probe.py"
        script.write_text(
            "import os, sys\nprint(os.getcwd(), os.environ.get('FORKED_RUN_MARK'))\nsys.exit(7)\n"
        )
        runs = [(tmp_path / f"run{i}.log", i) for i in range(2)]
        for log, _ in runs:
            status = forks.run(["-m", "probe"], tmp_path, env, log, timeout=60)
            assert status == 7
            assert log.read_text().split() == [str(tmp_path), "seen"]
        version = forks.run(
            ["-m", "assistant_conformance", "--version"], tmp_path, env, tmp_path / "v.log", 60
        )
        assert version == 0 and "assistant-conformance" in (tmp_path / "v.log").read_text()
    finally:
        forks.close()


def test_a_run_past_its_time_is_ended_and_said(tmp_path: Path) -> None:
    forks = SuiteForks(child_environment())
    try:
        status = forks.run(["-m", "http.server", "0", "--bind", "127.0.0.1"], tmp_path,
                           child_environment(), tmp_path / "server.log", timeout=1)  # fmt: skip
        assert status is None  # past its time: killed, its status came back
        again = forks.run(["-m", "assistant_conformance", "--version"], tmp_path,
                          child_environment(), tmp_path / "v.log", 60)  # fmt: skip
        assert again == 0  # the forker goes on after a kill
    finally:
        forks.close()
    assert not forks.alive()


def _gone(pid: int) -> bool:
    """Whether `pid` ended (a zombie not yet reaped by its new parent counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


@pytest.mark.skipif(sys.platform != "linux", reason="the forker's death reaches its runs on Linux")
def test_a_run_ends_when_its_forker_is_killed_outright(tmp_path: Path) -> None:
    """A forker killed outright (SIGKILL: nothing of its own runs) leaves no run going on."""
    (tmp_path / "sleeper.py").write_text(
        "import os, pathlib, time\npathlib.Path('pid').write_text(str(os.getpid()))\n"
        "time.sleep(600)\n"
    )
    forks = SuiteForks(child_environment())

    def run_until_killed() -> None:
        with contextlib.suppress(RuntimeError):  # "the suite's forker ended": no answer comes
            forks.run(["-m", "sleeper"], tmp_path, child_environment(), tmp_path / "s.log", 600)

    waiting = threading.Thread(target=run_until_killed, daemon=True)
    waiting.start()
    pid_file = tmp_path / "pid"
    for _ in range(600):  # the run starts (waits for an event, bounded: not a timed claim)
        if pid_file.exists() and pid_file.read_text():
            break
        time.sleep(0.1)
    run = int(pid_file.read_text())
    assert not _gone(run)
    forks._process.kill()
    for _ in range(300):
        if _gone(run):
            break
        time.sleep(0.1)
    assert _gone(run), "the run went on after its forker was killed"
