"""What the run measured beside verdicts, summed up for the report: the runs it started and what
they cost, how it reached the target (its runs in flight among it), and this process's peak
memory. (Records are gathered across pytest-xdist workers by the run's state, run/state.py.)"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from assistant_conformance.suite.http.policy import Policy


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


def transport_counts(measured: Mapping[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """What the run's processes measured on the way to the target (`throttled`, `resent`, `sent`
    records, merged across workers or shards), for the report's `transport`."""
    throttled, load = measured.get("throttled", []), measured.get("load", [])
    return {
        "throttled": {
            "requests": len(throttled),
            "seconds": round(sum(t["seconds"] for t in throttled), 1),
        },
        "resent_after_close": len(measured.get("resent", [])),
        "requests": sum(s["requests"] for s in measured.get("sent", [])),
        "most_runs_in_flight": max((m.get("most", 0) for m in load), default=0),
        "runs_over_bound": max((m.get("over", 0) for m in load), default=0),
    }


def transport_summary(
    policy: Policy, measured: Mapping[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    """How the run reached the target, for the report (header names only: values are secret)."""
    tls = "NOT verified (--insecure)" if policy.insecure else "verified"
    if policy.ca_bundle:
        tls = f"verified against {policy.ca_bundle} (--ca-bundle)"
    return {"tls": tls, "headers": list(policy.headers), "rate_limit": policy.rate,
            "runs_at_once": policy.runs.at_once, **transport_counts(measured)}  # fmt: skip
