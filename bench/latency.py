"""The suite across a network: the same plain command against the reference on loopback and with
every answer 120 ms late, side by side; and against a target that throttles.

    python bench/latency.py [--delay 0.12] [--concurrency 8] [--repeat N] [--json FILE]

Each case serves the reference in this process (uvicorn on loopback, a fresh database) behind a
counting middleware, and runs `pytest --base-url URL --token T --alt-token T2` against it:
- loopback: answers as fast as the reference gives them;
- delayed: every answer starts --delay seconds late (a target 120 ms away);
- throttling: the `throttling` variant (every tenth request 429 with Retry-After: 1).
A loopback URL counts as local (a worker per core by default, at most 2: the loopback case), so
the other runs are given --concurrency, the default against a remote target (the loopback case
is also run so, for comparison); --one-at-a-time adds the delayed case at --concurrency=1. Run it
as users run pytest, with bytecode caches on (not under PYTHONDONTWRITEBYTECODE): each worker's
start-up is most of the cost of spreading. Reported per case: wall time, requests the server saw,
requests per second, exit status, throttled requests; and whether every requirement's verdict
equals the loopback run's. --repeat N runs the loopback and delayed cases N times, alternately,
and the ratio is of their medians (one run of each varies by several seconds on a shared machine).
The tokens are random and never printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import statistics
import sys
import tempfile
from pathlib import Path

from starlette.types import ASGIApp, Message, Receive, Scope, Send

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "selftests" / "support"))  # safety_support

from safety_support import run_suite, serve  # noqa: E402

from assistant_conformance.proof import variants  # noqa: E402
from assistant_conformance.reference.app import create_app  # noqa: E402
from assistant_conformance.reference.context import Settings  # noqa: E402


class Counted:
    """Around an app: counts requests; answers start `delay` seconds late."""

    def __init__(self, app: ASGIApp, delay: float = 0.0) -> None:
        self.app, self.delay, self.count = app, delay, 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.count += 1

        async def late(message: Message) -> None:
            if message["type"] == "http.response.start" and self.delay:
                await asyncio.sleep(self.delay)
            await send(message)

        await self.app(scope, receive, late)


def reference(workdir: Path, name: str, tokens: list[str]) -> ASGIApp:
    """The reference app on a fresh database of its own (`name`), the two tokens its principals'."""
    settings = Settings(
        tokens={t: f"principal-{i}" for i, t in enumerate(tokens)},
        db_path=workdir / f"{name}.db",
        files_dir=workdir / f"{name}-files",
    )
    return create_app(settings)


def run_case(name: str, app: Counted, tokens: list[str], workdir: Path, *options: str) -> dict:
    with serve(app) as base_url:
        done = run_suite(
            workdir / name, "-p", "no:randomly", f"--base-url={base_url}",
            f"--token={tokens[0]}", f"--alt-token={tokens[1]}", *options, timeout=1500,
        )  # fmt: skip
    document = done.json()
    return {
        "case": name,
        "options": " ".join(options),
        "seconds": round(done.seconds, 1),
        "requests": app.count,
        "requests_per_second": round(app.count / done.seconds, 1),
        "exit": done.returncode,
        "throttled": document.get("transport", {}).get("throttled"),
        "verdicts": done.verdicts(),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.12)
    parser.add_argument("--concurrency", default="auto", help="workers, or auto (the round trip)")
    parser.add_argument("--json", type=Path, default=ROOT / "reports" / "latency.json")
    parser.add_argument(
        "--one-at-a-time", action="store_true", help="also the delayed run at --concurrency=1"
    )
    parser.add_argument("--repeat", type=int, default=1, help="loopback and delayed runs, each")
    args = parser.parse_args()
    tokens = [f"bench-{secrets.token_hex(12)}" for _ in range(2)]
    spread = (f"--concurrency={args.concurrency}",)

    def app(workdir: Path, name: str) -> ASGIApp:
        return reference(workdir, name, tokens)

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        cases = []
        for n in range(args.repeat):  # alternately, so a slow spell of the machine hits both
            cases += [
                ("loopback", Counted(app(workdir, f"loopback{n}")), ()),  # the loopback default
                ("delayed", Counted(app(workdir, f"delayed{n}"), args.delay), spread),
            ]
        cases += [
            ("loopback, spread", Counted(app(workdir, "spread")), spread),
            (
                "throttling",
                Counted(variants.with_variant(app(workdir, "429"), "throttling")),
                spread,
            ),
        ]
        if args.one_at_a_time:
            late = Counted(app(workdir, "one"), args.delay)
            cases.append(("delayed, one at a time", late, ("--concurrency=1",)))
        for name, counted, options in cases:
            rows.append(run_case(name, counted, tokens, workdir, *options))
            shown = {k: v for k, v in rows[-1].items() if k != "verdicts"}
            print(json.dumps(shown), flush=True)
    judged = [row.pop("verdicts") for row in rows]
    for row, verdicts in zip(rows, judged, strict=True):
        row["same_verdicts"] = verdicts == judged[0]
    times = {n: [r["seconds"] for r in rows if r["case"] == n] for n in ("loopback", "delayed")}
    ratio = statistics.median(times["delayed"]) / statistics.median(times["loopback"])
    print(f"delayed / loopback: {ratio:.2f}x (medians of {args.repeat}: {times})")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    document = {"delay_seconds": args.delay, "ratio": round(ratio, 2), "cases": rows}
    args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return 0 if all(r["exit"] == 0 and r["same_verdicts"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
