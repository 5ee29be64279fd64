"""What a deployed target needs, each shown against the reference (suite/http/policy.py):
--header on every request of every layer and masked everywhere, --rate-limit held, a target that
throttles (429 + Retry-After) waited out and reported, --ca-bundle and --insecure for TLS, and
--lf rerunning only what failed; the workers a target off this machine gets from its round trip.

Every case is a suite run in a subprocess against a loopback server; the runs go concurrently
(one module fixture).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import pytest
import trustme
from safety_support import (
    ALT_TOKEN,
    TOKEN,
    Done,
    dropping_proxy,
    reference_app,
    run_suite,
    serve,
)
from starlette.types import ASGIApp, Receive, Scope, Send

from assistant_conformance.proof import mutants, variants
from assistant_conformance.suite.config.options import REMOTE_CONCURRENCY, REMOTE_MOST
from assistant_conformance.suite.config.settings import parse_concurrency
from assistant_conformance.suite.run import concurrency

# Every layer: a property-layer operation, a scenario test, an event stream.
LAYERS = (
    "tests/property/test_property.py",
    "tests/scenario/test_threads.py",
    "tests/scenario/test_streams.py",
    "-k",
    "searchThreads or created_thread_is_readable or stream_has_event_ids",
)
# Enough to spread: property-layer operations with a finding (the mutant's), and scenario tests.
SPREAD = (
    "tests/property/test_property.py",
    "tests/scenario/test_knowledge.py",
    "tests/scenario/test_threads.py",
    "-k",
    "Knowledgebase or knowledge or thread",
    "--examples=5",
)
GATEWAY_KEY = "gw-key-5d1e9a7c3b"  # a header value: a secret in every output
RATE = 20.0
# One test that fails against create-thread-200 and one that passes (by -k: under --lf, pytest
# skips collecting files without failures, so a node id of the passing one would not be found).
FAILING_AND_PASSING = (
    "tests/scenario/test_threads.py",
    "tests/scenario/test_conversations.py",
    "-k",
    "created_thread_is_readable or message_list_honours_limit",
)


class Recorder:
    """Around an app: when each request came, and its headers."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.seen: list[tuple[float, str, dict[bytes, bytes]]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path = f"{scope['method']} {scope['path']}"
            self.seen.append((time.monotonic(), path, dict(scope["headers"])))
        await self.app(scope, receive, send)


def _cases(
    stack: ExitStack, workdir: Path
) -> tuple[dict[str, Callable[[], Done]], dict[str, Recorder], dict[str, Done]]:
    def run(name: str, base_url: str, *args: str, tests: tuple[str, ...] = LAYERS) -> Done:
        options = [f"--base-url={base_url}", f"--token={TOKEN}", f"--alt-token={ALT_TOKEN}", *args]
        cache = f"cache_dir={workdir / name / 'cache'}"
        return run_suite(workdir / name, *tests, *options, "-p", "no:randomly", "-o", cache)

    recorders = {name: Recorder(reference_app(workdir / name)) for name in ("header", "rate")}
    recorded = stack.enter_context(serve(recorders["header"]))
    limited = stack.enter_context(serve(recorders["rate"]))
    throttling = stack.enter_context(
        serve(variants.with_variant(reference_app(workdir / "throttling"), "throttling"))
    )
    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(workdir / "ca.pem"))
    ca.issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(
        str(workdir / "server.pem")
    )
    pem = str(workdir / "server.pem")
    tls = stack.enter_context(serve(reference_app(workdir / "tls"), tls=(pem, pem)))
    broken = stack.enter_context(
        serve(mutants.with_mutant(reference_app(workdir / "broken"), "create-thread-200"))
    )
    dropping = stack.enter_context(serve(reference_app(workdir / "drops")))
    dropping = stack.enter_context(dropping_proxy(dropping, every=2))
    lf = FAILING_AND_PASSING
    earlier: dict[str, Done] = {}

    def failing_then_lf() -> Done:
        """A failing run, then --lf on the same cache (it reads the first one's failures)."""
        earlier["lf-first"] = run("lf", broken, tests=lf)
        return run("lf", broken, "--lf", tests=lf)

    spread = stack.enter_context(
        serve(mutants.with_mutant(reference_app(workdir / "spread"), "kb-permission-any-string"))
    )
    alone = stack.enter_context(
        serve(mutants.with_mutant(reference_app(workdir / "alone"), "kb-permission-any-string"))
    )
    cases = {
        "alone": lambda: run("alone", alone, "--concurrency=1", tests=SPREAD),
        "spread": lambda: run("spread", spread, "--concurrency=3", tests=SPREAD),
        "header": lambda: run("header", recorded, f"--header=X-Gateway-Key: {GATEWAY_KEY}"),
        "rate": lambda: run("rate", limited, f"--rate-limit={RATE:g}/s"),
        "throttled": lambda: run("throttled", throttling),
        "drops": lambda: run("drops", dropping),
        "tls-plain": lambda: run("tls-plain", tls),
        "tls-ca": lambda: run("tls-ca", tls, f"--ca-bundle={workdir / 'ca.pem'}"),
        "tls-insecure": lambda: run("tls-insecure", tls, "--insecure"),
        "lf": failing_then_lf,
    }
    return cases, recorders, earlier


Runs = tuple[dict[str, Done], dict[str, Recorder]]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    workdir = tmp_path_factory.mktemp("deployment")
    with ExitStack() as stack:
        cases, recorders, earlier = _cases(stack, workdir)
        with ThreadPoolExecutor(max_workers=len(cases)) as pool:
            futures = {name: pool.submit(case) for name, case in cases.items()}
            done = {name: f.result() for name, f in futures.items()}
        yield {**done, **earlier}, recorders


def judged_all_pass(run: Done) -> bool:
    verdicts = set(run.verdicts().values())
    return "pass" in verdicts and not verdicts & {"fail", "warn", "error"}


def test_header_reaches_every_request_of_every_layer_and_no_output(runs: Runs) -> None:
    done, recorders = runs
    run, seen = done["header"], recorders["header"].seen
    assert run.returncode == 0, run.output
    paths = {path for _, path, _ in seen}
    assert any("/threads/search" in p for p in paths) and any("/runs/stream" in p for p in paths)
    key = GATEWAY_KEY.encode()
    missing = [path for _, path, h in seen if h.get(b"x-gateway-key") != key]
    assert not missing, missing[:5]
    assert GATEWAY_KEY not in run.output
    for path in run.report_dir.rglob("*"):
        if path.is_file():
            assert GATEWAY_KEY not in path.read_text(errors="replace"), path
    assert run.json()["transport"]["headers"] == ["X-Gateway-Key"]


def test_rate_limit_holds_over_the_whole_run(runs: Runs) -> None:
    done, recorders = runs
    run, times = done["rate"], [t for t, _, _ in recorders["rate"].seen]
    assert run.returncode == 0, run.output
    assert judged_all_pass(run)
    assert len(times) > 2 * RATE  # enough requests for the limit to matter
    busiest = max(sum(1 for t in times if start <= t < start + 1) for start in times)
    assert busiest <= RATE + 1, busiest  # the pre-flight request may come before the limit
    assert run.json()["transport"]["rate_limit"] == RATE


def test_throttled_requests_are_waited_out_reported_and_never_findings(runs: Runs) -> None:
    run = runs[0]["throttled"]
    assert run.returncode == 0, run.output
    assert judged_all_pass(run)
    throttled = run.json()["transport"]["throttled"]
    assert throttled["requests"] >= 3 and throttled["seconds"] >= throttled["requests"] * 0.9
    assert f"the target throttled {throttled['requests']} requests" in run.output


def test_a_connection_closed_before_an_answer_is_sent_again_once(runs: Runs) -> None:
    """Every second connection reset as its request arrives (the keep-alive race): each such
    request goes again on a new connection, is counted, and is no finding."""
    done, _ = runs
    run = done["drops"]
    assert run.returncode == 0, run.output
    assert judged_all_pass(run)
    resent = run.json()["transport"]["resent_after_close"]
    assert resent >= 2 and f"{resent} requests sent again" in run.stdout


def test_tls_to_a_private_ca_needs_the_bundle_or_insecure(runs: Runs) -> None:
    done = runs[0]
    plain, with_ca, insecure = done["tls-plain"], done["tls-ca"], done["tls-insecure"]
    assert plain.returncode == 3 and "certificate" in plain.output.lower(), plain.output
    assert with_ca.returncode == 0 and judged_all_pass(with_ca), with_ca.output
    assert insecure.returncode == 0 and judged_all_pass(insecure), insecure.output
    assert "TLS NOT verified (--insecure)" in insecure.output
    assert insecure.json()["transport"]["tls"] == "NOT verified (--insecure)"


def test_lf_reruns_only_what_failed_as_the_terminal_says(runs: Runs) -> None:
    first, again = runs[0]["lf-first"], runs[0]["lf"]
    assert first.returncode == 1, first.output
    assert "rerun only what failed: pytest --lf --seed=0 --examples=10 --base-url=" in first.output
    assert again.returncode == 1, again.output
    last = again.output.strip().splitlines()[-1]
    assert "1 failed" in last and "passed" not in last, again.output


def findings_of(run: Done) -> dict[str, tuple[str, int, list[str]]]:
    """Per requirement: the verdict, how many findings, and what each expected (actual texts
    name identifiers the target made, which differ from run to run)."""
    return {
        r["id"]: (r["verdict"], len(r["findings"]), sorted(f["expected"] for f in r["findings"]))
        for r in run.json()["requirements"]
    }


def test_concurrency_spreads_the_run_and_keeps_its_verdicts_and_findings(runs: Runs) -> None:
    alone, spread = runs[0]["alone"], runs[0]["spread"]
    assert alone.returncode == spread.returncode == 0, spread.output  # a SHOULD: a warning
    assert alone.verdicts()["KB-ALLOWED-VALUES"] == "warn"
    assert findings_of(spread) == findings_of(alone)
    assert (alone.json()["workers"], spread.json()["workers"]) == (1, 3)


@pytest.mark.parametrize(
    ("url", "loopback"),
    [("http://127.0.0.1:8000", True), ("http://localhost", True), ("http://[::1]:1", True),
     ("https://api.example.com", False), ("http://10.0.0.5:8000", False)],
)  # fmt: skip
def test_only_a_target_off_this_machine_is_spread_by_default(url: str, loopback: bool) -> None:
    assert concurrency.is_loopback(url) is loopback


def test_the_property_layer_is_dealt_to_the_workers_longest_first() -> None:
    """xdist's worksteal hands out contiguous, equal-count shares: the chat-kit tests first, on
    one worker (the sessions they make stay in its memory), but one marked after_probe after that
    share's property tests; each share then starts with its part of the property layer (the state
    machines on different workers), then a run of the other tests, a module's together, the
    module with the longest test first."""

    class Item:
        def __init__(self, nodeid: str, *requirements: str, later: bool = False) -> None:
            self.nodeid, self.path = nodeid, Path(nodeid.split("::")[0])
            self.marks = [pytest.mark.req(*requirements).mark] if requirements else []
            self.marks += [pytest.mark.after_probe.mark] if later else []

        def iter_markers(self, name: str) -> list[pytest.Mark]:
            return [mark for mark in self.marks if mark.name == name]

        def get_closest_marker(self, name: str) -> pytest.Mark | None:
            return next(iter(self.iter_markers(name)), None)

    parts = ["knowledge bases and documents 1", "threads and runs 1", "threads and runs 2"]
    machines = [f"tests/property/test_stateful.py::test_state_machine[{p}]" for p in parts]
    scenario = [f"tests/scenario/test_a.py::t{i}" for i in range(35)]
    join = "test_join_after_a_dropped_stream_resumes_without_gap_or_duplicate"  # 0.47 s, shipped
    stream = f"tests/scenario/test_streams.py::{join}"
    chatkit = Item("tests/scenario/test_files.py::test_chatkit", "CHATKIT-SECRET")
    expiry = Item("tests/scenario/test_files.py::test_expiry", "CHATKIT-SECRET", later=True)
    items = [*map(Item, [*scenario[:20], *machines]), chatkit, expiry]
    items += [*map(Item, [*scenario[20:], stream])]
    ordered = concurrency.worksteal_order(items, 4, 10)  # type: ignore[arg-type]
    assert sorted(i.nodeid for i in ordered) == sorted(i.nodeid for i in items)
    assert ordered[0] is chatkit
    later = ordered.index(expiry)  # in the first share, after its property tests
    assert "stateful" in ordered[later - 1].nodeid and "scenario" in ordered[later + 1].nodeid
    assert later < 10
    shares = [ordered[0:10], ordered[10:20], ordered[20:30], ordered[30:40]]  # as xdist deals
    for machine in machines:  # each at the head of a share of its own, after the chat-kit test
        assert sum(machine in (s[0].nodeid, s[1].nodeid) for s in shares) == 1
    assert len({n for n, s in enumerate(shares) for i in s if "stateful" in i.nodeid}) == 3
    rest = [i.nodeid for i in ordered if "scenario" in i.nodeid and i not in (chatkit, expiry)]
    assert rest == [stream, *scenario]  # its module's longest test first; in a module, as collected


def test_a_longer_round_trip_asks_more_workers_within_bounds() -> None:
    """Off this machine, the workers follow the pre-flight's round trip: never fewer than
    REMOTE_CONCURRENCY, more as each request waits longer, never more than REMOTE_MOST."""
    counts = [concurrency.from_round_trip(ms / 1000, cores=2) for ms in (0, 5, 10, 120, 1000)]
    assert counts == sorted(counts)
    assert counts[0] == REMOTE_CONCURRENCY
    assert counts[-1] == REMOTE_MOST
    assert REMOTE_CONCURRENCY < counts[2] < REMOTE_MOST


@pytest.mark.parametrize(
    ("raw", "parsed"), [(None, None), ("auto", None), ("AUTO", None), ("3", 3)]
)
def test_concurrency_is_a_count_or_auto(raw: str | None, parsed: int | None) -> None:
    assert parse_concurrency(raw) == parsed


class Late:
    """Around an app: every answer starts `delay` seconds late (a target farther away)."""

    def __init__(self, app: ASGIApp, delay: float) -> None:
        self.app, self.delay = app, delay

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await asyncio.sleep(self.delay)
        await self.app(scope, receive, send)


def test_the_workers_follow_the_round_trip_the_pre_flight_measures(tmp_path: Path) -> None:
    """--concurrency auto (the default off this machine): the pre-flight's read timed, the
    workers chosen from it and said in the header (shown: -v against run_suite's -q); every
    answer 20 ms late takes more than 20."""
    with serve(Late(reference_app(tmp_path), 0.02)) as url:
        done = run_suite(
            tmp_path / "reports", f"--base-url={url}", f"--token={TOKEN}",
            f"--alt-token={ALT_TOKEN}", "--concurrency=auto", "-v", *LAYERS,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    said = re.search(r"workers: (\d+), for a round trip of (\d+) ms", done.stdout)
    assert said is not None, done.stdout[:2000]
    assert int(said.group(2)) >= 20
    assert REMOTE_CONCURRENCY <= done.json()["workers"] == int(said.group(1)) <= REMOTE_MOST


def test_a_target_the_measuring_pre_flight_cannot_use_is_one_line_and_exit_3(
    tmp_path: Path,
) -> None:
    done = run_suite(
        tmp_path, "--base-url=http://127.0.0.1:9", f"--token={TOKEN}", "--concurrency=auto"
    )
    assert done.returncode == 3
    assert "harness error: cannot reach target http://127.0.0.1:9" in done.stdout + done.stderr
    assert "gw0" not in done.stdout + done.stderr  # no worker was started


def test_the_run_spreads_whichever_plugin_loads_first(tmp_path: Path) -> None:
    """With the package on PYTHONPATH too (a src layout in CI), the suite's plugin loads before
    pytest-xdist: --concurrency still spreads the run (it did not: xdist read -n first)."""
    with serve(reference_app(tmp_path)) as url:
        done = run_suite(
            tmp_path / "reports", f"--base-url={url}", f"--token={TOKEN}",
            f"--alt-token={ALT_TOKEN}", "--concurrency=2", *LAYERS,
            env={"PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")},
        )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    assert done.json()["workers"] == 2
    assert "bringing up nodes" in done.stdout  # the workers started (not one process)
