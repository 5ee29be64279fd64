"""Servers no one here wrote, run as targets of the suite: the judge of its verdicts.

`langgraph`: a real LangGraph Agent Server (`langgraph dev` from `langgraph-cli[inmem]`, PyPI)
serving the deterministic graphs of proof/langgraph/ under `/api/ai`, with bearer auth by its own
configuration (langgraph.json `http.mount_prefix`, `auth.path`), in memory, on loopback. It runs in
a venv of its own (in the user's cache, `~/.cache/assistant-conformance/venv-langgraph`, or
ASSISTANT_LANGGRAPH_VENV; made on first use from proof/langgraph/requirements.txt): its pins
conflict with schemathesis'.

    ASSISTANT_REFERENCE_TOKENS=$'T\nT2' python -m assistant_conformance.proof.foreign langgraph \
        [--port P]   (or --token T --token T2: readable by the machine's other users through ps)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import httpx

from assistant_conformance.contract import files
from assistant_conformance.reference.embedded import TOKENS_VARIABLE, given_tokens
from assistant_conformance.report import closed_pipe

PROJECT = Path(str(resources.files("assistant_conformance.proof"))) / "langgraph"
VENV = Path(os.environ.get("ASSISTANT_LANGGRAPH_VENV") or files.user_cache() / "venv-langgraph")
INSTALL_TIMEOUT = 900.0
START_TIMEOUT = 90.0
# Capability groups a LangGraph server does not serve (its verdicts in docs/compatibility/ are
# judged with these given as --unsupported).
LANGGRAPH_ABSENT = ("conversations", "files", "contexts", "chatkit")
VERSIONED = ("langgraph-api", "langgraph-cli", "langgraph", "langgraph-runtime-inmem")


class ForeignStartError(RuntimeError):
    """The foreign server could not be installed or started; one readable line."""


@dataclass
class ForeignServer:
    name: str
    base_url: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)  # langgraph dev starts workers of its own
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        # Its workers too (they may outlive the leader by a moment): none left behind it.
        deadline = time.monotonic() + 10
        while _group_alive(self.process.pid):
            if time.monotonic() > deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                deadline = float("inf")
            time.sleep(0.05)


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def langgraph_binary() -> Path:
    """The `langgraph` command of the target's venv, made (once) when it is missing."""
    binary = VENV / "bin" / "langgraph"
    if binary.exists():
        return binary
    steps = [
        [sys.executable, "-m", "venv", str(VENV)],
        [
            str(VENV / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "-r",
            str(PROJECT / "requirements.txt"),
        ],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
        if done.returncode != 0:
            shutil.rmtree(VENV, ignore_errors=True)
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            raise ForeignStartError(f"installing the LangGraph server failed: {tail[0]}")
    return binary


def langgraph_versions() -> dict[str, str]:
    """The versions of the LangGraph server's own packages, as installed in its venv."""
    script = (
        "import importlib.metadata as m, json; "
        f"print(json.dumps({{n: m.version(n) for n in {list(VERSIONED)!r}}}))"
    )
    python = langgraph_binary().with_name("python")
    done = subprocess.run([str(python), "-c", script], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise ForeignStartError(f"reading the LangGraph server's versions failed: {done.stderr}")
    return dict(json.loads(done.stdout))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def start_langgraph(
    tokens: list[str], workdir: Path, port: int = 0, graphs: tuple[str, ...] = ()
) -> ForeignServer:
    """Serve proof/langgraph/ from a fresh copy in `workdir` (its in-memory data lands there);
    `graphs` keeps only the named graphs (default: all)."""
    binary = langgraph_binary()
    project = workdir / "langgraph"
    shutil.copytree(PROJECT, project, dirs_exist_ok=True)
    if graphs:
        config = json.loads((project / "langgraph.json").read_text(encoding="utf-8"))
        config["graphs"] = {name: config["graphs"][name] for name in graphs}
        (project / "langgraph.json").write_text(json.dumps(config), encoding="utf-8")
    if port and not port_free(port):
        raise ForeignStartError(f"port {port} on 127.0.0.1 is in use: choose another (--port)")
    port = port or free_port()
    env = {
        **os.environ,
        "CONFORMANCE_TOKENS": ",".join(tokens),  # the tokens travel in the child's environment only
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false",
    }
    log_path = workdir / "langgraph.log"
    command = [
        str(binary),
        "dev",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-browser",
        "--no-reload",
        "--n-jobs-per-worker",
        "10",
    ]
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            command, cwd=project, env=env, stdout=log, stderr=log, start_new_session=True
        )
    server = ForeignServer("langgraph", f"http://127.0.0.1:{port}", process, log_path)
    try:
        wait_for(server)
    except BaseException:  # a start-up cut short (its time out, a signal) leaves no server
        server.stop()
        raise
    return server


def wait_for(server: ForeignServer) -> None:
    """Until the server answers; ForeignStartError where it exits or is silent START_TIMEOUT."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise ForeignStartError(
                f"langgraph dev exited during start-up (log: {server.log_path})"
            )
        try:
            if httpx.get(f"{server.base_url}/api/ai/ok", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise ForeignStartError(f"langgraph dev did not answer within {START_TIMEOUT:g} s")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m assistant_conformance.proof.foreign")
    parser.add_argument("server", choices=["langgraph"])
    parser.add_argument(
        "--token",
        action="append",
        default=[],
        help=f"a principal's token; or one a line in the environment variable {TOKENS_VARIABLE} "
        "(first), which, unlike the command line, other users of the machine cannot read",
    )
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--graph", action="append", default=[], help="serve only this graph")
    args = parser.parse_args(argv)
    tokens = given_tokens(args.token)
    if not tokens:
        sys.exit(f"foreign: no token: give --token or set {TOKENS_VARIABLE}")
    workdir = args.workdir or Path(os.environ.get("TMPDIR", "/tmp")) / f"langgraph-{os.getpid()}"
    workdir.mkdir(parents=True, exist_ok=True)

    def leave(*_: object) -> None:
        # Out of process.wait() first: stopping from inside the handler would wait on the
        # process again while the interrupted wait still holds its lock (the CLI then hung).
        raise SystemExit(0)

    # Before the server starts: a signal during its start-up or once its address is printed
    # ends this process through the clean-ups below, never by the default action (an orphan).
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, leave)
    try:
        server = start_langgraph(tokens, workdir, args.port, tuple(args.graph))
    except ForeignStartError as exc:
        sys.exit(f"foreign: {exc}")
    print(server.base_url, flush=True)
    try:
        server.process.wait()
    except KeyboardInterrupt:
        pass
    finally:  # its server runs in a session of its own: stopped here, however this one ends
        server.stop()


if __name__ == "__main__":
    closed_pipe.exit_quietly(main)
