"""What identifies a run in its report: suite (version and content hash), spec, target, seed, time
and the options (no tokens)."""

from __future__ import annotations

import datetime as dt
import hashlib
from functools import cache
from pathlib import Path
from typing import Any

from assistant_conformance import __version__
from assistant_conformance.report.catalogue import spec_hashes
from assistant_conformance.suite import stats
from assistant_conformance.suite.settings import SuiteSettings

PACKAGE = Path(__file__).resolve().parents[1]
SUITE_TREES = (PACKAGE.parents[1] / "tests", PACKAGE / "suite")  # the checks and what runs them


@cache
def suite_sha256() -> str:
    """One hash over the suite's Python sources (the tests and the suite room), by relative path:
    two reports with the same hash were made by the same checks, whatever the version says."""
    digest = hashlib.sha256()
    for tree in SUITE_TREES:
        for path in sorted(tree.rglob("*.py")):
            digest.update(str(path.relative_to(tree.parent)).encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def run_info(settings: SuiteSettings, started: dt.datetime, duration: float) -> dict[str, Any]:
    return {
        "suite_version": __version__,
        "suite_sha256": suite_sha256(),
        "spec": spec_hashes(),
        "target": settings.base_url or "embedded reference server",
        "seed": settings.seed,
        "started": started.isoformat(timespec="seconds"),
        "duration_seconds": round(duration, 3),
        "peak_memory_mib": stats.peak_memory_mib(),
        "options": {
            "base_url": settings.base_url,
            "alt_token_given": settings.alt_token is not None or not settings.base_url,
            "strict_conformance": settings.strict_conformance,
            "examples": settings.examples,
            "seed": settings.seed,
            "request_timeout": settings.request_timeout,
            "process_timeout": settings.process_timeout,
            "report_dir": str(settings.report_dir),
            "baseline": str(settings.baseline) if settings.baseline else None,
            "unsupported": list(settings.unsupported),
        },
    }
