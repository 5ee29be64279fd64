"""`assistant-conformance proxy --upstream URL [--port N] [--report-dir DIR]`: a reverse proxy on
loopback that passes every exchange to URL and back unchanged (streams chunk by chunk), judges
each as `audit` does, prints each finding not held as it is seen, and on SIGINT or SIGTERM writes
what it recorded (DIR/recorded.har, redacted) and the reports. Exit status as `audit`'s: 0, 1 a
MUST failed, 3 nothing judged, 4 a bad option or a report folder that cannot be written (said in
one line, before it listens) (docs/audit.md).
"""

from __future__ import annotations

import argparse
import math
import signal
import socket
import sys
from typing import Any

import httpx

from assistant_conformance.report import redact
from assistant_conformance.report.exit_codes import Exit


def add_verb(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from assistant_conformance.audit.proxy import DEFAULT_DEADLINE
    from assistant_conformance.cli.audit import base_path_option, report_dir_option

    parser = verbs.add_parser("proxy", description=__doc__.split("\n\n")[0].split(": ", 1)[1])
    parser.add_argument(
        "--upstream", required=True, help="the server the traffic is for (required: no default)"
    )
    parser.add_argument(
        "--port",
        type=int,
        default=8089,
        help="the port to listen on; 0: any free one, said on start (default: 8089)",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default: 127.0.0.1, loopback)",
    )
    report_dir_option(parser)
    base_path_option(parser)
    parser.add_argument(
        "--exchange-timeout",
        type=float,
        default=DEFAULT_DEADLINE,
        help=f"seconds an exchange may last, a stream included (default: {DEFAULT_DEADLINE:g})",
    )
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from assistant_conformance.cli.audit import report_dir_problem

    prog = args.prog
    try:
        upstream = httpx.URL(args.upstream)
    except httpx.InvalidURL:
        upstream = httpx.URL("")
    if upstream.scheme not in ("http", "https") or not upstream.host:
        return _usage(prog, f"--upstream {args.upstream!r}: an http(s) URL is needed")
    if not (0 < args.exchange_timeout < math.inf):
        return _usage(
            prog,
            f"--exchange-timeout {args.exchange_timeout:g}: a number of seconds above 0 is needed",
        )
    if not 0 <= args.port <= 65535:
        return _usage(prog, f"--port {args.port}: a port from 0 to 65535 is needed")
    if (problem := report_dir_problem(args.report_dir)) is not None:
        return _usage(prog, problem)
    try:
        listener = socket.create_server((args.host, args.port))
    except OSError as exc:
        return _usage(prog, f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
    with redact.scope() as secrets:
        return _serve(args, listener, prog, secrets)


def _usage(prog: str, message: str) -> int:
    print(f"{prog}: error: {message}", file=sys.stderr)
    return Exit.USAGE


def _serve(args: Any, listener: socket.socket, prog: str, secrets: redact.Secrets) -> int:
    import uvicorn

    from assistant_conformance.audit.proxy import Proxy
    from assistant_conformance.audit.session import HAR_FILE
    from assistant_conformance.cli.audit import summary_lines
    from assistant_conformance.suite.http.trail import BODY_LIMIT

    proxy = Proxy(
        args.upstream,
        args.report_dir,
        args.exchange_timeout,
        say=_say,
        secrets=secrets,
        base_path=args.base_path,
    )
    config = uvicorn.Config(
        proxy,
        log_level="critical",
        access_log=False,
        lifespan="on",
        server_header=False,
        date_header=False,  # the upstream's pass on
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)

    def stop(signum: int, frame: object) -> None:  # uvicorn raises the signal again at its end
        server.should_exit = True

    for caught in (signal.SIGINT, signal.SIGTERM):
        signal.signal(caught, stop)
    host, port = listener.getsockname()[:2]
    _say(
        f"{prog}: http://{host}:{port} -> {redact.text(args.upstream)}; recording every exchange "
        f"(bodies up to {BODY_LIMIT // 1024} KiB each) and judging it; {args.report_dir}/"
        f"{HAR_FILE} and the reports are written on exit (Ctrl-C)"
    )
    server.run(sockets=[listener])
    run = proxy.finish()
    summary_lines(run, args.report_dir)
    return int(run.gate.exit_status)


def _say(text: str) -> None:
    print(text, flush=True)
