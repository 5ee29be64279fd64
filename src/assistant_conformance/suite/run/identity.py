"""What identifies a run in its report: suite (version and content hash), spec, target, seed, time
and the options (no tokens)."""

from __future__ import annotations

import datetime as dt
import hashlib
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from assistant_conformance import __version__
from assistant_conformance.contract import files
from assistant_conformance.contract.files import spec_hashes
from assistant_conformance.report import redact
from assistant_conformance.suite.config.options import TESTING_WORDS
from assistant_conformance.suite.config.settings import SuiteSettings
from assistant_conformance.suite.run import stats


def suite_trees() -> tuple[Path, Path]:
    """The checks and what runs them: the same files in a checkout and in the installed package."""
    return files.tests_dir(), Path(str(resources.files("assistant_conformance.suite")))


@cache
def suite_sha256() -> str:
    """One hash over the suite's Python sources (the tests and the suite room), by relative path:
    two reports with the same hash were made by the same checks, whatever the version says."""
    digest = hashlib.sha256()
    for tree in suite_trees():
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


def header_lines(settings: SuiteSettings, baseline_entries: int) -> list[str]:
    """The terminal header's lines: the target and the options (no request is sent for them)."""
    target = settings.base_url or "embedded reference server (started on loopback)"
    lines = [
        f"assistant-conformance {__version__}: target {redact.text(target)}, seed {settings.seed}, "
        f"examples {settings.examples}, strict {'on' if settings.strict_conformance else 'off'}"
    ]
    if settings.assistant:
        lines.append(f"runs: assistant {settings.assistant} (given with --assistant)")
    elif not settings.base_url:
        lines.append("runs: the reference's deterministic echo agent")
    elif not settings.read_only:
        words = ", ".join(TESTING_WORDS)
        lines.append(f"runs: an assistant named for testing ({words}), or none; --assistant ID")
    if settings.baseline:
        lines.append(f"baseline: {settings.baseline} ({baseline_entries} entries)")
    if settings.unsupported:
        lines.append(f"declared unsupported: {', '.join(settings.unsupported)}")
    if settings.read_only:
        lines.append("read-only mode: only checks that change nothing run; the others are skipped")
    if settings.insecure:
        lines.append("TLS: the target's certificate is NOT verified (--insecure)")
    if settings.header or settings.rate_limit:
        names = ", ".join(name for name, _ in settings.header) or "none"
        rate = f"{settings.rate_limit:g}/s" if settings.rate_limit else "none"
        lines.append(f"extra headers: {names}; rate limit: {rate}")
    if settings.no_cleanup:
        lines.append("--no-cleanup: what the run creates stays on the target (--sweep removes it)")
    return lines
