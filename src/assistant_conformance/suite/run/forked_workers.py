"""pytest-xdist's workers forked from one process that imported the suite once (Linux).

Each worker xdist starts is a new `python -u -c BOOTSTRAP` (execnet's popen gateway) that imports
pytest, xdist, hypothesis, schemathesis and the plugin again: about 1.2 s of CPU each, 24 of them
for a far target. Where the suite chose the workers itself (`ask_workers`: no -n, --tx or --dist
given), the controller forks a zygote at configure (before any thread of the run starts: its
imports are done, nothing else is) and points xdist's popen specs at a stand-in
(`python=... worker_standin.py SOCKET`): the stand-in hands its stdin, stdout and stderr over a
Unix socket (SCM_RIGHTS) to the zygote, which forks a child that takes them and runs BOOTSTRAP as
`python -c` would; the stand-in passes signals on, waits for the child and ends with its status.
xdist sees a popen worker as before (its folder, sys.path, restarts after a crash).

The zygote's socket is in a folder of its own (mode 0700); no token is in any argv (the worker's
environment goes over the socket, as a popen worker inherits it). The zygote ignores Ctrl-C (the
workers get it from the terminal, as popen workers do) and ends, killing the workers still
running, when the controller closes its pipe (at unconfigure, or when the controller ends in any
way). Where there is no fork or Unix socket, or the zygote cannot start, or the user gave their
own -n, --tx or --dist: plain popen workers, as xdist starts them.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import json
import os
import random
import select
import shlex
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
import traceback
import types
from pathlib import Path
from typing import Any

import pytest

STANDIN = Path(__file__).with_name("worker_standin.py")
# The run's workers are the suite's choice (no -n, --tx or --dist given): set by `ask_workers`.
CHOSEN = pytest.StashKey[bool]()
ZYGOTE = pytest.StashKey["Zygote"]()
ENDING_SECONDS = 10.0  # for the zygote to end once told (then it is killed)


def fork_workers(config: pytest.Config) -> None:
    """In the controller of a spread run whose workers the suite chose: the zygote forked and
    xdist's popen specs pointed at the stand-in (else nothing changes)."""
    specs = list(config.getoption("tx", None) or [])
    if not config.stash.get(CHOSEN, False) or len(specs) < 2 or set(specs) != {"popen"}:
        return
    if not can_fork() or threading.active_count() > 1:  # a fork keeps only the caller's thread
        return
    try:
        zygote = Zygote.start()
    except OSError:  # no socket there (a folder name too long, ...): popen workers
        return
    config.stash[ZYGOTE] = zygote
    config.option.tx = [zygote.spec()] * len(specs)
    config.add_cleanup(zygote.stop)


def can_fork() -> bool:
    """Linux only: where it was proved. macOS has fork, but a process that loaded Apple's
    frameworks (a proxy lookup does) may not fork safely; Windows has none."""
    return sys.platform == "linux" and hasattr(socket, "recv_fds")


class Zygote:
    """The controller's side: the zygote's process, its socket and the pipe that keeps it."""

    def __init__(self, pid: int, folder: str, path: str, alive: int) -> None:
        self.pid, self.folder, self.path, self._alive = pid, folder, path, alive

    @classmethod
    def start(cls) -> Zygote:
        folder = tempfile.mkdtemp(prefix="assistant-workers-")  # mode 0700: the run's user only
        path = os.path.join(folder, "zygote")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(path)
            listener.listen(64)
        except OSError:
            listener.close()
            shutil.rmtree(folder, ignore_errors=True)
            raise
        kept, alive = os.pipe()  # the zygote reads its end: end of file, the controller is gone
        pid = os.fork()
        if pid == 0:
            os.close(alive)
            _serve(listener, kept)  # never returns
        listener.close()
        os.close(kept)
        return cls(pid, folder, path, alive)

    def spec(self) -> str:
        """The popen spec whose `python` is the stand-in (execnet adds `-u -c BOOTSTRAP`)."""
        python = shlex.join([sys.executable, "-I", "-S", str(STANDIN), self.path])
        return f"popen//python={python}"

    def stop(self) -> None:
        """End the zygote and the workers still running (once xdist is done with them)."""
        with contextlib.suppress(OSError):
            os.close(self._alive)
        deadline = time.monotonic() + ENDING_SECONDS
        while time.monotonic() < deadline:
            ended, _ = os.waitpid(self.pid, os.WNOHANG)
            if ended:
                break
            time.sleep(0.01)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        shutil.rmtree(self.folder, ignore_errors=True)


# --- the zygote's side ---------------------------------------------------------------------------


def _serve(listener: socket.socket, kept: int) -> None:
    """Fork a worker for each stand-in that connects; tell it the worker's pid, then its status;
    when the controller's pipe ends, kill the workers still running and end."""
    running: dict[int, socket.socket] = {}  # worker pid -> its stand-in's connection
    watched: list[Any] = [listener, kept]
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the workers get it, the run ends
        while True:
            ready, _, _ = select.select(watched, [], [], 0.05)
            if kept in ready and not os.read(kept, 1):
                break
            if listener in ready:
                _fork_one(listener, kept, running)
            _reap(running)
    except BaseException:  # said on the controller's stderr; the stand-ins then start python
        traceback.print_exc()
    finally:
        for pid in running:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        os._exit(0)


def _fork_one(listener: socket.socket, kept: int, running: dict[int, socket.socket]) -> None:
    connection, _ = listener.accept()
    connection.settimeout(ENDING_SECONDS)
    try:
        _, fds, _, _ = socket.recv_fds(connection, 1, 3)
        request = json.loads(connection.makefile("rb").readline())
    except (OSError, ValueError):  # the stand-in went away: it is not waited for
        connection.close()
        return
    try:
        pid = os.fork()
    except OSError:  # no process to be had: the stand-in, unanswered, starts python itself
        for fd in fds:
            os.close(fd)
        connection.close()
        return
    if pid == 0:
        listener.close()
        os.close(kept)
        connection.close()
        for other in running.values():
            other.close()
        _worker(fds, request)  # never returns
    for fd in fds:
        os.close(fd)
    running[pid] = connection
    with contextlib.suppress(OSError):
        connection.sendall(f"{pid}\n".encode())


def _reap(running: dict[int, socket.socket]) -> None:
    while running:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            return
        connection = running.pop(pid, None)
        if connection is not None:
            with contextlib.suppress(OSError):
                connection.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
            connection.close()


def _worker(fds: list[int], request: dict[str, Any]) -> None:
    """The child: `python -u -c BOOTSTRAP` (-B too where given) on the stand-in's streams, in its
    folder and environment, with its random numbers and a __main__ of its own."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for number, fd in enumerate(fds):
            os.dup2(fd, number)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        random.seed()  # not the zygote's sequence, shared by every worker
        argv: list[str] = request["argv"]
        if "-B" in argv[: argv.index("-c")]:
            sys.dont_write_bytecode = True
        _fresh_streams()
        _fresh_imports()
        sys.argv = ["-c"]
        main = types.ModuleType("__main__")
        main.__dict__["__builtins__"] = builtins
        sys.modules["__main__"] = main
        exec(compile(argv[argv.index("-c") + 1], "<string>", "exec"), main.__dict__)
        code = 0
    except SystemExit as ended:
        code = ended.code if isinstance(ended.code, int) else (0 if ended.code is None else 1)
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed stream: nothing more to say
                stream.flush()
        os._exit(code)


def _fresh_streams() -> None:
    """sys.stdin, stdout and stderr on the descriptors taken, as `python -u` makes them."""
    streams = {
        "stdin": open(0, closefd=False),  # noqa: SIM115 (the process's own)
        "stdout": io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True),
        "stderr": io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False), write_through=True, errors="backslashreplace"
        ),
    }
    for name, stream in streams.items():
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _fresh_imports() -> None:
    """The controller's assertion rewriting hook out of the import system: the worker's pytest
    installs its own, as in a new process."""
    sys.meta_path[:] = [
        finder for finder in sys.meta_path if type(finder).__name__ != "AssertionRewritingHook"
    ]
