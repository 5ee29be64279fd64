"""A matrix target made ready: a local kind started on loopback (the reference, a variant or mutant
of it, a LangGraph Agent Server) with tokens of its own, or a URL with its tokens read from the
environment. Tokens are handed to the suite in its environment, never on a command line."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from assistant_conformance import __version__
from assistant_conformance.matrix.targets import MatrixTarget
from assistant_conformance.proof import foreign, serve
from assistant_conformance.reference import embedded


class LaunchError(RuntimeError):
    """The target could not be made ready; one line saying why."""


@dataclass
class Ready:
    base_url: str
    token: str
    alt_token: str | None
    versions: dict[str, str]
    stop: Callable[[], None] = field(default=lambda: None)

    def environment(self) -> dict[str, str]:
        """The suite's token variables: the only way the tokens reach it."""
        tokens = {"ASSISTANT_API_TOKEN": self.token}
        if self.alt_token:
            tokens["ASSISTANT_API_ALT_TOKEN"] = self.alt_token
        return tokens


def ready(target: MatrixTarget, workdir: Path) -> Ready:
    """Start or look up `target`; the caller stops it (Ready.stop)."""
    workdir.mkdir(parents=True, exist_ok=True)
    if target.kind == "url":
        return _remote(target)
    tokens = [f"matrix-{secrets.token_hex(12)}" for _ in range(2)]
    if target.kind == "langgraph":
        try:
            versions = foreign.langgraph_versions()
            server = foreign.start_langgraph(tokens, workdir)
        except foreign.ForeignStartError as exc:
            raise LaunchError(str(exc)) from None
        return Ready(server.base_url, tokens[0], tokens[1], versions, server.stop)
    extra = [f"--{target.kind}", target.served] if target.served else []
    try:
        running = serve.start_server(tokens, workdir / "reference.db", extra_args=extra)
    except embedded.ServerStartError as exc:
        raise LaunchError(f"the reference server did not start: {exc}") from None
    versions = {"assistant-conformance": __version__}
    return Ready(running.base_url, tokens[0], tokens[1], versions, running.stop)


def _remote(target: MatrixTarget) -> Ready:
    token = os.environ.get(target.token_env, "")
    if not token:
        raise LaunchError(f"environment variable {target.token_env} (its token) is not set")
    alt = os.environ.get(target.alt_token_env) if target.alt_token_env else None
    if target.alt_token_env and not alt:
        raise LaunchError(f"environment variable {target.alt_token_env} (its alt token) is not set")
    versions = {"given": target.version} if target.version else {}
    return Ready(target.url, token, alt, versions)
