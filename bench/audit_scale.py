"""Judging traffic at scale: `audit` of 1,000, 10,000 and 100,000 exchanges, and what the proxy
adds to an exchange's latency at its 1,000th and at its 100,000th.

    python bench/audit_scale.py [--sizes 1000 10000 100000] [--exchanges 100000]
                                [--skip audit proxy] [--publish] [--json FILE]

- audit: a file of N exchanges of a client app (threads made, patched, read twice, deleted and
  read again, in turn; the token in the clear, as a browser saves it), written here with the
  self-tests' HAR helper (selftests/support/har_support.py), judged by `assistant-conformance
  audit FILE` as a user runs it: wall seconds, the process's peak memory, its exit status; and
  the time per exchange beyond the start-up (the wall of a one-exchange file);
- proxy: the reference (`python -m assistant_conformance.reference`, a process of its own, no
  token delay) and `assistant-conformance proxy` in front of it (a process of its own). One client
  sends N exchanges in that cycle through the proxy, each followed by the same kind of request
  straight to the reference (on a thread of its own there); an exchange's added latency is the
  difference of the two. Median and 95th percentile over the first 1,000 exchanges and over each
  1,000 ending at a tenth of N (the last: the 99,001st to the 100,000th), with the machine's load
  average then (a shared machine's load moves the figures: a trend is growth, a swing is load);
  the proxy's peak memory; how long its end took (SIGINT to exit: the last judging, the recording
  and the reports written) and its exit status.

It prints Markdown and writes reports/audit_scale.json (`--json`); `--publish` puts the section
in docs/benchmark-results.md (bench/run.py --publish keeps it). The tokens are random and never
printed; every server is on loopback; every subprocess has a time bound.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "selftests" / "support"))  # har_support

import har_support  # noqa: E402

from assistant_conformance.reference.connectors import ReferenceConnector  # noqa: E402

PUBLISHED = ROOT / "docs" / "benchmark-results.md"
SECTION = "## Judging traffic at scale"
WINDOW = 1000  # exchanges each latency figure is taken over
CYCLE = 6  # a thread's life: made, patched, read twice, deleted, read again


def cycle(number: int, thread: str | None) -> tuple[str, str, Any]:
    """The `number`-th request of a client's traffic: method, path, body."""
    step, life = number % CYCLE, number - number % CYCLE
    path = f"/api/ai/threads/{thread}"
    return [("POST", "/api/ai/threads", {"metadata": {"n": life}}),
            ("PATCH", path, {"metadata": {"n": life}}), ("GET", path, None),
            ("GET", path, None), ("DELETE", path, None), ("GET", path, None)][step]  # fmt: skip


# --- audit ---------------------------------------------------------------------------------------


def session_file(path: Path, size: int) -> Path:
    """A HAR of `size` exchanges of the cycle (a thread of its own every cycle)."""
    entries = []
    for number in range(size):
        thread = har_support.thread(number // CYCLE)
        method, where, body = cycle(number, thread)
        made = {"thread_id": thread, "metadata": {"n": number - number % CYCLE}}
        status = [201, 200, 200, 200, 202, 404][number % CYCLE]
        answer = None if status == 202 else {"detail": "gone"} if status == 404 else made
        entries.append(har_support.exchange(method, where, status, body=body, answer=answer))
    path.write_text(json.dumps(har_support.har(entries)), encoding="utf-8")
    return path


def measured(command: list[str], timeout: float) -> dict[str, Any]:
    """Wall seconds, peak memory (MiB) and exit status of one command."""
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = started + timeout
    while (done := os.wait4(process.pid, os.WNOHANG))[0] == 0:
        if time.monotonic() > deadline:
            process.kill()
            raise TimeoutError(f"{command[3]} took over {timeout:g} s")
        time.sleep(0.01)
    process.returncode = os.waitstatus_to_exitcode(done[1])
    return {"seconds": round(time.monotonic() - started, 3),
            "peak_mib": round(done[2].ru_maxrss / 1024, 1), "exit": process.returncode}  # fmt: skip


def audits(sizes: list[int], workdir: Path) -> dict[str, Any]:
    rows = []
    for size in [1, *sizes]:
        har = session_file(workdir / f"session-{size}.har", size)
        command = [sys.executable, "-m", "assistant_conformance", "audit", str(har),
                   "--report-dir", str(workdir / f"report-{size}")]  # fmt: skip
        row = {"exchanges": size, "file_mib": round(har.stat().st_size / 1024**2, 1),
               **measured(command, 3600)}  # fmt: skip
        rows.append(row)
        print(f"audit {size}: {row}", file=sys.stderr, flush=True)
    start_up = rows[0]["seconds"]
    for row in rows[1:]:
        row["ms_per_exchange"] = round((row["seconds"] - start_up) * 1000 / row["exchanges"], 3)
    return {"start_up_seconds": start_up, "rows": rows[1:]}


# --- the proxy ------------------------------------------------------------------------------------


def peak_mib(pid: int) -> float | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    found = re.search(r"VmHWM:\s+(\d+) kB", status)
    return round(int(found.group(1)) / 1024, 1) if found else None


def added_latency(exchanges: int, workdir: Path) -> dict[str, Any]:
    reference = ReferenceConnector(token_delay_ms=0, prefix="bench").start(workdir)
    token = reference.token
    report = workdir / "proxy"
    command = [sys.executable, "-m", "assistant_conformance", "proxy", "--upstream",
               reference.base_url, "--port", "0", "--report-dir", str(report)]  # fmt: skip
    proxy = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proxy.stdout is not None
        base = proxy.stdout.readline().split(": ", 1)[1].split(" ")[0]
        added, loads, sent = traffic(base, reference.base_url, token, exchanges)
        memory = peak_mib(proxy.pid)
        stopped = time.monotonic()
        proxy.send_signal(signal.SIGINT)
        out, _ = proxy.communicate(timeout=1800)
    finally:
        if proxy.poll() is None:
            proxy.kill()
        reference.stop()
    ends = sorted({WINDOW, *(exchanges * k // 10 for k in range(1, 11))} - set(range(WINDOW)))
    windows = [{"from": end - WINDOW + 1, "to": end, **_spread(added[end - WINDOW : end]),
                "load": loads[end // WINDOW - 1]} for end in ends]  # fmt: skip
    return {
        "exchanges": exchanges,
        "seconds": round(sent, 1),
        "windows": windows,
        "peak_mib": memory,
        "end_seconds": round(time.monotonic() - stopped, 1),
        "exit": proxy.returncode,
        "summary": [line for line in out.splitlines() if "exchanges in" in line][-1:],
    }


def _spread(seconds: list[float]) -> dict[str, float]:
    return {"median_ms": round(statistics.median(seconds) * 1000, 3),
            "p95_ms": round(statistics.quantiles(seconds, n=20)[-1] * 1000, 3)}  # fmt: skip


def traffic(
    proxy: str, direct: str, token: str, exchanges: int
) -> tuple[list[float], list[float], float]:
    """Each exchange of the cycle through the proxy, then its twin straight to the reference:
    the added seconds of each, and the load average at the end of each WINDOW of them."""
    auth = {"Authorization": f"Bearer {token}"}
    added: list[float] = []
    loads: list[float] = []
    threads: dict[str, str | None] = {"proxy": None, "direct": None}
    started = time.monotonic()
    with httpx.Client(base_url=proxy, headers=auth, timeout=60) as through, httpx.Client(
        base_url=direct, headers=auth, timeout=60
    ) as straight:  # fmt: skip
        for number in range(exchanges):
            took = {}
            for name, client in (("proxy", through), ("direct", straight)):
                method, path, body = cycle(number, threads[name])
                begun = time.perf_counter()
                answer = client.request(method, path, json=body)
                took[name] = time.perf_counter() - begun
                if number % CYCLE == 0:
                    threads[name] = answer.json()["thread_id"]
            added.append(took["proxy"] - took["direct"])
            if number % WINDOW == WINDOW - 1:
                loads.append(round(os.getloadavg()[0], 1))
            if number % 10_000 == 9_999:
                print(f"proxy: {number + 1} exchanges", file=sys.stderr, flush=True)
    return added, loads, time.monotonic() - started


# --- output ---------------------------------------------------------------------------------------


def markdown(data: dict[str, Any]) -> str:
    m = data["machine"]
    out = [SECTION, "", f"Written by `python bench/audit_scale.py --publish` on {m['date']}: "
           f"{m['nproc']} cores ({m['cpu']}), Python {m['python']}, load average "
           f"{m['load']:.1f} at the start. How it is measured: [benchmark.md]"
           "(benchmark.md#benchaudit_scalepy-judging-traffic-at-scale).", ""]  # fmt: skip
    if "audit" in data:
        a = data["audit"]
        out += [f"`assistant-conformance audit FILE` of a client's traffic (start-up: a "
                f"one-exchange file, {a['start_up_seconds']:.1f} s):", "",
                "| exchanges | file MiB | wall s | ms per exchange beyond start-up | "
                "peak MiB | exit |", "|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
        out += [f"| {r['exchanges']:,} | {r['file_mib']} | {r['seconds']:.1f} | "
                f"{r['ms_per_exchange']:.3f} | {r['peak_mib']} | {r['exit']} |"
                for r in a["rows"]]  # fmt: skip
        out.append("")
    if "proxy" in data:
        p = data["proxy"]
        out += [f"`assistant-conformance proxy` in front of the reference, {p['exchanges']:,} "
                f"exchanges one after another ({p['seconds']:.0f} s, each with its twin sent "
                f"straight to the reference): the latency the proxy adds, over {WINDOW:,} "
                "exchanges at a time, and the machine's load average then:", "",
                "| exchanges | median ms | p95 ms | load |", "|---|---:|---:|---:|"]  # fmt: skip
        out += [f"| {w['from']:,} to {w['to']:,} | {w['median_ms']:.2f} | {w['p95_ms']:.2f} | "
                f"{w['load']:.1f} |" for w in p["windows"]]  # fmt: skip
        out += ["",
                f"The proxy's peak memory {p['peak_mib']} MiB; its end (the last judging, the "
                f"recording and the reports written) {p['end_seconds']:.1f} s, exit {p['exit']}; "
                f"{' '.join(p['summary'])}", ""]  # fmt: skip
    return "\n".join(out)


def published(page: str, section: str) -> str:
    """The results page with this section in place of its last one (or added at its end)."""
    kept = page.split(SECTION, 1)[0].rstrip("\n")
    return f"{kept}\n\n{section.rstrip()}\n"


def kept_section(page: str) -> str:
    """This script's section of a results page, for bench/run.py to keep when it rewrites it."""
    return (SECTION + page.split(SECTION, 1)[1]).rstrip() + "\n" if SECTION in page else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--exchanges", type=int, default=100_000, help="through the proxy")
    parser.add_argument("--skip", nargs="*", default=[], choices=["audit", "proxy"])
    parser.add_argument("--publish", action="store_true", help=f"also write {PUBLISHED.name}")
    parser.add_argument("--json", type=Path, default=ROOT / "reports" / "audit_scale.json")
    args = parser.parse_args(argv)
    data: dict[str, Any] = {"machine": {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "nproc": os.cpu_count(),
        "cpu": _cpu(), "python": sys.version.split()[0], "load": os.getloadavg()[0]}}  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="audit-scale-") as temp:
        if "audit" not in args.skip:
            data["audit"] = audits(args.sizes, Path(temp))
        if "proxy" not in args.skip:
            data["proxy"] = added_latency(max(args.exchanges, WINDOW), Path(temp))
    text = markdown(data)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(text)
    if args.publish:
        PUBLISHED.write_text(published(PUBLISHED.read_text(encoding="utf-8"), text), "utf-8")
        print(f"written: {PUBLISHED}")
    return 0


def _cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


if __name__ == "__main__":
    sys.exit(main())
