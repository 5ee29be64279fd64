"""What the run measured beside verdicts, summed up for the report: the runs it started and what
they cost, and this process's peak memory. (Records are gathered across pytest-xdist workers by
the run's state, suite/run/state.py.)"""

from __future__ import annotations

import sys
from typing import Any


def runs_summary(agents: list[dict[str, Any]], runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The report's `runs` section: the agent, the runs started and what they cost."""
    agent = next((a for a in agents if a.get("problem")), agents[0] if agents else None)
    seconds = [r["seconds"] for r in runs if r.get("seconds") is not None]
    statuses: dict[str, int] = {}
    for run in runs:
        statuses[run["status"]] = statuses.get(run["status"], 0) + 1
    return {
        "agent": agent,
        "started": len(runs),
        "statuses": statuses,
        "total_seconds": round(sum(seconds), 3),
        "longest_seconds": round(max(seconds), 3) if seconds else None,
    }


def peak_memory_mib() -> float | None:
    """This process's peak resident memory so far (None where the OS does not say). On Linux its
    own high-water mark (VmHWM): getrusage's also counts what the process that started it held
    when it forked, a program's worth when a big one (the kill table) starts the suite."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)  # kB
    except OSError:
        pass
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return round(peak / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)
