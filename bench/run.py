"""Benchmark: the suite's speed and detection power, side by side with schemathesis alone.

    python bench/run.py [--quick] [--publish] [--jobs N] [--skip ...] [--report-dir DIR]

Measures, against the embedded reference server, and writes reports/bench.md + reports/bench.json:
- layers: wall time of the default suite (`pytest`, no options) split into startup (process launch
  to the first test's call, the embedded server start included), property (test_property.py +
  test_stateful.py), scenario (the other modules) and reports (pytest_sessionfinish, where the suite
  writes its reports), from one run's timestamps (bench/bench_timing.py); median of 3 runs (1 with
  --quick);
- throughput: the property layer and `st run` (bench/schemathesis.toml: the same depth, phases,
  generation mode and checks configuration) against one reference server behind a counting reverse
  proxy on loopback; requests counted at the proxy / wall seconds of each process;
- detection: for every mutant of the catalogue (assistant_conformance.proof.mutants), whether
  the suite catches it (the kill-table machinery: its per-mutant selection, judged by
  requirement ID) and
  whether `st run` alone does (exit non-zero with a failure kind, operation + check, it did not
  report against the plain reference), with the seconds each took;
- growth: the default suite's wall time at --examples 10, 50, 200 (10, 50 with --quick) and with
  pytest-xdist -n 1 and -n 2;
- profile: where the first default run's time went (bench_timing's stamps and transport counters:
  start-up, collection, reference start, generation, sending, reading and judging, reports; wall
  and client CPU, requests per second, client CPU per request); raw: the same reference under one
  client's tight loop of GETs (the limit); far: latency.py's loopback and 120 ms cases, one run
  each; deep: a run at --examples 1000 (not with --quick). --publish also writes
  docs/benchmark-results.md from these (keeping the section bench/audit_scale.py wrote).
Every subprocess has a timeout. The token is never printed.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import resource
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
sys.path.insert(0, str(ROOT / "src"))  # a fresh clone without `pip install -e` still imports
sys.path.insert(0, str(BENCH))  # its sibling scripts

import audit_scale  # noqa: E402
import httpx  # noqa: E402
import latency  # noqa: E402

from assistant_conformance.proof import killtable, serve  # noqa: E402
from assistant_conformance.reference import embedded  # noqa: E402
from assistant_conformance.suite.http import target  # noqa: E402

PROPERTY_LAYER = ("tests/property/test_property.py", "tests/property/test_stateful.py")
ST_CONFIG = BENCH / "schemathesis.toml"
SPEC = ROOT / "spec" / "openapi.yaml"
PUBLISHED = ROOT / "docs" / "benchmark-results.md"  # --publish
SUITE_TIMEOUT = 600.0  # one whole-suite run
DEEP_TIMEOUT = 3600.0  # one run at --examples 1000
ST_TIMEOUT = 600.0  # one `st run`
CASE_TIMEOUT = 300.0  # one kill-table case (a selection of the suite)
ST_SETTINGS = (
    "max-examples 10, phases examples+coverage+fuzzing+stateful, mode all, seed 0, 1 worker, "
    "links only (no inference), no extra data sources, request timeout 10 s"
)
# --quick: a few mutants, one per kind of breakage (status, auth, input, 5xx, and the stream,
# cancel, wait, process, paging and persistence ones generated requests cannot see).
QUICK_MUTANTS = [
    "create-thread-200", "search-threads-no-auth", "kb-permission-any-string", "empty-bulk-500",
    "stream-never-ends", "cancel-does-nothing", "wait-returns-early", "process-never-starts",
    "messages-ignore-limit", "thread-patch-not-persisted",
]  # fmt: skip
SUITE_SETTINGS = "defaults: --examples 10, --seed 0, stateless + stateful property tests"


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_API_")}
    env.pop("BENCH_ST_TOKEN", None)
    return {**env, **extra}


def tokens() -> list[str]:
    return [f"bench-{secrets.token_hex(12)}" for _ in range(2)]


# --- the machine --------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    cpu = "unknown"
    with open("/proc/cpuinfo", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "python": platform.python_version(),
        "load_at_start": os.getloadavg()[0],
    }


# --- whole-suite runs ---------------------------------------------------------------------------


def run_suite(workdir: Path, *args: str, timeout: float = SUITE_TIMEOUT) -> dict[str, Any]:
    """One `pytest` of the default suite (embedded reference) with `args`; wall time and layers."""
    workdir.mkdir(parents=True, exist_ok=True)
    timing = workdir / "timing.json"
    pythonpath = os.pathsep.join(filter(None, [str(BENCH), os.environ.get("PYTHONPATH", "")]))
    env = clean_env(BENCH_TIMING_OUT=str(timing), PYTHONPATH=pythonpath)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "bench_timing", *args]
    # one argument: xdist workers take a lone path after --report-dir for a rootdir (exit 4/5)
    command.append(f"--report-dir={workdir / 'reports'}")
    launched = time.time()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        with (workdir / "pytest.log").open("w") as out:
            done = subprocess.run(
                command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=timeout
            )
        status: int | None = done.returncode
    except subprocess.TimeoutExpired:
        status = None
    wall = time.time() - launched
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
    result: dict[str, Any] = {"args": list(args), "exit": status, "wall": wall, "cpu": cpu}
    if status is None:
        result["problem"] = f"timed out after {timeout:g} s"
    stamps = json.loads(timing.read_text()) if timing.exists() else {}
    if "property" in stamps:  # one process: the stamps of its tests (xdist's workers stamp none)
        first = stamps.get("first_test", launched)
        setup = stamps.get("first_setup", 0.0)
        first_layer = "property" if stamps.get("property_items") else "scenario"
        result["layers"] = {
            "startup": first - launched + setup,
            "property": stamps["property"] - (setup if first_layer == "property" else 0.0),
            "scenario": stamps["scenario"] - (setup if first_layer == "scenario" else 0.0),
            "reports": stamps.get("finish_end", 0.0) - stamps.get("finish_start", 0.0),
        }
        result["tests"] = stamps["items"]
        result["profile"] = profile_of(stamps, launched, wall, cpu)
    return result


def profile_of(stamps: dict[str, Any], launched: float, wall: float, cpu: float) -> dict[str, Any]:
    """Where one run's time went, from its stamps (bench/bench_timing.py): wall and client CPU
    seconds per phase; the tests split into generation, sending (inside the transports: waiting
    for answers) and the rest (reading, judging, the tests' own work)."""

    def span(start: str, end: str) -> tuple[float, float]:
        return stamps[end] - stamps[start], stamps[f"{end}_cpu"] - stamps[f"{start}_cpu"]

    server_start = stamps.get("first_setup", 0.0)
    tests_wall, tests_cpu = span("first_test", "finish_start")
    generation = max(0.0, stamps["property_call"] - stamps["runner"])
    rest = tests_wall - server_start - generation - stamps["sending"]
    client_cpu = stamps["unconfigured_cpu"]
    phases = {
        "start-up (interpreter, imports, options)": (stamps["configured"] - launched,
                                                     stamps["configured_cpu"]),
        "collection": span("collect_start", "collect_end"),
        "embedded reference start": (server_start, None),
        "generation (hypothesis, schemathesis)": (generation, None),
        "sending (inside the transports: waiting for answers)": (stamps["sending"],
                                                                 stamps["sending_cpu"]),
        "reading, judging, the tests' own work": (rest, None),
        "tests in all": (tests_wall, tests_cpu),
        "reports": span("finish_start", "finish_end"),
        "exit": (wall - (stamps["unconfigured"] - launched), None),
    }  # fmt: skip
    requests = stamps["requests"]
    return {
        "phases": {name: {"wall": w, "cpu": c} for name, (w, c) in phases.items()},
        "wall": wall,
        "client_cpu": client_cpu,
        "server_cpu": max(0.0, cpu - client_cpu),  # the embedded reference: the child pytest reaps
        "waiting": max(0.0, wall - client_cpu),
        "requests": requests,
        "requests_per_second": requests / wall if wall else float("nan"),
        "cpu_per_request": client_cpu / requests if requests else float("nan"),
        "tests_cpu_per_request": tests_cpu / requests if requests else float("nan"),
    }


# --- the reference's own limit ------------------------------------------------------------------


def raw_rate(workdir: Path, seconds: float = 3.0) -> dict[str, Any]:
    """The embedded reference (as a default run starts it) read as fast as one client can: a
    tight httpx loop of GETs of one thread on one kept connection, for `seconds`."""
    workdir.mkdir(parents=True, exist_ok=True)
    keys = tokens()
    server = embedded.start(keys, workdir / "reference.db", target.EMBEDDED_TOKEN_MS)
    try:
        headers = {"Authorization": f"Bearer {keys[0]}"}
        with httpx.Client(base_url=server.base_url, headers=headers) as client:
            thread = client.post("/api/ai/threads", json={}).json()["thread_id"]
            count, statuses = 0, set()
            started, started_cpu = time.monotonic(), time.process_time()
            while time.monotonic() - started < seconds:
                statuses.add(client.get(f"/api/ai/threads/{thread}").status_code)
                count += 1
            elapsed, cpu = time.monotonic() - started, time.process_time() - started_cpu
            client.delete(f"/api/ai/threads/{thread}")
    finally:
        server.stop()
    return {"requests": count, "seconds": elapsed, "rate": count / elapsed,
            "client_cpu_per_request": cpu / count, "statuses": sorted(statuses)}  # fmt: skip


# --- a far target -------------------------------------------------------------------------------


def far_target(workdir: Path, delay: float = 0.12) -> dict[str, Any]:
    """bench/latency.py's two cases, one run each: the reference on loopback behind its counting
    middleware (the loopback default: a worker per core, at most 2) and the same with every answer
    `delay` late (--concurrency auto: the workers a remote target gets from its round trip)."""
    workdir.mkdir(parents=True, exist_ok=True)
    keys = tokens()
    rows = []
    far = f"{delay * 1000:.0f} ms"
    for name, late, options in (("loopback", 0.0, ()), (far, delay, ("--concurrency=auto",))):
        log(f"far target: {name}")
        app = latency.Counted(latency.reference(workdir, name, keys), late)
        rows.append(latency.run_case(name, app, keys, workdir, *options))
    near, late = rows[0].pop("verdicts"), rows[1].pop("verdicts")
    differ = {
        k: f"{near.get(k)} -> {late.get(k)}" for k in near | late if near.get(k) != late.get(k)
    }
    ratio = rows[1]["seconds"] / rows[0]["seconds"]
    return {"delay": delay, "cases": rows, "ratio": ratio, "same_verdicts": not differ,
            "differ": differ}  # fmt: skip


def deep(workdir: Path, examples: int = 1000, *options: str) -> dict[str, Any]:
    """A whole default run at --examples `examples` (a certification), with the default's workers:
    wall time, requests, the main process's peak memory."""
    log(f"default suite at --examples {examples} {' '.join(options)}")
    run = run_suite(workdir, f"--examples={examples}", *options, timeout=DEEP_TIMEOUT)
    report = workdir / "reports" / "conformance.json"
    document = json.loads(report.read_text()) if report.exists() else {}
    run.pop("profile", None)  # the default's workers stamp nothing: the controller's is no profile
    return {**run, "examples": examples, "seconds": run["wall"],
            "requests": document.get("transport", {}).get("requests"),
            "peak_memory_mib": document.get("peak_memory_mib")}  # fmt: skip


def median_of(runs: list[dict[str, Any]], key: str) -> float:
    values = [r["layers"][key] for r in runs if "layers" in r]
    return statistics.median(values) if values else float("nan")


def layers(workdir: Path, repeat: int) -> dict[str, Any]:
    runs = []
    for i in range(repeat):
        log(f"default suite, run {i + 1}/{repeat}")
        runs.append(run_suite(workdir / f"default-{i}"))
    summary = {k: median_of(runs, k) for k in ("startup", "property", "scenario", "reports")}
    summary["total"] = statistics.median(r["wall"] for r in runs)
    log("default suite in one process, profiled")  # the default spreads over the cores
    profiled = run_suite(workdir / "one-process", "--concurrency=1")
    return {"runs": runs, "median": summary, "profiled": profiled}


def growth(workdir: Path, depths: list[int], default_runs: list[dict[str, Any]]) -> list[dict]:
    first = default_runs[0]
    rows = [{"setting": "--examples 10, no xdist", **first, "reused": True}]
    for depth in depths[1:]:
        log(f"default suite at --examples {depth}")
        run = run_suite(workdir / f"examples-{depth}", "--examples", str(depth))
        rows.append({"setting": f"--examples {depth}", **run})
    for workers in (1, 2):
        log(f"default suite with -n {workers}")
        run = run_suite(workdir / f"xdist-{workers}", "-n", str(workers))
        rows.append({"setting": f"-n {workers} (pytest-xdist)", **run})
    return rows


# --- the counting reverse proxy -----------------------------------------------------------------

HOP_BY_HOP = {
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
    "trailers", "transfer-encoding", "upgrade",
}  # fmt: skip


class CountingProxy:
    """A loopback reverse proxy that forwards every request to `upstream` and counts them.
    Answers without a Content-Length (SSE streams) are passed on chunk by chunk as they come."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.count = 0
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            upstream: http.client.HTTPConnection | None = None  # one per client connection

            def forward(self) -> None:
                with proxy.lock:
                    proxy.count += 1
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                for attempt in (1, 2):  # a kept upstream connection may have been closed: once more
                    if self.upstream is None:
                        self.upstream = http.client.HTTPConnection(
                            proxy.host, proxy.port, timeout=60
                        )
                    try:
                        self.upstream.request(self.command, self.path, body=body, headers=headers)
                        answer = self.upstream.getresponse()
                        break
                    except (OSError, http.client.HTTPException):
                        self.drop_upstream()
                        if attempt == 2:
                            self.close_connection = True
                            return
                try:
                    self.relay(answer)
                    if answer.will_close:
                        self.drop_upstream()
                except (OSError, http.client.HTTPException):  # the client went away mid-answer
                    self.drop_upstream()
                    self.close_connection = True

            def drop_upstream(self) -> None:
                if self.upstream is not None:
                    self.upstream.close()
                    self.upstream = None

            def finish(self) -> None:
                self.drop_upstream()
                super().finish()

            def relay(self, answer: http.client.HTTPResponse) -> None:
                self.send_response_only(answer.status, answer.reason)
                length = answer.getheader("Content-Length")
                for name, value in answer.getheaders():
                    if name.lower() not in HOP_BY_HOP:
                        self.send_header(name, value)
                bodiless = self.command == "HEAD" or answer.status in (204, 304)
                if length is not None or bodiless:
                    self.end_headers()
                    content = answer.read()  # read even when empty: the connection is reused
                    if not bodiless:
                        self.wfile.write(content)
                    return
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                while chunk := answer.read1(65536):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = forward
            do_TRACE = do_CONNECT = forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def take(self) -> int:
        with self.lock:
            count, self.count = self.count, 0
        return count

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# --- st run -------------------------------------------------------------------------------------


@dataclass
class StResult:
    exit: int | None
    seconds: float
    kinds: set[str] = field(default_factory=set)  # "operation | check" of each failure
    problem: str = ""
    cases: int = 0  # test cases st generated (its own count)


def st_command() -> list[str]:
    st = Path(sys.executable).with_name("st")
    return [str(st)] if st.exists() else [sys.executable, "-m", "schemathesis.cli"]


def st_run(base_url: str, token: str, workdir: Path, timeout: float = ST_TIMEOUT) -> StResult:
    """`st run` on spec/openapi.yaml against `base_url`, configured by bench/schemathesis.toml."""
    workdir.mkdir(parents=True, exist_ok=True)
    report = workdir / "st.json"
    command = [*st_command(), "--config-file", str(ST_CONFIG), "run", str(SPEC), "--url", base_url]
    command += ["--report", "json", "--report-json-path", str(report), "--no-color"]
    env = clean_env(BENCH_ST_TOKEN=token)  # the child's environment only; never printed
    started = time.monotonic()
    try:
        with (workdir / "st.log").open("w") as out:
            done = subprocess.run(
                command, cwd=workdir, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=timeout
            )
        result = StResult(done.returncode, time.monotonic() - started)
    except subprocess.TimeoutExpired:
        result = StResult(None, time.monotonic() - started, problem=f"timed out ({timeout:g} s)")
    if report.exists():
        document = json.loads(report.read_text(encoding="utf-8"))
        result.kinds = failure_kinds(document)
        result.cases = int(document.get("test_cases", {}).get("generated", 0))
    elif not result.problem:
        result.problem = f"no JSON report (exit {result.exit})"
    return result


def failure_kinds(document: dict[str, Any]) -> set[str]:
    """Each failure (and error) st reported, as `operation | code title`, from its JSON report."""
    kinds: set[str] = set()
    for failure in document.get("failures", []):
        what = f"{failure.get('code', '')} {failure.get('title', failure.get('type', ''))}".strip()
        kinds.update(f"{operation} | {what}" for operation in failure.get("operations", []))
    for error in document.get("errors", []):
        text = error.get("title") or error.get("message") or json.dumps(error)[:120]
        label = error.get("label") or error.get("operation") or "-"
        kinds.add(f"{label} | error: {text}")
    return kinds


# --- throughput ---------------------------------------------------------------------------------


def throughput(workdir: Path) -> dict[str, Any]:
    """The property layer and st run against one reference server behind the counting proxy."""
    workdir.mkdir(parents=True, exist_ok=True)
    keys = tokens()
    server = embedded.start(keys, workdir / "reference.db")
    proxy = CountingProxy(server.base_url)
    try:
        log("property layer through the counting proxy")
        command = [sys.executable, "-m", "pytest", "-q", *PROPERTY_LAYER, "--base-url", proxy.url]
        command += [f"--token={keys[0]}", f"--alt-token={keys[1]}"]
        command += ["--report-dir", str(workdir / "reports")]
        started = time.monotonic()
        try:
            with (workdir / "property.log").open("w") as out:
                done = subprocess.run(
                    command, cwd=ROOT, env=clean_env(), stdout=out, stderr=subprocess.STDOUT,
                    timeout=SUITE_TIMEOUT,
                )  # fmt: skip
            suite_exit: int | None = done.returncode
        except subprocess.TimeoutExpired:
            suite_exit = None
        suite_seconds, suite_requests = time.monotonic() - started, proxy.take()
        log("st run through the counting proxy")
        st = st_run(proxy.url, keys[0], workdir / "st")
        st_requests = proxy.take()
    finally:
        proxy.stop()
        server.stop()
    suite_rate = suite_requests / suite_seconds
    st_rate = st_requests / st.seconds
    return {
        "suite": {"requests": suite_requests, "seconds": suite_seconds, "rate": suite_rate,
                  "exit": suite_exit},
        "st": {"requests": st_requests, "seconds": st.seconds, "rate": st_rate, "exit": st.exit,
               "cases": st.cases, "problem": st.problem},
        "ratio": suite_rate / st_rate if st_rate else float("nan"),
    }  # fmt: skip


# --- detection ----------------------------------------------------------------------------------


def st_against(name: str | None, workdir: Path) -> StResult:
    """st run against a fresh reference server (with `--mutant name`, or plain)."""
    workdir.mkdir(parents=True, exist_ok=True)
    keys = tokens()
    extra = ["--mutant", name] if name else []
    started = time.monotonic()
    try:
        server = serve.start_server(keys, workdir / "reference.db", extra_args=extra)
    except embedded.ServerStartError as exc:
        return StResult(None, time.monotonic() - started, problem=f"server: {exc}")
    try:
        return st_run(server.base_url, keys[0], workdir / "st")
    finally:
        server.stop()


def detection(workdir: Path, jobs: int, names: list[str]) -> dict[str, Any]:
    """Every mutant (or those named): the suite (kill-table cases) and st run alone."""
    log("st run against the plain reference (its baseline)")
    baseline = st_against(None, workdir / "st-plain")
    cases = killtable.cases(names, kinds=(killtable.MUTANT,))
    log(f"{len(cases)} mutants: the suite's kill-table cases, {jobs} at a time")
    started = time.monotonic()
    outcomes = killtable.run_cases(cases, workdir / "suite", jobs, CASE_TIMEOUT)
    suite_wall = time.monotonic() - started
    log(f"{len(cases)} mutants: st run, {jobs} at a time")
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {c.name: pool.submit(st_against, c.name, workdir / "st" / c.name) for c in cases}
        st_results = {name: future.result() for name, future in futures.items()}
    st_wall = time.monotonic() - started
    rows = []
    for outcome in outcomes:
        st = st_results[outcome.case.name]
        new = sorted(st.kinds - baseline.kinds)
        rows.append(
            {
                "mutant": outcome.case.name,
                "expected": list(outcome.case.expected),
                "suite_caught": outcome.result in ("killed", "inexact"),
                "suite_result": outcome.result,
                "suite_seconds": outcome.seconds,
                "suite_selection": " ".join(outcome.case.pytest_args),
                "st_caught": bool(st.exit) and bool(new),
                "st_exit": st.exit,
                "st_new_failures": new,
                "st_seconds": st.seconds,
                "st_problem": st.problem,
            }
        )
    return {
        "st_baseline": {"exit": baseline.exit, "kinds": sorted(baseline.kinds),
                        "seconds": baseline.seconds, "problem": baseline.problem},
        "rows": rows,
        "suite_wall": suite_wall,
        "st_wall": st_wall,
        "jobs": jobs,
    }  # fmt: skip


# --- output -------------------------------------------------------------------------------------


def s(value: float | None) -> str:
    return "-" if value is None or value != value else f"{value:.1f}"


def markdown(data: dict[str, Any]) -> str:
    m = data["machine"]
    out = ["# Benchmark", ""]
    out.append(
        f"{m['date']}; {m['nproc']} cores, {m['cpu']}, Python {m['python']}; load average "
        f"{m['load_at_start']:.1f} at the start, {m['load_at_end']:.1f} at the end (a shared "
        f"machine: other work ran at the same time); mode {data['mode']}; "
        f"{data['wall']:.0f} s in all."
    )
    out += ["", f"## Default suite, by layer (median of {data['repeat']}; {SUITE_SETTINGS})", ""]
    med = data["layers"]["median"]
    out += ["| startup | property | scenario | reports | total (wall) | target |", "|---" * 6 + "|"]
    met = "met" if med["total"] <= 60 else "not met"
    out.append(
        f"| {s(med['startup'])} s | {s(med['property'])} s | {s(med['scenario'])} s | "
        f"{s(med['reports'])} s | {s(med['total'])} s | about 60 s or less: {met} |"
    )
    out += ["", "Layers from one run's timestamps (bench/bench_timing.py): startup = launch to the "
            "first test's call (the embedded server starts in its set-up); property and scenario "
            "= sums of set-up + call + teardown; reports = pytest_sessionfinish. Total is the "
            "process wall time, so it also holds collection and exit.", ""]  # fmt: skip
    if "throughput" in data:
        t = data["throughput"]
        met = "met" if t["ratio"] >= 0.8 else "not met"
        out += ["## Throughput (requests at the target per wall second of each process)", ""]
        out += ["| | requests | seconds | requests/s |", "|---|---|---|---|"]
        out.append(f"| property layer (pytest) | {t['suite']['requests']} | "
                   f"{s(t['suite']['seconds'])} | {s(t['suite']['rate'])} |")  # fmt: skip
        out.append(f"| `st run` | {t['st']['requests']} | {s(t['st']['seconds'])} | "
                   f"{s(t['st']['rate'])} |")  # fmt: skip
        out += ["", f"Ratio {t['ratio']:.2f} (target at least 0.8: {met}). `st run`: "
                f"{ST_SETTINGS}.", ""]  # fmt: skip
    out += profile_markdown(data)
    if "detection" in data:
        out += detection_markdown(data["detection"])
    out += ["## Growth (default suite, wall seconds, one run each)", ""]
    out += ["| setting | wall | exit |", "|---|---|---|"]
    for row in data["growth"]:
        note = " (run 1 above)" if row.get("reused") else ""
        out.append(f"| {row['setting']}{note} | {s(row['wall'])} s | {row.get('exit')} |")
    out.append("")
    return "\n".join(out)


def profile_markdown(data: dict[str, Any]) -> list[str]:
    """Where a default run's time goes, the reference's raw rate beside it, a far target, depth."""
    out: list[str] = []
    run = data["layers"].get("profiled") or data["layers"]["runs"][0]
    if "profile" in run:
        out += [
            "## Where a default run's time goes (`pytest --concurrency=1`, embedded reference:"
            f" the default's work in one process, {s(run['wall'])} s wall)",
            "",
        ]
        out += profile_table(run["profile"])
    if "raw" in data:
        r = data["raw"]
        out += [f"The same reference's limit, measured in this run: one client's tight loop of "
                f"GETs of a thread on one kept connection, {r['requests']} requests in "
                f"{s(r['seconds'])} s: {r['rate']:.0f} per second (client CPU "
                f"{r['client_cpu_per_request'] * 1000:.2f} ms per request; statuses "
                f"{r['statuses']}).", ""]  # fmt: skip
    if "far" in data:
        f = data["far"]
        out += [f"## A far target: every answer {f['delay'] * 1000:.0f} ms late (bench/latency.py,"
                " one run each, the same counting middleware on both sides)", ""]  # fmt: skip
        out += ["| case | options | wall s | requests | requests/s | exit |", "|---" * 6 + "|"]
        for c in f["cases"]:
            out.append(f"| {c['case']} | {c['options']} | {s(c['seconds'])} | {c['requests']} | "
                       f"{s(c['requests_per_second'])} | {c['exit']} |")  # fmt: skip
        differ = "; ".join(f"{k} {v}" for k, v in sorted(f.get("differ", {}).items()))
        out += ["", f"Ratio {f['ratio']:.2f}; the same verdict for every requirement: "
                f"{'yes' if f['same_verdicts'] else 'no (' + differ + ')'}.", ""]  # fmt: skip
    if "deep" in data:
        d = data["deep"]
        out += [f"## A certification: --examples {d['examples']}, the default's workers", ""]
        out += [f"{s(d['seconds'])} s wall, {d['requests']} requests, peak memory "
                f"{d['peak_memory_mib']} MiB (the main process; each worker its own), exit "
                f"{d['exit']}.", ""]  # fmt: skip
        if "profile" in d:
            out += profile_table(d["profile"])
    return out


def profile_table(prof: dict[str, Any]) -> list[str]:
    out: list[str] = []
    out += ["| phase | wall s | client CPU s |", "|---|---|---|"]
    for name, spent in prof["phases"].items():
        out.append(f"| {name} | {s(spent['wall'])} | {s(spent['cpu'])} |")
    out += ["", f"Wall {s(prof['wall'])} s: client CPU {s(prof['client_cpu'])} s, waiting "
            f"{s(prof['waiting'])} s (wall minus client CPU); the embedded reference's CPU "
            f"{s(prof['server_cpu'])} s. {prof['requests']} requests: "
            f"{prof['requests_per_second']:.0f} per second, client CPU "
            f"{prof['cpu_per_request'] * 1000:.1f} ms per request (start-up included; "
            f"{prof['tests_cpu_per_request'] * 1000:.1f} ms in the tests).", ""]  # fmt: skip
    return out


def results_page(data: dict[str, Any]) -> str:
    """docs/benchmark-results.md: the machine, then the figures (never written by hand)."""
    m = data["machine"]
    head = ["# Benchmark results", "",
            f"Written by `python bench/run.py --publish` ({data['mode']} mode) on "
            f"{m['date']}: {m['nproc']} cores ({m['cpu']}), Python {m['python']}, load average "
            f"{m['load_at_start']:.1f} at the start and {m['load_at_end']:.1f} at the end. "
            "How each figure is measured: [benchmark.md](benchmark.md), "
            "[bench/README.md](../bench/README.md).", ""]  # fmt: skip
    med = data["layers"]["median"]
    head += [f"Default run (`pytest`, embedded reference): {s(med['total'])} s wall, median of "
             f"{data['repeat']}.", ""]  # fmt: skip
    kept = audit_scale.kept_section(PUBLISHED.read_text(encoding="utf-8")) if (
        PUBLISHED.is_file()) else ""  # fmt: skip
    return "\n".join(head + profile_markdown(data)) + (f"\n{kept}" if kept else "")


def detection_markdown(d: dict[str, Any]) -> list[str]:
    base = d["st_baseline"]
    rows = d["rows"]
    out = ["## Detection: every mutant, the suite vs `st run` alone", ""]
    out.append(
        f"`st run` against the plain reference: exit {base['exit']}, "
        f"{len(base['kinds'])} failure kinds (its baseline; a mutant counts as caught by st only "
        f"with a failure kind, operation + check, not in it). The suite: the kill-table case of "
        f"each mutant (its selection of the suite, judged by requirement ID; 'inexact' = caught "
        f"with extra findings). {d['jobs']} at a time; seconds include the server start."
    )
    out += ["", "| mutant | requirement | suite | s | st run | s |", "|---|---|---|---|---|---|"]
    for r in rows:
        suite = ("caught" if r["suite_caught"] else "missed") + f" ({r['suite_result']})"
        st = "caught" if r["st_caught"] else "missed"
        if r["st_problem"]:
            st += f" ({r['st_problem']})"
        out.append(
            f"| {r['mutant']} | {', '.join(r['expected'])} | {suite} | {s(r['suite_seconds'])} "
            f"| {st} | {s(r['st_seconds'])} |"
        )
    both = sum(r["suite_caught"] and r["st_caught"] for r in rows)
    suite_only = sum(r["suite_caught"] and not r["st_caught"] for r in rows)
    st_only = [r["mutant"] for r in rows if r["st_caught"] and not r["suite_caught"]]
    out += ["", f"Suite {sum(r['suite_caught'] for r in rows)}/{len(rows)}, st run "
            f"{sum(r['st_caught'] for r in rows)}/{len(rows)}; both {both}, the suite only "
            f"{suite_only}, st only {len(st_only)}{': ' + ', '.join(st_only) if st_only else ''}. "
            f"Target (the suite catches all st catches): {'met' if not st_only else 'not met'}. "
            f"Wall: suite {d['suite_wall']:.0f} s, st {d['st_wall']:.0f} s.", ""]  # fmt: skip
    return out


# --- main ---------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="1 run, depths 10 and 50, detection on 10 mutants"
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="detection jobs")
    parser.add_argument("--report-dir", type=Path, default=ROOT / "reports")
    parser.add_argument(
        "--skip", nargs="*", default=[], choices=["throughput", "detection", "raw", "far", "deep"]
    )
    parser.add_argument(
        "--publish", action="store_true", help=f"also write {PUBLISHED.relative_to(ROOT)}"
    )
    parser.add_argument("--mutants", nargs="*", help="detection on these mutants only")
    parser.add_argument("--workdir", type=Path, help="keep the runs' logs here (default: temp)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    data: dict[str, Any] = {"machine": machine(), "mode": "quick" if args.quick else "default"}
    data["repeat"] = 1 if args.quick else 3
    with tempfile.TemporaryDirectory(prefix="bench-") as temp:
        workdir = args.workdir or Path(temp)
        data["layers"] = layers(workdir / "layers", data["repeat"])
        if "raw" not in args.skip:
            data["raw"] = raw_rate(workdir / "raw")
        if "far" not in args.skip:
            data["far"] = far_target(workdir / "far")
        if "throughput" not in args.skip:
            data["throughput"] = throughput(workdir / "throughput")
        if "detection" not in args.skip:
            quick = QUICK_MUTANTS if args.quick else []
            names = args.mutants if args.mutants is not None else quick
            data["detection"] = detection(workdir / "detection", args.jobs, names)
        depths = [10, 50] if args.quick else [10, 50, 200]
        data["growth"] = growth(workdir / "growth", depths, data["layers"]["runs"])
        if "deep" not in args.skip and not args.quick:
            data["deep"] = deep(workdir / "deep")
    data["machine"]["load_at_end"] = os.getloadavg()[0]
    data["wall"] = time.monotonic() - started
    text = markdown(data)
    args.report_dir.mkdir(parents=True, exist_ok=True)
    (args.report_dir / "bench.md").write_text(text, encoding="utf-8")
    document = json.dumps(data, indent=2, default=sorted) + "\n"
    (args.report_dir / "bench.json").write_text(document, encoding="utf-8")
    print(text)
    print(f"written: {args.report_dir / 'bench.md'}, {args.report_dir / 'bench.json'}")
    if args.publish:
        PUBLISHED.write_text(results_page(data) + "\n", encoding="utf-8")
        print(f"written: {PUBLISHED}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
