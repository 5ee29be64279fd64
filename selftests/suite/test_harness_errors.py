"""A target the suite cannot work with ends the run with one clear line and exit 3, after a bounded
number of requests, each bounded by its timeout; a target that hangs is cut at its bounds and the
run still finishes. No clock is read here: what bounds a run is counted (the requests or
connections the target saw, the timeouts the findings name); the seconds such targets cost are
bench/hostile.py's.

Every case is a suite run in a subprocess against a small loopback server that misbehaves one
way; the runs go concurrently (one module fixture) to keep this module at a few seconds.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import jsonschema
import pytest
from reverse_proxy import ReverseProxy
from safety_support import TOKEN, Done, Misbehave, raw_server, reference_app, run_suite, serve
from starlette.types import ASGIApp, Receive, Scope, Send

from assistant_conformance.contract.resources import preflight_reads
from assistant_conformance.proof import mutants
from assistant_conformance.reference.errors import error_response
from assistant_conformance.report.conformance_json import report_schema
from assistant_conformance.suite.http.observe import LATE_TIMES
from assistant_conformance.suite.safety.guard import REJECTIONS_IN_A_ROW, TIMEOUTS_IN_A_ROW

FEW_TESTS = ("tests/scenario/test_assistants.py",)
MANY_TESTS = (
    "tests/scenario/test_conversations.py",
    "tests/scenario/test_threads.py",
    "tests/scenario/test_runs.py",
)
HANG_ONE = (
    "tests/scenario/test_threads.py::test_created_thread_is_readable_by_its_id",
    "tests/scenario/test_streams.py::test_stream_has_event_ids_ends_and_agrees_with_the_run",
    "tests/scenario/test_knowledge.py::test_processed_documents_reach_a_terminal_status[v1-kb]",
)
HOSTILE = (
    "tests/scenario/test_threads.py::test_history_grows_with_each_write_newest_first",
    "tests/scenario/test_threads.py::test_state_written_is_the_state_read",
    "tests/scenario/test_runs.py::test_run_list_pages_by_limit_and_offset",
)
# A subset server (no thread search): the assistants, and the one thread test that searches.
SUBSET = (
    "tests/scenario/test_assistants.py",
    "tests/scenario/test_threads.py::test_search_by_metadata_finds_exactly_the_matching_threads",
)
HOSTILE_MUTANTS = ("answer-drips", "answer-never-ends", "answer-cut-short")  # one server, all three
HOSTILE_PROPERTY = (
    "tests/property/test_property.py",
    "-k",
    "getThreadHistory or getThreadState or getRun",
)
# Every test of every layer that asks the dripping operation (thread history), spread over two
# workers: the run's count of deadlines missed is shared by its processes.
DRIPPING = "POST /api/ai/threads/{thread_id}/history"
WORKERS = 2
EVERY_DRIP = ("tests", "-k", "history", f"--concurrency={WORKERS}")
CAP = 1024 * 1024
REQUEST_TIMEOUT, PROCESS_TIMEOUT = 2.0, 3.0
PLAIN_HTTP_ANSWER = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


# The most an unusable target is asked before the run ends: connections its server accepted (tls,
# silent), requests it saw (wrong-base, through the test proxy), or the run's own count
# (conformance.json). The pre-flight stops at its first read without an answer, and reads no more
# than its reads; a token refused or requests unanswered stop each process after so many in a row.
MOST_ASKED = {
    "dns": 0,  # the name does not resolve: nothing to ask
    "tls": 1,
    "silent": 1,
    "wrong-base": len(preflight_reads()),
    "revoked": 1 + WORKERS * REJECTIONS_IN_A_ROW,
    "hang-all": 1 + WORKERS * TIMEOUTS_IN_A_ROW,
}


def asked_of(case: str, runs: dict[str, Done], asked: dict[str, Callable[[], int]]) -> int:
    """How often the case's target was asked: counted at the target where the run writes no
    report (the pre-flight ended it), else the run's own count of its requests."""
    if case in asked:
        return asked[case]()
    if case == "dns":
        return 0
    return int(runs[case].json()["transport"]["requests"])


class RevokedAfterPreflight:
    """Accepts the token once (the suite's preflight), then answers 401 to everything."""

    def __init__(self) -> None:
        self.answered = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        self.answered += 1
        if self.answered == 1:
            await error_response(200, "[]")(scope, receive, send)
        else:
            await error_response(401, "Unauthorized", {"WWW-Authenticate": "Bearer"})(
                scope, receive, send
            )


def _cases(
    stack: ExitStack, workdir: Path, asked: dict[str, Callable[[], int]]
) -> dict[str, Callable[[], Done]]:
    """Each case: a server started here, and the suite run against it; `asked`: what the servers
    of the cases that end at the pre-flight count (connections, requests)."""

    def run(name: str, base_url: str, *args: str, tests: tuple[str, ...] = FEW_TESTS) -> Done:
        options = ["--base-url", base_url, "--token", TOKEN, *args]
        return run_suite(workdir / name, *tests, *options, "-p", "no:randomly", timeout=120)

    connections: dict[str, list[int]] = {"tls": [], "silent": []}
    tls = stack.enter_context(raw_server(PLAIN_HTTP_ANSWER, connections["tls"]))
    silent = stack.enter_context(raw_server(None, connections["silent"]))
    for name, seen in connections.items():
        asked[name] = seen.__len__
    revoked = stack.enter_context(serve(RevokedAfterPreflight()))
    app: ASGIApp = reference_app(workdir / "hang-one")
    hang_one = stack.enter_context(
        serve(
            Misbehave(
                app,
                hang=r"GET /api/ai/threads/[^/]+",
                endless=r"POST /api/ai/threads/[^/]+/runs/stream",
                running=r"GET /api/ai/v1/kb/[^/]+/status",
            )
        )
    )
    hostile_app = reference_app(workdir / "hostile")
    for name in HOSTILE_MUTANTS:
        hostile_app = mutants.with_mutant(hostile_app, name)
    hostile = stack.enter_context(serve(hostile_app))
    complete = stack.enter_context(serve(reference_app(workdir / "complete")))
    counted = stack.enter_context(ReverseProxy(complete))
    asked["wrong-base"] = lambda: counted.count
    subset_app = mutants.with_mutant(reference_app(workdir / "subset"), "thread-search-missing")
    subset = stack.enter_context(serve(subset_app))
    everything_but_preflight = r"(?!POST /api/ai/threads/search$).*"
    hang_all = stack.enter_context(
        serve(Misbehave(reference_app(workdir / "hang-all"), hang=everything_but_preflight))
    )
    timeouts = (
        "--request-timeout",
        str(REQUEST_TIMEOUT),
        "--process-timeout",
        str(PROCESS_TIMEOUT),
    )
    return {
        "dns": lambda: run("dns", "http://conformance-target.invalid"),
        "tls": lambda: run("tls", f"https://127.0.0.1:{tls}"),
        "silent": lambda: run("silent", f"http://127.0.0.1:{silent}", "--request-timeout", "1"),
        "short-token": lambda: run_suite(
            workdir / "short", *FEW_TESTS, "--base-url", "http://127.0.0.1:9", "--token", "short"
        ),
        "revoked": lambda: run("revoked", revoked, tests=MANY_TESTS),
        "hang-one": lambda: run("hang-one", hang_one, *timeouts, tests=HANG_ONE),
        "hostile": lambda: run(
            "hostile", hostile, *timeouts, f"--max-response-size={CAP}", tests=HOSTILE
        ),
        "hostile-property": lambda: run(
            "hostile-property",
            hostile,
            *timeouts,
            f"--max-response-size={CAP}",
            tests=HOSTILE_PROPERTY,
        ),
        "drips-everywhere": lambda: run(
            "drips-everywhere", hostile, *timeouts, f"--max-response-size={CAP}", tests=EVERY_DRIP
        ),
        "wrong-base": lambda: run("wrong-base", f"{counted.url}/api/ai"),
        "subset": lambda: run("subset", subset, tests=SUBSET),
        "hang-all": lambda: run("hang-all", hang_all, "--request-timeout", "1", tests=MANY_TESTS),
        "hang-all-spread": lambda: run(
            "hang-all-spread", hang_all, "--request-timeout=1", "--concurrency=2", tests=MANY_TESTS
        ),
    }


@pytest.fixture(scope="module")
def asked() -> dict[str, Callable[[], int]]:
    """Per case, what its target counted (filled by `runs`)."""
    return {}


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory, asked: dict[str, Callable[[], int]]
) -> Iterator[dict[str, Done]]:
    workdir = tmp_path_factory.mktemp("harness")
    with ExitStack() as stack:
        cases = _cases(stack, workdir, asked)
        with ThreadPoolExecutor(max_workers=4) as pool:
            futures = {name: pool.submit(case) for name, case in cases.items()}
            yield {name: future.result() for name, future in futures.items()}


@pytest.mark.parametrize(
    ("case", "line"),
    [
        ("dns", "cannot resolve the host name 'conformance-target.invalid'"),
        ("tls", "TLS with https://127.0.0.1:"),
        ("silent", "accepted the connection but did not answer within 1 s"),
        ("revoked", "refused the run's token on 10 requests in a row (HTTP 401)"),
        ("hang-all", "stopped answering: 3 requests in a row, on "),
        ("wrong-base", "is --base-url the root of the API (without /api/ai)?"),
    ],
)
def test_unusable_target_is_one_line_and_exit_3(
    runs: dict[str, Done], asked: dict[str, Callable[[], int]], case: str, line: str
) -> None:
    run = runs[case]
    assert run.returncode == 3, run.output
    harness_lines = [x for x in run.output.splitlines() if line in x]
    assert harness_lines and "harness error" in harness_lines[0], run.output
    assert run.output.count("harness error:") <= 2  # the line, and pytest's own echo of it
    assert TOKEN not in run.output
    assert run.output.count("FAILED") + run.output.count("ERROR ") == 0, run.output
    # Bounded by its asks, each by its timeout (the line names it where one was waited out).
    assert asked_of(case, runs, asked) <= MOST_ASKED[case]


def test_a_target_that_lacks_an_operation_is_run_and_reported(runs: dict[str, Done]) -> None:
    """Thread search answers 405 (`Allow: GET`), the rest answers: not the address's fault. The
    run goes on, the missing operation fails its status requirement, the report lists it."""
    run = runs["subset"]
    assert run.returncode == 1, run.output
    assert "harness error" not in run.output
    doc = run.json()
    jsonschema.validate(doc, report_schema())
    (lacking,) = doc["absent_operations"]
    assert lacking["operation"] == "POST /api/ai/threads/search" and lacking["how"] == "pre-flight"
    verdicts = run.verdicts()
    assert verdicts["THR-STATUS"] == "fail" and verdicts["ASST-STATUS"] == "pass"
    assert verdicts["THR-SEARCH-METADATA"] == "skip"  # nothing to search with
    found = next(r for r in doc["requirements"] if r["id"] == "THR-STATUS")["findings"]
    assert all("POST /api/ai/threads/search answered 405" in f["actual"] for f in found), found
    assert "operations absent (1): POST /api/ai/threads/search answered 405" in run.output
    assert (
        "POST /api/ai/threads/search answered 405"
        in (run.report_dir / "conformance.md").read_text()
    )
    everything = [f["actual"] for r in doc["requirements"] for f in r["findings"]]
    assert not [f for f in everything if "no answer within" in f]  # nothing was waited out


def test_stopped_run_reports_why(runs: dict[str, Done]):
    """A run stopped mid-way still writes its reports, with the reason as the first problem; the
    tests after the stop did not run (no pile of failures)."""
    run = runs["revoked"]
    result = run.json()["result"]
    assert result["exit_status"] == 3 and result["outcome"] == "harness error"
    assert "in a row" in result["problems"][0]
    assert "untested" in run.json()["totals"]
    assert run.output.count(" failed") <= 1 and "passed" not in run.output


def test_short_token_is_a_usage_error(runs: dict[str, Done]):
    run = runs["short-token"]
    assert run.returncode == 4
    lines = [x for x in run.stderr.splitlines() if x.strip()]
    assert lines == ["ERROR: --token is shorter than 8 characters: so short a token cannot be kept "
                     "out of the reports"]  # fmt: skip
    assert "short" not in run.stdout


def test_operation_that_hangs_costs_one_request_timeout_and_the_run_finishes(runs: dict[str, Done]):
    run = runs["hang-one"]
    assert run.returncode in (1, 3), run.output
    durations = {
        case.get("name", ""): float(case.get("time", "0"))
        for case in ET.parse(run.report_dir / "junit.xml").getroot().iter("testcase")
    }
    assert len(durations) == len(HANG_ONE), durations  # every test ran and was reported
    # One timeout, not two: the single finding below (its seconds: bench/hostile.py).
    reasons = {r["id"]: r for r in run.json()["requirements"]}
    hangs = [f for f in reasons["THR-STATUS"]["findings"] if "no answer within" in f["actual"]]
    assert len(hangs) == 1 and reasons["THR-STATUS"].get("repeats", 0) == 0, hangs
    assert "GET /api/ai/threads/{thread_id}: no answer within 2 s (--request-timeout)" in run.output
    assert reasons["THR-STATUS"]["verdict"] == "fail"  # the operation did not answer: a finding
    assert any("no answer within 2 s" in (r["reason"] or "") for r in reasons.values())


def test_endless_stream_and_endless_processing_are_cut_and_reported(runs: dict[str, Done]):
    run = runs["hang-one"]
    verdicts = run.verdicts()
    assert verdicts["KB-PROCESS-COMPLETES"] in ("fail", "warn")  # reported, not waited out
    processing = next(r for r in run.json()["requirements"] if r["id"] == "KB-PROCESS-COMPLETES")
    # cut at --process-timeout (its seconds, and the stream's, are bench/hostile.py's)
    assert f"within {PROCESS_TIMEOUT:g} s" in processing["findings"][0]["expected"]
    ends = next(r for r in run.json()["requirements"] if r["id"] == "RUN-STREAM-ENDS")
    assert ends["verdict"] in ("fail", "warn") and "deadline" in ends["findings"][0]["actual"]


@pytest.mark.parametrize(
    ("requirement", "verdict", "line"),
    [
        ("THR-STATUS", "fail", "POST /api/ai/threads/{thread_id}/history: answer not complete "
         "within 2 s (--request-timeout)"),
        ("THR-STATUS", "fail", "GET /api/ai/threads/{thread_id}/state: answer larger "
         f"than {CAP} bytes (--max-response-size)"),
        ("RUN-STATUS", "fail", "GET /api/ai/threads/{thread_id}/runs/{run_id}: incomplete answer "
         "(RFC 9112 §8)"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("layer", ["hostile", "hostile-property"])
def test_hostile_answer_is_cut_at_its_bound_and_charged_to_its_operation(
    runs: dict[str, Done], layer: str, requirement: str, verdict: str, line: str
) -> None:
    run = runs[layer]
    assert run.returncode == 1, run.output  # a finding, not a harness error
    found = next(r for r in run.json()["requirements"] if r["id"] == requirement)
    assert found["verdict"] == verdict
    assert any(line in f["actual"] for f in found["findings"]), found["findings"]
    assert "Traceback" not in run.output and "httpcore" not in run.output


def test_a_stop_in_a_worker_ends_the_spread_run_in_one_line(runs: dict[str, Done]) -> None:
    """Under --concurrency a worker's guard cannot end the run: its tests stop being judged and
    the controller ends it with the reason (exit 3), not with pytest-xdist's crash report."""
    run = runs["hang-all-spread"]
    assert run.returncode == 3, run.output
    assert "INTERNALERROR" not in run.output and "Traceback" not in run.output
    lines = [x for x in run.output.splitlines() if x.startswith("harness error: ")]
    assert len(lines) == 1 and "stopped answering" in lines[0], run.output
    assert TOKEN not in run.output


def test_an_operation_late_twice_is_not_asked_again_in_the_run(runs: dict[str, Done]) -> None:
    """The dripping operation costs the run two deadlines (its findings), not one per test that
    asks it: every later check that needs it is not judged, saying why. Counted in the run's own
    record (results.json), not by the clock. Before its first miss an operation is asked freely
    (no lock per request), so each other process that had it out at that moment may miss once
    more: at most LATE_TIMES + WORKERS - 1."""
    run = runs["drips-everywhere"]
    assert run.returncode == 1, run.output  # the two deadlines missed are findings
    kept = json.loads((run.report_dir / "results.json").read_text(encoding="utf-8"))["tests"]
    late = [f for t in kept for f in t["findings"]
            if f["actual"].startswith(f"{DRIPPING}: answer not complete within 2 s")]  # fmt: skip
    said = f"not judged: {DRIPPING} did not answer within 2 s (--request-timeout) "
    # twice; or, a request that is not plain (no credential, a fixture's), already: the last
    # deadline is kept for a request that follows the document (observe.Deadlines.ask)
    not_asked = [t["nodeid"] for t in kept if t["reason"].startswith(said)]
    assert 1 <= len(late) <= LATE_TIMES + WORKERS - 1, late
    assert len(not_asked) >= 10, [(t["nodeid"], t["reason"]) for t in kept]
    assert "Traceback" not in run.output and "INTERNALERROR" not in run.output
