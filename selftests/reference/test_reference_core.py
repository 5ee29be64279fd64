"""The reference server's shared behaviour: bearer auth, JSON errors, body limit, start-up."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from assistant_conformance.reference import embedded


@pytest.mark.parametrize(
    "header",
    [
        None,
        "Basic dXNlcjpwYXNz",
        "Bearer",
        "Bearer wrong-token",
        "bearer",
        "Token selftest-token-a",
    ],
)
def test_unauthenticated_requests_get_401_json(reference_server, header):
    headers = {"Authorization": header} if header is not None else {}
    response = httpx.post(f"{reference_server.base_url}/api/ai/threads", headers=headers, json={})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert response.json() == {
        "statusCode": 401,
        "message": "Unauthorized",
        "error": "Unauthorized",
    }


def test_unknown_route_is_404_json(client):
    response = client.get("/api/ai/no-such-route")
    assert response.status_code == 404
    assert response.json()["statusCode"] == 404


def test_oversized_body_is_413(reference_server):
    response = httpx.post(
        f"{reference_server.base_url}/api/ai/threads",
        headers={"Authorization": "Bearer selftest-token-a", "Content-Type": "application/json"},
        content=b"[" + b"0," * (3 * 1024 * 1024) + b"0]",
    )
    assert response.status_code == 413
    assert response.json()["statusCode"] == 413


def test_start_failure_is_one_readable_line(tmp_path):
    with pytest.raises(embedded.ServerStartError, match="exited during start-up"):
        embedded.start(["t"], tmp_path / "x.db", extra_args=["--host", "203.0.113.1"])


def test_a_server_ends_with_the_process_that_started_it(tmp_path):
    """A run killed outright (SIGKILL: no clean-up of its own) leaves no reference running: the
    server reads the pipe its starter holds on its stdin and ends when it closes."""
    starter = subprocess.Popen(
        [sys.executable, "-c", STARTER, str(tmp_path / "x.db")], stdout=subprocess.PIPE, text=True
    )
    assert starter.stdout is not None
    pid = int(starter.stdout.readline())
    starter.kill()
    starter.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _running(pid):
        time.sleep(0.05)
    assert not _running(pid)


STARTER = """
import sys, time
from pathlib import Path
from assistant_conformance.reference import embedded
server = embedded.start(["t"], Path(sys.argv[1]))
print(server.process.pid, flush=True)
time.sleep(60)
"""


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # An ended child of the killed starter is reaped by init; a zombie counts as ended.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"))


@pytest.mark.parametrize("how", ["start", "launch"])
def test_a_started_reference_takes_its_tokens_from_its_environment_not_its_argv(tmp_path, how):
    """A command line is readable by every user of the machine (`ps`): the tokens reach the
    server in its environment, and the server accepts them."""
    tokens = ["argv-secret-main-1234", "argv-secret-alt-5678"]
    if how == "start":
        server = embedded.start(tokens, tmp_path / "ref.db")
    else:
        server = embedded.launch(tokens, tmp_path / "ref.db")
        server.ready(20.0)
    try:
        assert not any(token in word for word in server.process.args for token in tokens)
        for token in tokens:
            answer = httpx.post(
                f"{server.base_url}/api/ai/threads/search",
                json={},
                headers={"Authorization": f"Bearer {token}"},
            )
            assert answer.status_code == 200, answer.text
    finally:
        server.stop()


def test_the_reference_command_without_a_token_says_so(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != embedded.TOKENS_VARIABLE}
    done = subprocess.run(
        [sys.executable, "-m", "assistant_conformance.reference", "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "no token" in done.stderr and embedded.TOKENS_VARIABLE in done.stderr
