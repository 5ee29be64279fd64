"""Hostile and unusable targets, default options: what each costs the suite in time and memory.

    python bench/hostile.py [--json reports/hostile.json]

For each hostile mutant (proof/mutants/hostile.py: answers that drip, never end or are cut short,
streams that stay open), the reference runs on loopback with it in front, and the suite runs the
scenario test that reaches that operation, with default options (--request-timeout 10 s,
--max-response-size 16 MiB). Measured: wall time, the suite process's peak RSS (as its report
says), exit status and the finding's line. The kill table holds each mutant to its Bound in CI.

Then each unusable target (a host name that does not resolve, a port nothing listens on, a server
that accepts and never answers, the API's address given without its root), the suite run as a
user runs it: its seconds beyond its start-up (a run ended by a usage error before any request),
exit status (3) and its one line. The self-tests count what bounds these runs (asks and timeouts,
selftests/suite/test_harness_errors.py); the seconds are here.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "selftests" / "support"))

from safety_support import TOKEN, raw_server, reference_app, run_suite, serve  # noqa: E402

from assistant_conformance.proof import mutants  # noqa: E402

CASES = {  # mutant -> the one test that reaches its operation
    "answer-drips": (
        "tests/scenario/test_threads.py::test_history_grows_with_each_write_newest_first"
    ),
    "answer-never-ends": "tests/scenario/test_threads.py::test_state_written_is_the_state_read",
    "answer-cut-short": "tests/scenario/test_runs.py::test_run_list_pages_by_limit_and_offset",
    "stream-open-after-end": (
        "tests/scenario/test_streams.py::test_stream_has_event_ids_ends_and_agrees_with_the_run"
    ),
    "stream-pings-without-end": (
        "tests/scenario/test_streams.py::test_stream_has_event_ids_ends_and_agrees_with_the_run"
    ),
}


def measure(name: str, test: str, workdir: Path) -> dict[str, object]:
    with serve(mutants.with_mutant(reference_app(workdir / "server"), name)) as base_url:
        done = run_suite(
            workdir / "reports", test, f"--base-url={base_url}", f"--token={TOKEN}",
            "-p", "no:randomly", timeout=600,
        )  # fmt: skip
    document = done.json()
    lines = [
        f"{r['id']} {r['verdict']}: {f['actual']}"
        for r in document["requirements"]
        for f in r["findings"]
        if "--request-timeout" in f["actual"] or "RFC 9112" in f["actual"]
        or "--max-response-size" in f["actual"] or "still open" in f["actual"]
    ]  # fmt: skip
    return {
        "case": name,
        "seconds": round(done.seconds, 1),
        "peak_mib": round(document["peak_memory_mib"]),  # the suite's own report says it
        "exit": done.returncode,
        "finding": lines[0] if lines else "(none)",
    }


UNUSABLE_TEST = "tests/scenario/test_assistants.py"


def unusable(workdir: Path) -> list[dict[str, object]]:
    """Each unusable target, default options: seconds beyond the start-up, exit, the line."""

    def run(name: str, base_url: str, token: str = TOKEN) -> tuple[float, int | None, str]:
        done = run_suite(
            workdir / name, UNUSABLE_TEST, f"--base-url={base_url}", f"--token={token}",
            "-p", "no:randomly", timeout=600,
        )  # fmt: skip
        said = [x for x in done.output.splitlines() if "harness error: " in x]
        line = said[0][said[0].index("harness error: ") :] if said else "(none)"
        return done.seconds, done.returncode, line

    start_up, _, _ = run("start-up", "http://127.0.0.1:9", token="short")
    rows = []
    with (
        raw_server(None) as silent,
        serve(reference_app(workdir / "server")) as complete,
    ):
        targets = {
            "dns": "http://conformance-target.invalid",
            "refused": "http://127.0.0.1:9",
            "silent": f"http://127.0.0.1:{silent}",
            "wrong-base": f"{complete}/api/ai",
        }
        for name, base_url in targets.items():
            seconds, status, line = run(name, base_url)
            beyond = round(seconds - start_up, 1)
            rows.append({"case": name, "seconds_beyond_start_up": beyond, "exit": status})
            rows[-1]["line"] = line.replace(base_url, "URL")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", type=Path, default=ROOT / "reports" / "hostile.json")
    args = parser.parse_args()
    rows = []
    for name, test in CASES.items():
        with tempfile.TemporaryDirectory() as workdir:
            rows.append(measure(name, test, Path(workdir)))
        print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    with tempfile.TemporaryDirectory() as workdir:
        unusable_rows = unusable(Path(workdir))
    for row in unusable_rows:
        print(json.dumps(row, ensure_ascii=False), flush=True)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    rows += unusable_rows
    args.json.write_text(json.dumps(rows, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    # Each must end in a finding within its mutant's bound, never a harness error (exit 3).
    bounds = {name: mutants.MUTANTS[name][0].bound for name in CASES}
    hostile = [r for r in rows if r["case"] in bounds]
    ok = all(r["exit"] == bounds[r["case"]].exit and r["finding"] != "(none)" for r in hostile)
    return 0 if ok and all(r["exit"] == 3 for r in unusable_rows) else 1


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    sys.exit(main())
