"""The stand-in that pytest-xdist starts for a worker where the workers are forked
(suite/run/forked_workers.py): `python -I -S worker_standin.py SOCKET -u -c BOOTSTRAP`, started as
execnet starts `python -u -c BOOTSTRAP`. It hands its stdin, stdout and stderr, folder and
environment to the zygote listening on SOCKET, which forks a child that runs BOOTSTRAP on them;
it passes signals on to that child, waits for its end and ends with its status. Where the zygote
does not answer, it becomes the worker python would have been (exec). Only the standard library:
it starts in milliseconds.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys

# Passed on to the worker. Not SIGINT: a Ctrl-C reaches the worker itself (the terminal signals
# the whole foreground group, the worker's too).
FORWARDED = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)


def main(argv: list[str]) -> int:
    path, python_args = argv[1], argv[2:]
    zygote = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        zygote.connect(path)
        socket.send_fds(zygote, [b"\0"], [0, 1, 2])
        request = {"argv": python_args, "cwd": os.getcwd(), "env": dict(os.environ)}
        zygote.sendall(json.dumps(request).encode() + b"\n")
        answers = zygote.makefile("rb")
        pid = int(answers.readline())
    except (OSError, ValueError):  # no zygote (or it ended): the worker python would have been
        zygote.close()
        os.execv(sys.executable, [sys.executable, *python_args])
    quiet = os.open(os.devnull, os.O_RDWR)  # the pipes are the worker's alone: its end, their end
    os.dup2(quiet, 0)
    os.dup2(quiet, 1)

    def forward(received: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):  # ended already
            os.kill(pid, received)

    for number in FORWARDED:
        signal.signal(number, forward)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    said = answers.readline()
    if not said:  # the zygote ended without the worker's status: it was ended with the run
        return 1
    status = int(said)
    if status < 0:  # ended by a signal: so does the stand-in
        if -status not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
        return 128 - status
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
