"""`assistant-reference`: run the reference server on loopback and print its base URL when ready."""

from __future__ import annotations

import argparse
import gc
import socket
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import uvicorn
from starlette.types import ASGIApp

from .app import create_app
from .context import Settings
from .embedded import TOKENS_VARIABLE, given_tokens
from .limits import json_error_protocol


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="assistant-reference", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    parser.add_argument(
        "--fd", type=int, help="serve on this inherited listening socket (--host and --port unused)"
    )
    parser.add_argument(
        "--token",
        action="append",
        default=[],
        help="accepted bearer token (repeatable; each is a principal). Also read, one per line, "
        f"from the environment variable {TOKENS_VARIABLE} (first), which, unlike the command "
        "line, other users of the machine cannot read",
    )
    parser.add_argument("--db", type=Path, help="SQLite file (default: a fresh temporary file)")
    parser.add_argument(
        "--files-dir", type=Path, help="upload storage (default: beside the database)"
    )
    parser.add_argument(
        "--token-delay-ms", type=int, default=20, help="delay between streamed tokens"
    )
    parser.add_argument("--max-body-bytes", type=int, default=5 * 1024 * 1024)
    parser.add_argument(
        "--body-timeout", type=float, default=30.0, help="seconds a request body may take (408)"
    )
    parser.add_argument(
        "--end-with-stdin",
        action="store_true",
        help="end when standard input closes (a pipe of the process that started it: it ends "
        "when that process does, killed too)",
    )
    return parser


def _end_at_eof(server: uvicorn.Server) -> None:
    """Read standard input to its end (the starting process closed it, or died), then stop."""
    while sys.stdin.buffer.read(4096):
        pass
    server.should_exit = True


class _AnnouncingServer(uvicorn.Server):
    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        host, port = (
            sockets[0].getsockname()[:2] if sockets else (self.config.host, self.config.port)
        )
        print(f"http://{host}:{port}", flush=True)


def _bound(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sys.exit(f"assistant-reference: cannot listen on {host}:{port}: {exc.strerror}")
    return sock


def main(argv: list[str] | None = None) -> None:
    serve(parser().parse_args(argv))


def accepted_tokens(args: argparse.Namespace) -> list[str]:
    """The tokens of the environment variable (one per line), then those of --token."""
    return given_tokens(args.token)


def serve(args: argparse.Namespace, wrap: Callable[[ASGIApp], ASGIApp] | None = None) -> None:
    """Serve the reference app (inside `wrap`, e.g. a mutant) until stopped."""
    tokens = accepted_tokens(args)
    if not tokens:
        sys.exit(f"assistant-reference: no token: give --token or set {TOKENS_VARIABLE}")
    db_path = args.db or Path(tempfile.mkdtemp(prefix="assistant-reference-")) / "reference.db"
    settings = Settings(
        tokens={token: f"principal-{i}" for i, token in enumerate(tokens)},
        db_path=db_path,
        files_dir=args.files_dir or db_path.parent / "files",
        token_delay_ms=args.token_delay_ms,
        max_body_bytes=args.max_body_bytes,
        body_timeout_s=args.body_timeout,
    )
    sock = socket.socket(fileno=args.fd) if args.fd is not None else _bound(args.host, args.port)
    app: ASGIApp = create_app(settings)
    if wrap is not None:
        app = wrap(app)
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=2,
        http=json_error_protocol(),  # a request uvicorn cannot parse gets a JSON 400 too
    )
    server = _AnnouncingServer(config)
    if args.end_with_stdin:
        threading.Thread(target=_end_at_eof, args=(server,), daemon=True).start()
    server.run(sockets=[sock])
    gc.freeze()  # ending: no last collection of the whole heap (a client waits for the exit)


if __name__ == "__main__":
    main()
