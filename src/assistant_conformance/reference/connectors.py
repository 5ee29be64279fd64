"""How a target of the suite is reached: a `Connector` of a kind starts it (or looks it up) and
gives an `Endpoint`: its base URL, its principals' tokens (held, never shown: not in its repr, and
handed to a suite run only in its environment), the versions it runs, and how to stop it.

The kinds that need nothing of the proof are here: `url` (a deployment, its tokens read from the
environment variables named) and `reference` (the embedded reference on loopback, the suite's own
target when none is given). The proof adds the mutants, the variants and the named foreign servers,
and holds the one table of kinds (proof/connectors.py). Adding a kind of target is one connector:
a class with `kind`, `what` and `start`, and its row in that table.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Protocol

from assistant_conformance import __version__
from assistant_conformance.reference import embedded

# The environment variables a suite run reads its tokens from (its --token and --alt-token).
TOKEN_VARIABLES = ("ASSISTANT_API_TOKEN", "ASSISTANT_API_ALT_TOKEN")


class ConnectError(RuntimeError):
    """The target could not be started or reached; one readable line saying why."""


def _nothing() -> None:
    """An endpoint with nothing to stop or wait for (a deployment)."""


@dataclass(frozen=True)
class Endpoint:
    """A target made ready: where it answers and the tokens of its principals (the main one first;
    one or two), never in its repr. `stop` ends what was started for it (nothing for a URL);
    `ready` waits until it answers (a reference launched without waiting); `end` asks it to end
    without waiting (default: `stop`)."""

    base_url: str
    tokens: tuple[str, ...] = field(repr=False)
    versions: Mapping[str, str] = field(default_factory=dict)
    stop: Callable[[], None] = field(default=_nothing, repr=False, compare=False)
    ready: Callable[[], None] = field(default=_nothing, repr=False, compare=False)
    end: Callable[[], None] | None = field(default=None, repr=False, compare=False)

    @property
    def token(self) -> str:
        return self.tokens[0]

    @property
    def alt_token(self) -> str | None:
        return self.tokens[1] if len(self.tokens) > 1 else None

    def environment(self) -> dict[str, str]:
        """The suite's token variables: how the tokens reach a suite run (never its argv)."""
        return dict(zip(TOKEN_VARIABLES, self.tokens, strict=False))

    def end_soon(self) -> None:
        """Ask the target to end, not waiting for it (`stop` waits)."""
        (self.end or self.stop)()


class Connector(Protocol):
    """A kind of target: what it is in words, and how to start it (into `workdir`)."""

    kind: ClassVar[str]

    @property
    def what(self) -> str: ...

    def start(self, workdir: Path) -> Endpoint: ...


def new_tokens(prefix: str, count: int = 2) -> tuple[str, ...]:
    """Tokens for a server started here: random, `prefix` saying whose."""
    return tuple(f"{prefix}-{secrets.token_hex(12)}" for _ in range(count))


@dataclass(frozen=True)
class UrlConnector:
    """A deployment at `url`; its tokens are read from the environment variables named (the
    names are kept, never the tokens)."""

    kind: ClassVar[str] = "url"
    url: str
    token_env: str
    alt_token_env: str = ""
    version: str = ""

    @property
    def what(self) -> str:
        """The URL without its user part (no credentials)."""
        scheme, _, rest = self.url.partition("://")
        return f"{scheme}://{rest.rpartition('@')[2]}"

    def start(self, workdir: Path) -> Endpoint:
        token = os.environ.get(self.token_env, "")
        if not token:
            raise ConnectError(f"environment variable {self.token_env} (its token) is not set")
        alt = os.environ.get(self.alt_token_env, "") if self.alt_token_env else ""
        if self.alt_token_env and not alt:
            raise ConnectError(
                f"environment variable {self.alt_token_env} (its alt token) is not set"
            )
        versions = {"given": self.version} if self.version else {}
        return Endpoint(self.url.rstrip("/"), (token, alt) if alt else (token,), versions)


@dataclass(frozen=True)
class ReferenceConnector:
    """The reference server on loopback, a database of its own in `workdir`, two principals
    (`principals` of them: a spread run's workers each take two). `token_delay_ms`: its pause
    before each streamed token. `wait=False` launches it on a socket bound here and returns at
    once (requests wait in the socket's queue; `Endpoint.ready` waits for it). `server_args`
    and `module`: a command line of the reference's with more (the proof's mutants, variants)."""

    kind: ClassVar[str] = "reference"
    token_delay_ms: int = 20
    principals: int = 2
    wait: bool = True
    tokens: tuple[str, ...] = field(default=(), repr=False)  # given: these, not new ones
    server_args: tuple[str, ...] = ()
    module: str = "assistant_conformance.reference"
    prefix: str = "reference"

    @property
    def what(self) -> str:
        return "reference server, on loopback"

    def start(self, workdir: Path) -> Endpoint:
        workdir.mkdir(parents=True, exist_ok=True)
        tokens = self.tokens or new_tokens(self.prefix, self.principals)
        db = workdir / "reference.db"
        try:
            if self.wait:
                args = list(self.server_args)
                server = embedded.start(
                    list(tokens), db, self.token_delay_ms, args, module=self.module
                )
            else:  # the plain reference only (no server_args)
                server = embedded.launch(list(tokens), db, self.token_delay_ms)
        except embedded.ServerStartError as exc:
            raise ConnectError(str(exc)) from None
        versions = {"assistant-conformance": __version__}

        def ready() -> None:
            try:
                server.ready()
            except embedded.ServerStartError as exc:
                raise ConnectError(str(exc)) from None

        end = server.process.terminate
        waited = _nothing if self.wait else ready  # a started server said it listens already
        return Endpoint(server.base_url, tokens, versions, server.stop, waited, end)
