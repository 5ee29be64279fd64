"""Hostile targets, default options: what each costs the suite in time and peak memory.

    python bench/hostile.py [--json reports/hostile.json]

For each hostile mutant (proof/mutants/hostile.py: answers that drip, never end or are cut short,
streams that stay open), the reference runs on loopback with it in front, and the suite runs the
scenario test that reaches that operation, with default options (--request-timeout 10 s,
--max-response-size 16 MiB). Measured: wall time, the suite process's peak RSS (as its report
says), exit status and the finding's line. The kill table holds each mutant to its Bound in CI.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "selftests"))

from safety_support import TOKEN, reference_app, run_suite, serve  # noqa: E402

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


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", type=Path, default=ROOT / "reports" / "hostile.json")
    args = parser.parse_args()
    rows = []
    for name, test in CASES.items():
        with tempfile.TemporaryDirectory() as workdir:
            rows.append(measure(name, test, Path(workdir)))
        print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(rows, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    # Each must end in a finding within its mutant's bound, never a harness error (exit 3).
    bounds = {name: mutants.MUTANTS[name][0].bound for name in CASES}
    return (
        0
        if all(r["exit"] == bounds[r["case"]].exit and r["finding"] != "(none)" for r in rows)
        else 1
    )


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    sys.exit(main())
