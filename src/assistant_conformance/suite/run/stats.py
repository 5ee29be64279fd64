"""What the run measured beside verdicts, summed up for the report: the runs it started and what
they cost, how it reached the target (its runs in flight among it), and this process's peak
memory. The kinds of record are typed keys (`Measure`: config/run_folder.py, which gathers them
across pytest-xdist workers); results.json keeps them by their names."""

from __future__ import annotations

import sys
from typing import Any, TypedDict

from assistant_conformance.suite.config.run_folder import Measure, Measurements
from assistant_conformance.suite.flows.agent import AgentJson, RunCostJson
from assistant_conformance.suite.http.policy import Policy
from assistant_conformance.suite.safety.removal import CleanupJson


class ThrottledWait(TypedDict):
    operation: str
    seconds: float


class ResentRecord(TypedDict):
    operation: str


class SentRecord(TypedDict):
    requests: int


class StoppedRecord(TypedDict):
    reason: str


ABSENT = Measure[dict[str, str]]("absent")  # an operation found absent (http/absent.py)
AGENT = Measure[AgentJson]("agent")  # the assistant the runs used (flows/agent.py)
RUNS_STARTED = Measure[RunCostJson]("runs")  # a run the session started, and what it cost
LOAD = Measure[dict[str, int]]("load")  # runs in flight at once (http/runs_in_flight.py)
THROTTLED = Measure[ThrottledWait]("throttled")  # a throttled answer waited out
RESENT = Measure[ResentRecord]("resent")  # a request sent again after a dropped connection
SENT = Measure[SentRecord]("sent")  # the requests a process sent
CLEANUP = Measure[CleanupJson]("cleanup")  # what the end of the run removed or kept
STOPPED = Measure[StoppedRecord]("stopped")  # a worker's harness error


def runs_summary(measured: Measurements) -> dict[str, Any]:
    """The report's `runs` section: the agent, the runs started and what they cost."""
    agents, runs = measured.get(AGENT), measured.get(RUNS_STARTED)
    agent = next((a for a in agents if a.get("problem")), agents[0] if agents else None)
    seconds = [s for r in runs if (s := r.get("seconds")) is not None]
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


def transport_counts(measured: Measurements) -> dict[str, Any]:
    """What the run's processes measured on the way to the target (THROTTLED, RESENT, SENT, LOAD
    records, merged across workers or shards), for the report's `transport`."""
    throttled, load = measured.get(THROTTLED), measured.get(LOAD)
    return {
        "throttled": {
            "requests": len(throttled),
            "seconds": round(sum(t["seconds"] for t in throttled), 1),
        },
        "resent_after_close": len(measured.get(RESENT)),
        "requests": sum(s["requests"] for s in measured.get(SENT)),
        "most_runs_in_flight": max((m.get("most", 0) for m in load), default=0),
        "runs_over_bound": max((m.get("over", 0) for m in load), default=0),
    }


def transport_summary(policy: Policy, measured: Measurements) -> dict[str, Any]:
    """How the run reached the target, for the report (header names only: values are secret)."""
    tls = "NOT verified (--insecure)" if policy.insecure else "verified"
    if policy.ca_bundle:
        tls = f"verified against {policy.ca_bundle} (--ca-bundle)"
    return {
        "tls": tls,
        "headers": list(policy.headers),
        "rate_limit": policy.rate,
        "runs_at_once": policy.runs.at_once,
        **transport_counts(measured),
    }
