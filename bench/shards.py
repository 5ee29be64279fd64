"""A run split in shards, one after another here, as N CI runners would run them side by side.

    python bench/shards.py [--shards 4] [--examples 10] [--workdir DIR]
    python bench/shards.py --depths 10 50 200 1000      # the cost of a whole run by depth
    python bench/shards.py --record                     # measure the durations the split uses

Shards: each `--shard I/N` run's wall time and tests, the balance (longest / mean) and the wall
time N runners would see (the longest shard), then `assistant-conformance merge` of their folders
(its exit status and totals). Depths: a whole run at each `--examples`: wall time, requests sent
(the report's `transport.requests`) and peak memory (the report's `peak_memory_mib`, the largest
process). --record: whole runs at --examples 10 and 50 whose tests' durations (their
`results.json`) become `src/assistant_conformance/suite/durations.json`.
Against the embedded reference server (each run starts its own); every run has a time bound.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # a fresh clone without `pip install -e` still imports

from assistant_conformance.proof.suiterun import SuiteOptions, SuiteResult, run_suite  # noqa: E402
from assistant_conformance.suite.config import shards  # noqa: E402

RUN_TIMEOUT = 3600.0
RECORDED_DEPTHS = (10, 50)


def suite(folder: Path, *args: str) -> SuiteResult:
    """The installed suite against the embedded reference, reporting into `folder`."""
    log = folder / "suite.log"
    return run_suite(None, SuiteOptions(folder, args, log, timeout=RUN_TIMEOUT, quiet=False))


def shard_runs(count: int, examples: int, workdir: Path) -> dict[str, Any]:
    rows = []
    for index in range(1, count + 1):
        folder = workdir / f"shard-{index}"
        folder.mkdir(parents=True, exist_ok=True)
        run = suite(folder, f"--shard={index}/{count}", f"--examples={examples}")
        tests = json.loads((folder / "results.json").read_text())["tests"]
        rows.append(
            {
                "shard": f"{index}/{count}",
                "seconds": round(run.seconds, 1),
                "tests": len(tests),
                "exit": run.returncode,
            }
        )
    merged = workdir / "merged"
    command = [sys.executable, "-m", "assistant_conformance", "merge",
               *(str(workdir / f"shard-{i}") for i in range(1, count + 1)),
               "--report-dir", str(merged)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    mean = sum(r["seconds"] for r in rows) / count
    longest = max(r["seconds"] for r in rows)
    doc = json.loads((merged / "conformance.json").read_text()) if done.returncode < 4 else {}
    return {"examples": examples, "shards": rows, "balance": round(longest / mean, 2),
            "runners_wall_seconds": longest, "merge_exit": done.returncode,
            "merged_totals": doc.get("totals"), "merge_output": done.stdout[-400:]}  # fmt: skip


def depth_runs(depths: list[int], workdir: Path) -> list[dict[str, Any]]:
    rows = []
    for examples in depths:
        folder = workdir / f"depth-{examples}"
        folder.mkdir(parents=True, exist_ok=True)
        run = suite(folder, f"--examples={examples}")
        doc = run.json()
        rows.append(
            {
                "examples": examples,
                "seconds": round(run.seconds, 1),
                "requests": doc["transport"].get("requests"),
                "peak_memory_mib": doc["peak_memory_mib"],
                "exit": run.returncode,
                "totals": doc["totals"],
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def record(workdir: Path) -> Path:
    depths: dict[str, dict[str, float]] = {}
    for examples in RECORDED_DEPTHS:
        folder = workdir / f"record-{examples}"
        folder.mkdir(parents=True, exist_ok=True)
        suite(folder, f"--examples={examples}", "--concurrency=1")
        tests = json.loads((folder / "results.json").read_text())["tests"]
        depths[str(examples)] = {
            shards.duration_key(t["nodeid"]): round(t["duration"], 3) for t in tests
        }
    path = ROOT / "src" / "assistant_conformance" / "suite" / "config" / shards.DURATIONS
    note = "seconds per test on the reference, one process; bench/shards.py --record"
    path.write_text(json.dumps({"about": note, "depths": depths}, indent=0, sort_keys=True) + "\n")
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--examples", type=int, default=10)
    parser.add_argument("--depths", type=int, nargs="*")
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--json", type=Path, help="write the result here too")
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-shards-"))
    os.environ.pop("ASSISTANT_API_BASE_URL", None)
    if args.record:
        print(f"wrote {record(workdir)}")
        return 0
    result: Any = (
        depth_runs(args.depths, workdir)
        if args.depths
        else shard_runs(args.shards, args.examples, workdir)
    )
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
