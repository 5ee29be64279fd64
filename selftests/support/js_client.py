"""LangGraph's JavaScript client for the self-tests, pinned by
selftests/support/js/package-lock.json.

`npm ci` installs it into a folder of its own: ASSISTANT_JS_CLIENT_DIR, else the user's cache
(`~/.cache/assistant-conformance/js-client-<digest of the lock>`), never the checkout's tree unless
told so; a folder installed from the same lock is used as it is. selftests/support/js/check.mjs is
copied beside its node_modules and run there with node.

Run as a script (`.ci/run` does), it installs the client and prints the folder.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

JS = Path(__file__).parent / "js"
PINS = ("package.json", "package-lock.json")
SCRIPT = "check.mjs"
STAMP = ".assistant-conformance-lock"  # in node_modules: the digest of the lock it came from
NPM_CI = ["ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"]


def digest() -> str:
    pins = hashlib.sha256()
    for name in PINS:
        pins.update((JS / name).read_bytes())
    return pins.hexdigest()[:16]


def folder() -> Path:
    given = os.environ.get("ASSISTANT_JS_CLIENT_DIR")
    if given:
        return Path(given).resolve()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "assistant-conformance" / f"js-client-{digest()}"


def missing() -> str | None:
    """What is missing to run the client here (node, npm), or None."""
    absent = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    return " and ".join(absent) or None


def install(where: Path | None = None) -> tuple[Path, bool]:
    """The folder with the pinned client, and whether `npm ci` ran now (False: it was there)."""
    where = where or folder()
    where.mkdir(parents=True, exist_ok=True)
    stamp, wanted = where / "node_modules" / STAMP, digest()
    with open(where / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one install at a time per folder
        if stamp.is_file() and stamp.read_text() == wanted:
            return where, False
        for name in PINS:
            if (where / name).resolve() != (JS / name).resolve():
                shutil.copyfile(JS / name, where / name)
        npm = shutil.which("npm") or "npm"
        done = subprocess.run(
            [npm, *NPM_CI], cwd=where, capture_output=True, text=True, timeout=600, check=False
        )
        if done.returncode:
            raise RuntimeError(f"npm ci in {where} failed:\n{done.stdout}{done.stderr}")
        stamp.write_text(wanted)
    return where, True


def run_checks(
    where: Path, api_url: str, token: str, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """check.mjs run by node beside the client; the token goes in its environment only."""
    if (where / SCRIPT).resolve() != (JS / SCRIPT).resolve():
        shutil.copyfile(JS / SCRIPT, where / SCRIPT)
    env = {**os.environ, "REFERENCE_API_URL": api_url, "REFERENCE_TOKEN": token}
    node = shutil.which("node") or "node"
    return subprocess.run(
        [node, SCRIPT], cwd=where, env=env, capture_output=True, text=True, timeout=timeout
    )


if __name__ == "__main__":
    if missing():
        sys.exit(f"no {missing()} here: install Node.js (apt-get install nodejs npm)")
    print(install()[0])
