"""The audit's findings as a run's verdicts and reports: each file (or proxy session) is one "test"
naming the requirements its exchanges exercised, so report/verdicts.py decides every verdict as
in a run (a requirement no exchange exercised is `untested`, never a pass; one that names several
operations passes only where each kept it), and report/ writes conformance.json (its schema),
.md, .html and badge.json; JUnit is written here (a run's comes from pytest).

A requirement the audit cannot judge from exchanges alone stays untested, with why.
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from assistant_conformance import __version__
from assistant_conformance.audit.rules import Judging
from assistant_conformance.contract.catalogue import load
from assistant_conformance.contract.files import spec_hashes
from assistant_conformance.report import redact, write_all
from assistant_conformance.report.exits import Exit
from assistant_conformance.report.integrations import JUNIT_FILE
from assistant_conformance.report.model import (
    ERROR,
    FAIL,
    KNOWN,
    PASS,
    UNTESTED,
    WARN,
    Gate,
    Run,
    TestResult,
)
from assistant_conformance.report.verdicts import build
from assistant_conformance.suite.run.identity import suite_sha256

NOTHING_JUDGED = "no exchange to a documented operation got an answer: nothing was judged"
COUNTS = ("exchanges", "judged", "off_document", "unanswered")
ALONE = "not judged from exchanges alone: "
# What exchanges cannot show, whoever sent them (the rest: no exchange exercised it).
CANNOT = {
    "AUTH-PRINCIPAL-ISOLATION": "a file does not say whose each token is",
    "AUTH-REJECTED-NO-EFFECT": "it needs the owner's reads around the refused request",
    "ROBUST-BAD-INPUT-4XX": "whether input broke the document on purpose is the sender's to say",
    "KB-PREFIXES-IDENTICAL": "it needs the same request sent under both prefixes",
    "RUN-WAIT-COMPLETES": "it needs the run read right after the wait",
    "RUN-CANCEL": "it needs the run read after its cancel, until terminal",
}


def run_of_findings(
    judgings: list[Judging], *, invocation: str, report_dir: Path, started: float,
    deadline: float,
) -> Run:  # fmt: skip
    """The verdicts of the files' (or the session's) findings."""
    files = [TestResult(j.capture.name, sorted({f.requirement for f in j.findings}), "passed",
                        j.findings) for j in judgings]  # fmt: skip
    run = build(load(), files, info=_info(judgings, invocation, report_dir, started, deadline),
                capabilities={}, baseline={})  # fmt: skip
    said = {k: v for j in judgings for k, v in j.not_judged.items()}
    for rid, result in run.requirements.items():
        if result.verdict == UNTESTED and (why := said.get(rid) or CANNOT.get(rid)):
            result.reason = ALONE + why
    if not run.info["audit"]["judged"]:
        run.gate = Gate(Exit.HARNESS, "harness error", [NOTHING_JUDGED])
    return run


# No request is sent: a run's bounds (request and process timeouts) are the proxy's deadline.
def _info(
    judgings: list[Judging], invocation: str, report_dir: Path, started: float, deadline: float
) -> dict[str, Any]:
    counts = [j.counts() for j in judgings]
    hosts = {
        f"{url.scheme}://{url.netloc.decode()}"
        for j in judgings
        for url in (httpx.URL(e.url) for e in j.capture.entries)
        if url.host
    }
    names = [j.capture.name for j in judgings]
    return {
        "suite_version": __version__,
        "suite_sha256": suite_sha256(),
        "spec": spec_hashes(),
        "target": f"recorded exchanges: {', '.join(names)} ({', '.join(sorted(hosts)) or 'none'})",
        "seed": 0,
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "duration_seconds": round(time.monotonic() - started, 3),
        "invocation": invocation,
        "options": {
            "base_url": None,
            "strict_conformance": False,
            "examples": 1,
            "seed": 0,
            "request_timeout": deadline,
            "process_timeout": deadline,
            "report_dir": str(report_dir),
            "baseline": None,
            "unsupported": [],
            "base_path": judgings[0].base_path if judgings else None,
        },
        "audit": {
            "files": names,
            **{k: sum(c[k] for c in counts) for k in COUNTS},
        },
    }


def write_reports(run: Run, report_dir: Path) -> None:
    """conformance.json, .md, .html, badge.json and junit.xml into `report_dir`."""
    write_all(run, report_dir)
    junit(run, report_dir / JUNIT_FILE)


def junit(run: Run, path: Path) -> None:
    """One test case per requirement: a failure for fail or error, skipped for what was not
    judged; a SHOULD's warning passes, said in its output (as a run's warned test passes)."""
    suite = ET.Element("testsuite", name="assistant-conformance audit")
    counts = dict.fromkeys(("tests", "failures", "skipped"), 0)
    for result in run.requirements.values():
        case = ET.SubElement(suite, "testcase", classname=f"audit.{result.section}", name=result.id)
        counts["tests"] += 1
        first = result.findings[0] if result.findings else None
        said = redact.text(f"{first.expected} / {first.actual}" if first else result.reason)
        if result.verdict in (FAIL, ERROR, KNOWN):
            counts["failures"] += 1
            ET.SubElement(case, "failure", message=said[:500]).text = said
        elif result.verdict == WARN:
            ET.SubElement(case, "system-out").text = f"warning ({result.level}): {said}"
        elif result.verdict != PASS:
            counts["skipped"] += 1
            ET.SubElement(case, "skipped", message=f"{result.verdict}: {result.reason}"[:500])
    suite.attrib.update({k: str(v) for k, v in counts.items()})
    root = ET.Element("testsuites")
    root.append(suite)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
