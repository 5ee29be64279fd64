"""Benchmark: the suite's speed as ratios measured in one run, side by side with schemathesis
alone and with its floors.

    python bench/run.py [--quick] [--publish] [--also detection growth cprofile] [--skip ...]
                        [--jobs N] [--mutants NAME ...] [--workdir DIR] [--report-dir DIR]

The default mode measures, against the reference, and writes reports/bench.md + bench.json (with
--publish also docs/benchmark-results.md, its side-by-side table first: bench/page.py):
- throughput: the property layer (its default workers) and `st run` (bench/schemathesis.toml: the
  same document, depth, phases, generation mode and checks), one after the other against one
  reference served in this process behind latency.py's counting middleware: requests it saw,
  wall seconds and client CPU seconds (each child's, its workers included) of each;
- layers: the default suite (`pytest`, no options) and the same work in one process
  (--concurrency=1, profiled by bench/bench_timing.py: start-up, collection, reference start,
  generation, sending, reading and judging, reports; wall and client CPU), alternately, 3 times
  each (1 with --quick): the medians' ratio; the default run's floor: the one-process start-up
  plus the default run's requests at the raw rate;
- raw: the same reference under one client's tight loop of GETs (the limit);
- far: latency.py's loopback and 120 ms cases, one run each; each test's requests counted in
  every worker (bench_timing's BENCH_CHAINS_OUT): the far run's floor is its longest chain (the
  most requests of one test that ran one after another) times the round trip;
- deep: a run at --examples 1000 with the default's workers and in one process (not with --quick:
  the page says so).
--also adds sections outside the default mode: detection (for every mutant of the catalogue,
whether the suite catches it, the kill-table machinery, and whether `st run` alone does, with a
failure kind it did not report against the plain reference; the better part of an hour) and
growth (--examples 10, 50, 200 and pytest-xdist -n 1, -n 2) and cprofile (one more run in one
process under cProfile on a CPU clock: its own CPU seconds by package, the costliest functions).
Every suite run is the project's one runner's (proof/suiterun.py's run_suite: a checkout's pytest,
the tokens in its environment only), each in a process of its own, never forked (its start-up and
CPU are measured); requests are counted by latency.py's middleware (`Counted`, which also makes
the far target's answers late). Every subprocess has a timeout. The token is never printed.
"""

from __future__ import annotations

import argparse
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
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
sys.path.insert(0, str(ROOT / "src"))  # a fresh clone without `pip install -e` still imports
sys.path.insert(0, str(BENCH))  # its sibling scripts

import audit_scale  # noqa: E402
import httpx  # noqa: E402
import latency  # noqa: E402  (it puts selftests/support on the path: safety_support)
import page  # noqa: E402
import safety_support  # noqa: E402

from assistant_conformance.proof import killtable, serve, suiterun  # noqa: E402
from assistant_conformance.reference import embedded  # noqa: E402
from assistant_conformance.reference.connectors import Endpoint  # noqa: E402
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
    "create-thread-200",
    "search-threads-no-auth",
    "kb-permission-any-string",
    "empty-bulk-500",
    "stream-never-ends",
    "cancel-does-nothing",
    "wait-returns-early",
    "process-never-starts",
    "messages-ignore-limit",
    "thread-patch-not-persisted",
]
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


def bench_run(
    workdir: Path,
    *args: str,
    target: Endpoint | None = None,
    timeout: float = SUITE_TIMEOUT,
    timed: bool = True,
    **extra: str,
) -> tuple[suiterun.SuiteResult, float]:
    """The suite as every runner of the project runs it (proof/suiterun.py: a checkout's `pytest`,
    the tokens in its environment only) with bench_timing loaded (unless not `timed`), `args`,
    and `extra` in its environment, in a process of its own (`fresh`: its start-up and CPU are
    what is measured); its result and its CPU seconds (its workers' included)."""
    pythonpath = os.pathsep.join(filter(None, [str(BENCH), os.environ.get("PYTHONPATH", "")]))
    options = suiterun.SuiteOptions(
        workdir / "reports",
        ("-p", "bench_timing", *args) if timed else args,
        log=workdir / "pytest.log",
        timeout=timeout,
        env={"PYTHONPATH": pythonpath, **extra},
        checkout=ROOT,
        fresh=True,
    )
    workdir.mkdir(parents=True, exist_ok=True)
    cpu_before = children_cpu()
    done = suiterun.run_suite(target, options)
    return done, children_cpu() - cpu_before


def run_suite(
    workdir: Path, *args: str, timeout: float = SUITE_TIMEOUT, **extra: str
) -> dict[str, Any]:
    """One `pytest` of the default suite (embedded reference) with `args` (and `extra` in its
    environment); wall time and layers."""
    timing = workdir / "timing.json"
    launched = time.time()
    done, cpu = bench_run(workdir, *args, timeout=timeout, BENCH_TIMING_OUT=str(timing), **extra)
    wall = time.time() - launched
    status = done.returncode
    result: dict[str, Any] = {"args": list(args), "exit": status, "wall": wall, "cpu": cpu}
    if status is None:
        result["problem"] = f"timed out after {timeout:g} s"
    document = done.document
    result["requests"] = document.transport.requests if document else None
    result["peak_memory_mib"] = document.peak_memory_mib if document else None
    result["workers"] = document.workers if document else None
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
        "start-up (interpreter, imports, options)": (
            stamps["configured"] - launched,
            stamps["configured_cpu"],
        ),
        "collection": span("collect_start", "collect_end"),
        "embedded reference start": (server_start, None),
        "generation (hypothesis, schemathesis)": (generation, None),
        "sending (inside the transports: waiting for answers)": (
            stamps["sending"],
            stamps["sending_cpu"],
        ),
        "reading, judging, the tests' own work": (rest, None),
        "tests in all": (tests_wall, tests_cpu),
        "reports": span("finish_start", "finish_end"),
        "exit": (wall - (stamps["unconfigured"] - launched), None),
    }
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
        "cases": {k: stamps.get(f"cases_{k}") for k in ("run", "tested", "sent")},
    }


# --- where the client CPU goes -----------------------------------------------------------------

# What a function's file says of its package: the first that matches names the group.
CPU_GROUPS = (
    ("hypothesis", "/hypothesis/"),
    ("schemathesis", "/schemathesis/"),
    ("the suite (assistant_conformance)", "/assistant_conformance/"),
    ("pytest, pluggy, xdist", ("/_pytest/", "/pluggy/", "/xdist/", "/execnet/")),
    (
        "HTTP clients (requests, urllib3, httpx, httpcore)",
        ("/requests/", "/urllib3/", "/httpx/", "/httpcore/", "/h11/"),
    ),
    ("jsonschema_rs, pydantic, yaml", ("jsonschema", "/pydantic", "/yaml/")),
    ("the standard library", "/lib/python3"),
)


def cpu_profile(workdir: Path) -> dict[str, Any]:
    """One default run in one process profiled by cProfile on a CPU clock (bench_timing.py's
    BENCH_CPROFILE_OUT): each function's own CPU seconds, summed by package (CPU_GROUPS), and the
    functions that took the most. The profiler slows what it measures, Python-heavy code most:
    read the shares, not the seconds."""
    stats_file = workdir / "cpu.prof"
    log("default suite in one process, under cProfile")
    profiled = SUITE_TIMEOUT * 3  # the profiler slows the run 2 to 3 times
    run = run_suite(
        workdir, "--concurrency=1", timeout=profiled, BENCH_CPROFILE_OUT=str(stats_file)
    )
    if not stats_file.exists():
        return {"problem": f"no profile (exit {run['exit']})"}
    return {"wall": run["wall"], "requests": run["requests"], **cpu_by_package(stats_file)}


def cpu_by_package(stats_file: Path) -> dict[str, Any]:
    """A cProfile stats file's own seconds per function, summed by package, and the costliest."""
    import pstats

    stats = pstats.Stats(str(stats_file)).stats  # type: ignore[attr-defined]
    groups: dict[str, float] = {}
    functions = []
    for (filename, line, name), (_, _, own, _, _) in stats.items():
        group = next(
            (g for g, marks in CPU_GROUPS if any(m in filename for m in _marks(marks))),
            "built-ins (C functions: sockets, JSON, regular expressions, ...)"
            if filename == "~"
            else "other",
        )
        groups[group] = groups.get(group, 0.0) + own
        where = f"{filename.split('site-packages/')[-1].split('/src/')[-1]}:{line}"
        functions.append((own, f"{name} ({where})" if filename != "~" else name))
    functions.sort(reverse=True)
    return {
        "cpu": sum(groups.values()),
        "groups": dict(sorted(groups.items(), key=lambda kv: -kv[1])),
        "top": [{"function": name, "cpu": own} for own, name in functions[:12]],
    }


def _marks(marks: str | tuple[str, ...]) -> tuple[str, ...]:
    return (marks,) if isinstance(marks, str) else marks


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
    return {
        "requests": count,
        "seconds": elapsed,
        "rate": count / elapsed,
        "client_cpu_per_request": cpu / count,
        "statuses": sorted(statuses),
    }


# --- a far target -------------------------------------------------------------------------------


def far_target(workdir: Path, delay: float = 0.12) -> dict[str, Any]:
    """latency.py's two cases, one run each: the reference on loopback behind its counting
    middleware (the loopback default: a worker per core, at most 2) and the same with every answer
    `delay` late (--concurrency auto: the workers a remote target gets from its round trip). The
    far run's floor: its longest dependent chain (the most requests of one test that ran one after
    another: bench_timing's BENCH_CHAINS_OUT, in every worker) times the round trip `delay`."""
    workdir.mkdir(parents=True, exist_ok=True)
    keys = tokens()
    rows = []
    far = f"{delay * 1000:.0f} ms"
    for name, late, options in (("loopback", 0.0, ()), (far, delay, ("--concurrency=auto",))):
        log(f"far target: {name}")
        app = latency.Counted(latency.reference(workdir, name, keys), late)
        rows.append(chained_case(name, app, keys, workdir, *options))
    near, late = rows[0].pop("verdicts"), rows[1].pop("verdicts")
    differ = {
        k: f"{near.get(k)} -> {late.get(k)}" for k in near | late if near.get(k) != late.get(k)
    }
    chain = rows[1]["longest_chain"]
    return {
        "delay": delay,
        "cases": rows,
        "ratio": rows[1]["seconds"] / rows[0]["seconds"],
        "same_verdicts": not differ,
        "differ": differ,
        "chain": chain,
        "floor": chain["chain"] * delay if chain else None,
    }


def chained_case(
    name: str, app: latency.Counted, keys: list[str], workdir: Path, *options: str
) -> dict[str, Any]:
    """latency.run_case's run, with bench_timing counting each test's requests."""
    chains = workdir / f"{name}-chains.jsonl".replace(" ", "-")
    with safety_support.serve(app) as base_url:
        done, cpu = bench_run(
            workdir / name,
            "-p",
            "no:randomly",
            *options,
            target=Endpoint(base_url, tuple(keys)),
            BENCH_CHAINS_OUT=str(chains),
        )
    tests = (
        [json.loads(line) for line in chains.read_text().splitlines()] if chains.exists() else []
    )
    longest = max(tests, key=lambda test: test["chain"], default=None)
    return {
        "case": name,
        "options": " ".join(options),
        "seconds": done.seconds,
        "requests": app.count,
        "requests_per_second": app.count / done.seconds,
        "exit": done.returncode,
        "client_cpu": cpu,
        "workers": done.document.workers if done.document else None,
        "tests": len(tests),
        "longest_chain": longest,
        "verdicts": done.verdicts(),
    }


def deep(workdir: Path, examples: int = 1000) -> dict[str, Any]:
    """A whole default run at --examples `examples` (a certification), with the default's workers,
    and the same run in one process (--concurrency=1): wall time, requests, the main process's
    peak memory of each."""
    runs = {}
    for name, options in (("spread", ()), ("one process", ("--concurrency=1",))):
        log(f"default suite at --examples {examples}, {name}")
        folder = workdir / name.replace(" ", "-")
        run = run_suite(folder, f"--examples={examples}", *options, timeout=DEEP_TIMEOUT)
        run.pop("profile", None)
        runs[name] = {**run, "seconds": run["wall"]}
    spread, one = runs["spread"], runs["one process"]
    return {
        "examples": examples,
        **spread,
        "one_process": one,
        "ratio": ratio(spread["wall"], one["wall"]),
    }


def median_of(runs: list[dict[str, Any]], key: str) -> float:
    values = [r["layers"][key] for r in runs if "layers" in r]
    return statistics.median(values) if values else float("nan")


def layers(workdir: Path, repeat: int) -> dict[str, Any]:
    """The default run `repeat` times and the same work in one process (--concurrency=1,
    profiled) as often, alternately, so that a busy spell of the machine meets both."""
    runs, alone = [], []
    for i in range(repeat):
        log(f"default suite, run {i + 1}/{repeat}")
        runs.append(run_suite(workdir / f"default-{i}"))
        log(f"default suite in one process, profiled, run {i + 1}/{repeat}")
        alone.append(run_suite(workdir / f"one-process-{i}", "--concurrency=1"))
    summary = {k: median_of(runs, k) for k in ("startup", "property", "scenario", "reports")}
    summary["total"] = statistics.median(r["wall"] for r in runs)
    summary["one_process"] = statistics.median(r["wall"] for r in alone)
    summary["cpu"] = statistics.median(r["cpu"] for r in runs)
    summary["one_process_cpu"] = statistics.median(r["cpu"] for r in alone)
    return {"runs": runs, "median": summary, "profiled": alone[0], "one_process": alone}


def growth(workdir: Path, depths: list[int], default_runs: list[dict[str, Any]]) -> list[dict]:
    first = default_runs[0]
    rows = [{"setting": "--examples 10, no xdist", **first, "reused": True}]
    for depth in depths[1:]:
        log(f"default suite at --examples {depth}")
        run = run_suite(workdir / f"examples-{depth}", f"--examples={depth}")
        rows.append({"setting": f"--examples {depth}", **run})
    for workers in (1, 2):
        log(f"default suite with -n {workers}")
        run = run_suite(workdir / f"xdist-{workers}", "-n", str(workers))
        rows.append({"setting": f"-n {workers} (pytest-xdist)", **run})
    return rows


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
    """The property layer (the suite's default workers) and st run (one process), one after the
    other, against one reference served in this process behind latency.py's counting middleware:
    requests it saw, wall seconds and CPU seconds of each child (its workers included), and this
    process's own CPU meanwhile (the reference serving each side)."""
    workdir.mkdir(parents=True, exist_ok=True)
    keys = tokens()
    counted = latency.Counted(latency.reference(workdir, "throughput", keys))
    with safety_support.serve(counted) as base_url:
        log("property layer against the counted reference")
        before, served_before = counted.count, time.process_time()
        started = time.monotonic()
        endpoint = Endpoint(base_url, tuple(keys))
        done, suite_cpu = bench_run(workdir, *PROPERTY_LAYER, target=endpoint, timed=False)
        suite_seconds, suite_requests = time.monotonic() - started, counted.count - before
        suite_served = time.process_time() - served_before
        suite_exit = done.returncode
        log("st run against the counted reference")
        before, cpu_before, served_before = counted.count, children_cpu(), time.process_time()
        st = st_run(base_url, keys[0], workdir / "st")
        st_requests, st_cpu = counted.count - before, children_cpu() - cpu_before
        st_served = time.process_time() - served_before
    suite = side(suite_requests, suite_seconds, suite_cpu, suite_served)
    st_side = side(st_requests, st.seconds, st_cpu, st_served)
    return {
        "workers": done.document.workers if done.document else None,
        "suite": {**suite, "exit": suite_exit},
        "st": {**st_side, "exit": st.exit, "cases": st.cases, "problem": st.problem},
        "ratio": ratio(suite["rate"], st_side["rate"]),
    }


def side(requests: int, seconds: float, cpu: float, served: float) -> dict[str, Any]:
    """One side of the throughput comparison; `served`: the reference's CPU seconds meanwhile."""
    return {
        "requests": requests,
        "seconds": seconds,
        "rate": requests / seconds if seconds else float("nan"),
        "cpu": cpu,
        "cpu_per_request": cpu / requests if requests else float("nan"),
        "served": served,
        "served_per_request": served / requests if requests else float("nan"),
    }


def most_rate(cores: int, side_: dict[str, Any], cpu_per_request: float | None = None) -> float:
    """Requests/s when `cores` are busy all the time with the client's and the reference's CPU
    per request (the client's of `side_`, or `cpu_per_request`)."""
    client = side_["cpu_per_request"] if cpu_per_request is None else cpu_per_request
    return cores / (client + side_.get("served_per_request", 0.0))


def children_cpu() -> float:
    """CPU seconds of this process's children reaped so far (and of theirs they reaped)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b != b or a != a or not b:
        return None
    return a / b


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
        "st_baseline": {
            "exit": baseline.exit,
            "kinds": sorted(baseline.kinds),
            "seconds": baseline.seconds,
            "problem": baseline.problem,
        },
        "rows": rows,
        "suite_wall": suite_wall,
        "st_wall": st_wall,
        "jobs": jobs,
    }


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
    out += ["", *page.table(side_by_side(data, data.get("skipped", {})))]
    out += ["", f"## Default suite, by layer (median of {data['repeat']}; {SUITE_SETTINGS})", ""]
    med = data["layers"]["median"]
    out += ["| startup | property | scenario | reports | total (wall) |", "|---" * 5 + "|"]
    out.append(
        f"| {s(med['startup'])} s | {s(med['property'])} s | {s(med['scenario'])} s | "
        f"{s(med['reports'])} s | {s(med['total'])} s |"
    )
    out += [
        "",
        "Layers from one run's timestamps (bench/bench_timing.py; a spread run's workers stamp "
        "none: -): startup = launch to the first test's call (the embedded server starts in its "
        "set-up); property and scenario = sums of set-up + call + teardown; reports = "
        "pytest_sessionfinish. Total is the process wall time, so it also holds collection and "
        "exit.",
        "",
    ]
    out += profile_markdown(data)
    if "detection" in data:
        out += detection_markdown(data["detection"])
    if "growth" in data:
        out += ["## Growth (default suite, wall seconds, one run each)", ""]
        out += ["| setting | wall | exit |", "|---|---|---|"]
        for row in data["growth"]:
            note = " (run 1 above)" if row.get("reused") else ""
            out.append(f"| {row['setting']}{note} | {s(row['wall'])} s | {row.get('exit')} |")
        out.append("")
    return "\n".join(out)


def profile_markdown(data: dict[str, Any]) -> list[str]:
    """Where a default run's time goes, the reference's raw rate beside it, the property layer
    next to `st run`, a far target, depth."""
    out: list[str] = []
    run = data["layers"].get("profiled") or data["layers"]["runs"][0]
    if "profile" in run:
        out += [
            "## Where a default run's time goes (`pytest --concurrency=1`, embedded reference:"
            f" the default's work in one process, {s(run['wall'])} s wall)",
            "",
        ]
        out += profile_table(run["profile"])
    if "cpu_profile" in data:
        out += cpu_profile_markdown(data["cpu_profile"])
    if "raw" in data:
        r = data["raw"]
        out += [
            "The same reference's limit, measured in this run: one client's tight loop of GETs "
            f"of a thread on one kept connection, {r['requests']} requests in "
            f"{s(r['seconds'])} s: {r['rate']:.0f} per second (client CPU "
            f"{r['client_cpu_per_request'] * 1000:.2f} ms per request; statuses "
            f"{r['statuses']}).",
            "",
        ]
    if "throughput" in data:
        t = data["throughput"]
        out += [
            "## The property layer and `st run` (one reference served by this process, its "
            "requests counted by latency.py's middleware)",
            "",
            "| | requests | wall s | requests/s | client CPU s | ms per request | the "
            "reference's ms per request | exit |",
            "|---" * 8 + "|",
        ]
        for name, side in (("property layer (pytest)", t["suite"]), ("`st run`", t["st"])):
            served = side.get("served_per_request", float("nan")) * 1000
            out.append(
                f"| {name} | {side['requests']} | {s(side['seconds'])} | {s(side['rate'])} | "
                f"{s(side['cpu'])} | {side['cpu_per_request'] * 1000:.2f} | {served:.2f} | "
                f"{side['exit']} |"
            )
        out += ["", f"`st run`: {ST_SETTINGS}; {t['st']['cases']} cases generated.", ""]
    if "far" in data:
        f = data["far"]
        out += [
            f"## A far target: every answer {f['delay'] * 1000:.0f} ms late (bench/latency.py's "
            "cases, one run each, the same counting middleware on both sides)",
            "",
            "| case | options | workers | wall s | requests | requests/s | client CPU s | longest "
            "chain | exit |",
            "|---" * 9 + "|",
        ]
        for c in f["cases"]:
            chain = c.get("longest_chain") or {}
            longest = f"{chain.get('chain')} ({chain.get('test')})" if chain else "-"
            out.append(
                f"| {c['case']} | {c['options']} | {c.get('workers')} | {s(c['seconds'])} | "
                f"{c['requests']} | {s(c['requests_per_second'])} | {s(c.get('client_cpu'))} | "
                f"{longest} | {c['exit']} |"
            )
        differ = "; ".join(f"{k} {v}" for k, v in sorted(f.get("differ", {}).items()))
        same = "yes" if f["same_verdicts"] else f"no ({differ})"
        out += [
            "",
            f"Far / loopback {f['ratio']:.2f}; the same verdict for every requirement: {same}. "
            "The longest chain: the most requests of one test (set-up, call and teardown) that "
            "ran one after another, none overlapping the next (bench/bench_timing.py). Client "
            "CPU: the run's processes (the controller and its workers), not the reference's; "
            f"on {os.cpu_count()} cores it alone takes at least client CPU / {os.cpu_count()} "
            "of wall time, whatever the round trip.",
            "",
        ]
    if "deep" in data:
        d = data["deep"]
        out += [f"## A certification: --examples {d['examples']}", ""]
        out += ["| run | workers | wall s | requests | peak MiB (main process) | exit |"]
        out += ["|---" * 6 + "|"]
        for name, run in (("the default's workers", d), ("one process", d["one_process"])):
            out.append(
                f"| {name} | {run.get('workers')} | {s(run['wall'])} | {run['requests']} | "
                f"{run['peak_memory_mib']} | {run['exit']} |"
            )
        out.append("")
    return out


def cpu_profile_markdown(prof: dict[str, Any]) -> list[str]:
    if "problem" in prof:
        return [f"cProfile: {prof['problem']}.", ""]
    out = [
        "## Where the client CPU goes (cProfile on a CPU clock, one more run in one process, "
        f"{s(prof['wall'])} s wall under the profiler, {prof['requests']} requests)",
        "",
        "Each function's own CPU seconds, summed by package; the profiler slows what it "
        "measures (Python-heavy code most): read the shares, not the seconds.",
        "",
        "| package | CPU s | share |",
        "|---|---:|---:|",
    ]
    for group, cpu in prof["groups"].items():
        out.append(f"| {group} | {cpu:.1f} | {100 * cpu / prof['cpu']:.0f}% |")
    out += ["", "The functions that took the most (own CPU seconds):", ""]
    out += ["| function | CPU s |", "|---|---:|"]
    out += [f"| `{f['function']}` | {f['cpu']:.2f} |" for f in prof["top"]]
    return [*out, ""]


def profile_table(prof: dict[str, Any]) -> list[str]:
    out: list[str] = []
    out += ["| phase | wall s | client CPU s |", "|---|---|---|"]
    for name, spent in prof["phases"].items():
        out.append(f"| {name} | {s(spent['wall'])} | {s(spent['cpu'])} |")
    out += [
        "",
        f"Wall {s(prof['wall'])} s: client CPU {s(prof['client_cpu'])} s, waiting "
        f"{s(prof['waiting'])} s (wall minus client CPU); the embedded reference's CPU "
        f"{s(prof['server_cpu'])} s. {prof['requests']} requests: "
        f"{prof['requests_per_second']:.0f} per second, client CPU "
        f"{prof['cpu_per_request'] * 1000:.1f} ms per request (start-up included; "
        f"{prof['tests_cpu_per_request'] * 1000:.1f} ms in the tests).",
        "",
    ]
    cases = prof.get("cases") or {}
    if cases.get("run"):
        out += [
            f"The property tests' cases: Hypothesis ran {cases['run']} (explicit coverage cases, "
            f"generated cases, state-machine scenarios); {cases['tested']} stateless cases "
            f"reached the runner and it sent {cases['sent']} cases and steps, of the run's "
            f"{prof['requests']} requests (the rest: probes, the scenario tests, set-up, "
            "clean-up).",
            "",
        ]
    return out


def side_by_side(data: dict[str, Any], skipped: dict[str, str]) -> list[page.Row]:
    """The page's first table: each comparison as a ratio of two figures of this run, the figures
    beside it; a comparison not measured says why (`skipped`: section -> the option)."""

    def missing(section: str) -> str:
        return f"{page.NOT_MEASURED} ({skipped.get(section, 'not run')})"

    rows = []
    cores = data["machine"]["nproc"] or 1
    if t := data.get("throughput"):
        suite, st = t["suite"], t["st"]
        workers = f"{t.get('workers') or 'default'} workers"
        at_st_cost = ratio(most_rate(cores, suite, st["cpu_per_request"]), st["rate"])
        rows += [
            page.Row(
                "st-rate",
                ratio(suite["rate"], st["rate"]),
                f"{suite['rate']:.1f} vs {st['rate']:.1f} requests/s ({suite['requests']} "
                f"requests in {suite['seconds']:.1f} s, {workers}; {st['requests']} in "
                f"{st['seconds']:.1f} s, one process); the cores allow {s(at_st_cost)}x at "
                f"`st run`'s own client CPU per request",
                ratio(most_rate(cores, suite), st["rate"]),
            ),
            page.Row(
                "st-cpu",
                ratio(suite["cpu_per_request"], st["cpu_per_request"]),
                f"{suite['cpu_per_request'] * 1000:.2f} vs {st['cpu_per_request'] * 1000:.2f} "
                f"ms ({suite['cpu']:.1f} s vs {st['cpu']:.1f} s of client CPU)",
            ),
            page.Row(
                "st-wall",
                ratio(suite["seconds"], st["seconds"]),
                f"{suite['seconds']:.1f} s vs {st['seconds']:.1f} s",
            ),
        ]
    else:
        rows += [
            page.Row(key, None, missing("throughput")) for key in ("st-rate", "st-cpu", "st-wall")
        ]
    med = data["layers"]["median"]
    first = data["layers"]["runs"][0]
    rows.append(
        page.Row(
            "spread",
            ratio(med["total"], med["one_process"]),
            f"{med['total']:.1f} s ({first.get('workers')} workers) vs {med['one_process']:.1f} s "
            f"(medians of {data['repeat']}, alternately; CPU {med['cpu']:.1f} s vs "
            f"{med['one_process_cpu']:.1f} s, the reference's included)",
            ratio(med["cpu"] / cores, med["one_process"]),
        )
    )
    profile = data["layers"]["profiled"].get("profile")
    requests = statistics.median(r["requests"] or 0 for r in data["layers"]["runs"])
    if "raw" in data and profile:
        startup = profile["phases"]["start-up (interpreter, imports, options)"]["wall"]
        floor = startup + requests / data["raw"]["rate"]
        rows.append(
            page.Row(
                "floor",
                ratio(med["total"], floor),
                f"{med['total']:.1f} s vs {floor:.1f} s: {startup:.1f} s start-up + "
                f"{requests:.0f} requests at {data['raw']['rate']:.0f} per s",
            )
        )
    else:
        rows.append(page.Row("floor", None, missing("raw")))
    if (f := data.get("far")) and f.get("floor"):
        late, chain = f["cases"][1], f["chain"]
        # Besides the chain, the run waits at least its requests' round trips spread over its
        # workers, and works at least its client CPU spread over the cores.
        waited = late["requests"] * f["delay"] / (late["workers"] or 1)
        worked = late["client_cpu"] / cores
        rows.append(
            page.Row(
                "far",
                ratio(late["seconds"], f["floor"]),
                f"{late['seconds']:.1f} s ({late['workers']} workers) vs {f['floor']:.1f} s: "
                f"{chain['chain']} requests one after another in {chain['test']} x "
                f"{f['delay'] * 1000:.0f} ms; {late['requests']} round trips over "
                f"{late['workers']} workers take {waited:.1f} s, {late['client_cpu']:.1f} s "
                f"of client CPU over {cores} cores {worked:.1f} s",
                ratio(max(f["floor"], waited, worked), f["floor"]),
            )
        )
    else:
        rows.append(page.Row("far", None, missing("far")))
    if d := data.get("deep"):
        one = d["one_process"]
        rows.append(
            page.Row(
                "deep",
                d["ratio"],
                f"{d['wall']:.1f} s ({d.get('workers')} workers) vs {one['wall']:.1f} s "
                f"({d['requests']} and {one['requests']} requests; CPU {d['cpu']:.1f} s vs "
                f"{one['cpu']:.1f} s, the reference's included)",
                ratio(d["cpu"] / cores, one["wall"]),
            )
        )
    else:
        rows.append(page.Row("deep", None, missing("deep")))
    return rows


def results_page(data: dict[str, Any]) -> str:
    """docs/benchmark-results.md: the machine, the side-by-side table, then the figures behind it
    (never written by hand)."""
    m = data["machine"]
    load = data.get("load", {})
    head = [
        "# Benchmark results",
        "",
        f"Written by `python bench/run.py --publish` ({data['mode']} mode) on {m['date']}, "
        f"{data['wall']:.0f} s in all. How each figure is measured: [benchmark.md](benchmark.md), "
        "[bench/README.md](../bench/README.md).",
        "",
        f"CPU: {m['cpu']}, {m['nproc']} cores; Python {m['python']}; load average "
        f"{m['load_at_start']:.1f} at the start, {m['load_at_end']:.1f} at the end, "
        f"{load.get('low', float('nan')):.1f} to {load.get('high', float('nan')):.1f} while it "
        "ran (other work on the machine slows both sides of a ratio, not always alike).",
        "",
    ]
    head += page.table(side_by_side(data, data.get("skipped", {})))
    head += [
        "Goals, each a ratio in one run on a 2-core machine: the property layer at "
        "least 3x `st run`'s requests per second (the same document, depth, phases and target; "
        f"`st run`: {ST_SETTINGS}); the default run at most 0.55x the same work in one process; "
        "a 120 ms target at most 1.3x its chain floor; --examples 1000 at most 0.5x its "
        "one-process time. The rows without a goal say where the time goes. The cores allow: "
        "the best ratio this run's own CPU seconds leave possible on this machine's cores, each "
        "busy all the time (requests/s: the client's and the reference's CPU per request; the "
        "spread and --examples 1000 runs: their CPU over the cores against the one process's "
        "wall; the far target: the longest of its chain, its round trips over its workers and "
        "its client CPU over the cores); a goal beyond it is out of reach here at that CPU.",
        "",
    ]
    med = data["layers"]["median"]
    head += [
        f"Default run (`pytest`, embedded reference): {s(med['total'])} s wall, median of "
        f"{data['repeat']}.",
        "",
    ]
    text = PUBLISHED.read_text(encoding="utf-8") if PUBLISHED.is_file() else ""
    kept = audit_scale.kept_section(text)
    return "\n".join(head + profile_markdown(data)) + (f"\n{kept}" if kept else "")


class LoadWatch:
    """The machine's 1-minute load average every `every` seconds, in a thread, while a run goes."""

    def __init__(self, every: float = 10.0) -> None:
        self.samples = [os.getloadavg()[0]]
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.watch, args=(every,), daemon=True)
        self.thread.start()

    def watch(self, every: float) -> None:
        while not self.done.wait(every):
            self.samples.append(os.getloadavg()[0])

    def stop(self) -> dict[str, float]:
        self.done.set()
        self.thread.join()
        values = self.samples
        return {"low": min(values), "high": max(values), "mean": statistics.mean(values)}


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
    out += [
        "",
        f"Suite {sum(r['suite_caught'] for r in rows)}/{len(rows)}, st run "
        f"{sum(r['st_caught'] for r in rows)}/{len(rows)}; both {both}, the suite only "
        f"{suite_only}, st only {len(st_only)}{': ' + ', '.join(st_only) if st_only else ''}. "
        f"Target (the suite catches all st catches): {'met' if not st_only else 'not met'}. "
        f"Wall: suite {d['suite_wall']:.0f} s, st {d['st_wall']:.0f} s.",
        "",
    ]
    return out


# --- main ---------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="1 run of each, no --examples 1000 (the page says so)"
    )
    parser.add_argument(
        "--also",
        nargs="*",
        default=[],
        choices=["detection", "growth", "cprofile"],
        help="sections outside the default mode (detection: the better part of an hour; "
        "cprofile: one more run in one process, under cProfile)",
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="detection jobs")
    parser.add_argument("--report-dir", type=Path, default=ROOT / "reports")
    parser.add_argument(
        "--skip", nargs="*", default=[], choices=["throughput", "raw", "far", "deep"]
    )
    parser.add_argument(
        "--publish", action="store_true", help=f"also write {PUBLISHED.relative_to(ROOT)}"
    )
    parser.add_argument("--mutants", nargs="*", help="detection on these mutants only")
    parser.add_argument("--workdir", type=Path, help="keep the runs' logs here (default: temp)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    watch = LoadWatch()
    data: dict[str, Any] = {"machine": machine(), "mode": "quick" if args.quick else "default"}
    data["repeat"] = 1 if args.quick else 3
    data["skipped"] = {name: f"--skip {name}" for name in args.skip}
    if args.quick:
        data["skipped"].setdefault("deep", "--quick")
    with tempfile.TemporaryDirectory(prefix="bench-") as temp:
        workdir = args.workdir or Path(temp)
        if "throughput" not in args.skip:
            data["throughput"] = throughput(workdir / "throughput")
        data["layers"] = layers(workdir / "layers", data["repeat"])
        if "raw" not in args.skip:
            data["raw"] = raw_rate(workdir / "raw")
        if "far" not in args.skip:
            data["far"] = far_target(workdir / "far")
        if "deep" not in data["skipped"]:
            data["deep"] = deep(workdir / "deep")
        if "detection" in args.also:
            quick = QUICK_MUTANTS if args.quick else []
            names = args.mutants if args.mutants is not None else quick
            data["detection"] = detection(workdir / "detection", args.jobs, names)
        if "cprofile" in args.also:
            data["cpu_profile"] = cpu_profile(workdir / "cprofile")
        if "growth" in args.also:
            depths = [10, 50] if args.quick else [10, 50, 200]
            data["growth"] = growth(workdir / "growth", depths, data["layers"]["runs"])
    data["machine"]["load_at_end"] = os.getloadavg()[0]
    data["load"] = watch.stop()
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
        page.parse(PUBLISHED.read_text(encoding="utf-8"))  # what the self-test reads back
        print(f"written: {PUBLISHED}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
