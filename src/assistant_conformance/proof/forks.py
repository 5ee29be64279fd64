"""Suite runs forked from one process that imported the suite once (POSIX).

The kill table and the matrix run the suite a hundred times; each run started as a new process
pays its imports (pytest, schemathesis, hypothesis, the plugin: about 1.2 s of CPU, a third of a
mutant's run). Here one process (`python -m assistant_conformance.proof.forks`, the forker)
imports them once and forks a child per run: the child takes the run's folder, environment and
log, reseeds its random numbers and runs the command's module in place (`python -m` as the child
would have been started). Each child leads a process group of its own, so that a run past its time
is ended with everything it started (its workers).

The forker reads one JSON request per line on its stdin and answers on its stdout when a child
ends ({"id", "status"}); it ends its children and itself when its stdin closes (its parent gone).
Where there is no fork (Windows), or the forker cannot start, `SuiteForks.run` answers None and
the caller starts a process as before (suiterun.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import json
import os
import random
import runpy
import select
import signal
import subprocess
import sys
import threading
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import IO, Any

# Imported once by the forker: what every suite run imports first.
PRELOADED = (
    "pytest",
    "xdist",
    "hypothesis",
    "schemathesis",
    "assistant_conformance.suite.plugin",
    "assistant_conformance.cli.run",
)
KILLED = -int(signal.SIGKILL)
PR_SET_PDEATHSIG = 1  # prctl(2), Linux
WAIT_AFTER_KILL = 30.0  # seconds for a killed run's status to come back


class SuiteForks:
    """The parent's side: one forker, requests from any thread, each answered by its status."""

    def __init__(self, environment: dict[str, str]) -> None:
        self.environment = environment
        self._process = subprocess.Popen(
            [sys.executable, "-m", __name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=environment,
            text=True,
            bufsize=1,
        )
        self._lock = threading.Lock()
        self._waiting: dict[int, Future[int]] = {}
        self._count = 0
        threading.Thread(target=self._read_answers, daemon=True).start()

    def run(
        self,
        argv: list[str],
        cwd: Path,
        env: dict[str, str],
        log_path: Path,
        timeout: float,
        errors_path: Path | None = None,
    ) -> int | None:
        """`python ARGV` in `cwd` with `env`, output to `log_path` (its errors to `errors_path`
        where given): its exit status, None past `timeout` (the run and what it started are
        killed)."""
        with self._lock:
            self._count += 1
            number, answer = self._count, Future[int]()
            self._waiting[number] = answer
            request = {"id": number, "argv": argv, "cwd": str(cwd), "env": env}
            logs = {"log": str(log_path), "errors": str(errors_path or log_path)}
            self._send({**request, **logs})
        try:
            return answer.result(timeout)
        except FutureTimeout:
            with self._lock:
                self._send({"kill": number})
            answer.result(WAIT_AFTER_KILL)
            return None

    def alive(self) -> bool:
        return self._process.poll() is None

    def starts_like(self, env: dict[str, str]) -> bool:
        """Whether a process started with `env` would start as the forker did: the same
        PYTHON* settings (the path it imports from, its hash seed, ...), read at start-up only."""

        def python(of: dict[str, str]) -> dict[str, str]:
            return {k: v for k, v in of.items() if k.startswith("PYTHON")}

        return python(env) == python(self.environment)

    def close(self) -> None:
        """End the forker (and any child still running)."""
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait(timeout=WAIT_AFTER_KILL)

    def _send(self, message: dict[str, Any]) -> None:
        assert self._process.stdin is not None
        self._process.stdin.write(json.dumps(message) + "\n")
        self._process.stdin.flush()

    def _read_answers(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            done = json.loads(line)
            with self._lock:
                answer = self._waiting.pop(done["id"], None)
            if answer is not None:
                answer.set_result(done["status"])
        with self._lock:  # the forker is gone: nothing will answer the runs still waiting
            for answer in self._waiting.values():
                answer.set_exception(RuntimeError("the suite's forker ended"))
            self._waiting.clear()


# --- the forker's side ---------------------------------------------------------------------------


def fork_each_request(requests: IO[bytes], answers: IO[str]) -> None:
    """Fork a child per request line; answer each child's status as it ends; on end of input,
    kill the children still running and return."""
    for name in PRELOADED:
        importlib.import_module(name)
    running: dict[int, int] = {}  # pid -> request id
    pending = b""
    try:
        while True:
            readable, _, _ = select.select([requests], [], [], 0.05)
            if readable:
                chunk = os.read(requests.fileno(), 65536)
                if not chunk:
                    break
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    _take(json.loads(line), running)
            _reap(running, answers)
    finally:  # also when the parent's end of the answers is gone (BrokenPipeError)
        for pid in running:
            _kill_group(pid)


def _take(request: dict[str, Any], running: dict[int, int]) -> None:
    if "kill" in request:
        for pid, number in running.items():
            if number == request["kill"]:
                _kill_group(pid)
        return
    forker = os.getpid()
    pid = os.fork()
    if pid == 0:
        _die_with(forker)
        _child(request)  # never returns
    with contextlib.suppress(OSError):  # (the child sets it too: whichever runs first)
        os.setpgid(pid, pid)  # its own group before a kill may come for it
    running[pid] = request["id"]


def _reap(running: dict[int, int], answers: IO[str]) -> None:
    while running:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            return
        number = running.pop(pid, None)
        if number is not None:
            answers.write(json.dumps({"id": number, "status": os.waitstatus_to_exitcode(status)}))
            answers.write("\n")
            answers.flush()


def _die_with(forker: int) -> None:
    """Linux: the child is killed when the forker dies, however it dies (killed outright, it
    cannot end its runs: they would go on, orphaned). Elsewhere the forker's own end does."""
    if sys.platform != "linux":
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
    if os.getppid() != forker:  # it died before the request above
        os._exit(1)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # ended already
        os.killpg(pid, signal.SIGKILL)


def _child(request: dict[str, Any]) -> None:
    """One run, as `python ARGV` would have made it: its own process group, folder, environment,
    log (stdout and stderr) and random numbers; its module run as __main__."""
    code = 1
    try:
        os.setpgid(0, 0)
        os.chdir(request["cwd"])
        sys.path[0] = request["cwd"]  # as `python -m` starts: its folder first
        os.environ.clear()
        os.environ.update(request["env"])
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        log = os.open(request["log"], flags, 0o644)
        errors = log if request["errors"] == request["log"] else os.open(request["errors"], flags)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(log, 1)
        os.dup2(errors, 2)
        random.seed()  # not the forker's sequence, shared by every child
        argv = request["argv"]
        assert argv[0] == "-m", "a module run: python -m NAME ARGS"
        sys.argv = [argv[1], *argv[2:]]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as ended:
        code = ended.code if isinstance(ended.code, int) else (0 if ended.code is None else 1)
    except BaseException:  # the run's own error, said in its log
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed stream: nothing more to say
                stream.flush()
        os._exit(code)


if __name__ == "__main__":
    fork_each_request(sys.stdin.buffer, sys.stdout)
