"""The audit's findings as a run's verdicts and reports: each file (or proxy session) is one "test"
naming the requirements its exchanges exercised, so report/verdicts.py decides every verdict as
in a run (a requirement no exchange exercised is `untested`, never a pass; one that names several
operations passes only where each kept it), and report/ writes conformance.json (its schema),
.md, .html and badge.json; JUnit is written here (a run's comes from pytest).

An untested requirement says which of two it is: not judgeable from traffic (no exchange can show
it, whoever sent it: it needs requests made to test it, or more than exchanges say), or untested
here (these exchanges did not exercise it; others may). The reports of an audit carry its own
header (`audit` in conformance.json): the files, the exchanges judged, off the document and
unanswered, the period they cover.
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assistant_conformance import __version__
from assistant_conformance.audit.exchange import exchange_requirements
from assistant_conformance.audit.rules import COUNTS, Judging
from assistant_conformance.audit.sequence import sequence_requirements
from assistant_conformance.contract.catalogue import load
from assistant_conformance.contract.files import spec_hashes
from assistant_conformance.report import JUNIT_FILE, redact, write_all
from assistant_conformance.report.exit_codes import Exit
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
NOT_JUDGEABLE = "not judgeable from traffic: "
EXERCISED_BY_NONE = "untested: no exchange of these exercised it"
# What exchanges cannot show, whoever sent them, though they reach its operations.
CANNOT = {
    "AUTH-PRINCIPAL-ISOLATION": "a file does not say whose each token is",
    "AUTH-REJECTED-NO-EFFECT": "it needs the owner's reads around the refused request",
    "ROBUST-BAD-INPUT-4XX": "whether input broke the document on purpose is the sender's to say",
    "KB-PREFIXES-IDENTICAL": "it needs the same request sent under both prefixes",
    "RUN-WAIT-COMPLETES": "it needs the run read right after the wait",
    "RUN-CANCEL": "it needs the run read after its cancel, until terminal",
}
BY_TESTS = (
    "no rule of the audit reads it from exchanges: a run of the suite tests it, with requests of "
    "its own"
)


def run_of_findings(
    judgings: list[Judging],
    *,
    invocation: str,
    report_dir: Path,
    started: float,
    deadline: float,
) -> Run:
    """The verdicts of the files' (or the session's) findings."""
    files = [
        TestResult(
            j.capture.name, sorted({f.requirement for f in j.findings}), "passed", j.findings
        )
        for j in judgings
    ]
    info = _info(judgings, invocation, report_dir, started, deadline)
    run = build(load(), files, info=info, capabilities={}, baseline={})
    said = {k: v for j in judgings for k, v in j.not_judged.items()}
    judgeable = (exchange_requirements() | sequence_requirements()) - set(CANNOT)
    for rid, result in run.requirements.items():
        if result.verdict != UNTESTED:
            continue
        why = said.get(rid) or CANNOT.get(rid) or (BY_TESTS if rid not in judgeable else None)
        result.reason = NOT_JUDGEABLE + why if why else EXERCISED_BY_NONE
    untested = [r.reason for r in run.requirements.values() if r.verdict == UNTESTED]
    info["audit"]["not_judgeable"] = sum(r.startswith(NOT_JUDGEABLE) for r in untested)
    info["audit"]["not_exercised"] = untested.count(EXERCISED_BY_NONE)
    if not info["audit"]["judged"]:
        run.gate = Gate(Exit.HARNESS, "harness error", [NOTHING_JUDGED])
    return run


# No request is sent: a run's bounds (request and process timeouts) are the proxy's deadline.
def _info(
    judgings: list[Judging], invocation: str, report_dir: Path, started: float, deadline: float
) -> dict[str, Any]:
    counts = [j.counts() for j in judgings]
    names = [j.capture.name for j in judgings]
    hosts = ", ".join(_hosts(judgings)) or "none"
    return {
        "suite_version": __version__,
        "suite_sha256": suite_sha256(),
        "spec": spec_hashes(),
        "target": f"recorded exchanges: {', '.join(names)} ({hosts})",
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
            "period": _period(judgings),
        },
    }


def _hosts(judgings: list[Judging]) -> list[str]:
    """Where the exchanges went: each scheme and host once (no user information)."""
    found = set()
    for judging in judgings:
        for entry in judging.capture.entries:
            scheme, slashes, rest = entry.url.partition("//")
            if slashes and scheme.endswith(":") and (host := rest.split("/")[0].rpartition("@")[2]):
                found.add(f"{scheme}//{host}")
    return sorted(found)


def _period(judgings: list[Judging]) -> dict[str, str] | None:
    """When the first exchange started and the last one ended (None: no exchange)."""
    starts = [e.started for j in judgings for e in j.capture.entries]
    if not starts:
        return None
    ends = [j.capture.end(i) for j in judgings for i in range(len(j.capture.entries))]
    return {"from": _stamp(min(starts)), "to": _stamp(max(ends))}


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


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
