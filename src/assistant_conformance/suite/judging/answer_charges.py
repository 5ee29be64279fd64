"""The judge of what the doors saw, whichever test sent the request: each fault and observation
becomes a finding on one requirement here.

- A fault (no answer within the run's bounds, suite/http/observe.py) is charged to the operation's
  success status (MUST for requests that follow the document); for input sent to break the
  document (`breaking_input`), to the requirement judged of such input; for a request without a
  credential of the run, to AUTH-401; off the document's operations, to ROBUST-RESPONSE-SHAPE.
- A JSON body or event data that is JSON only by Python's reading: ROBUST-RESPONSE-SHAPE (SHOULD:
  RFC 8259 is what "JSON" means), each distinct problem once per test.
- Rules every answer of a kind keeps (CROSS_CUTTING): a 2xx JSON body declared JSON, a 401 with
  a Bearer challenge.
- An operation the target does not implement (suite/http/absent.py): its status requirement.
"""

from __future__ import annotations

from collections.abc import Collection
from urllib.parse import urlsplit

from assistant_conformance.contract.openapi import by_label, operation_label
from assistant_conformance.report import redact
from assistant_conformance.report.model import PASS
from assistant_conformance.suite.http import absent, observe
from assistant_conformance.suite.http.answer_bounds import BEARER
from assistant_conformance.suite.http.observe import (
    CHALLENGED,
    CUT,
    JSON_UNDECLARED,
    LARGE,
    MISSED,
    NOT_CHALLENGED,
    NOT_STRICT_JSON,
    SILENT,
    SLOW,
    AnswerFault,
)
from assistant_conformance.suite.http.trail import Entry
from assistant_conformance.suite.judging import checks, findings
from assistant_conformance.suite.judging.findings import TestRecord
from assistant_conformance.suite.judging.schemathesis_charges import (
    AUTH_401,
    FINDINGS_PER_REQUIREMENT,
    SHAPE,
)

STRICT_JSON = "a JSON body by RFC 8259: UTF-8, no NaN or Infinity"
FAULT_EXPECTED = {
    LARGE: "an answer the suite can read whole",
    SLOW: "a whole answer within --request-timeout",
    SILENT: "an answer within --request-timeout",
    CUT: "a complete answer (RFC 9112 §8)",
}


def with_run_credential(evidence: Entry) -> bool:
    """Whether a request carried a bearer credential the run holds (registered as a secret)."""
    return observe.run_credential(evidence.request_headers)


def fault_requirement(fault: AnswerFault) -> str:
    """The requirement a fault is charged to (see the module docstring)."""
    if fault.breaking:
        return fault.breaking
    if not with_run_credential(fault.evidence):
        return AUTH_401
    path = urlsplit(fault.evidence.url).path
    op = by_label().get(operation_label(fault.evidence.method, path))
    return op.status_requirement if op else SHAPE


def fault_check(kind: str) -> checks.Check:
    """A replay's check of a fault: the same request answered whole within the bounds."""
    trail = record.exchanges if (record := findings.recorded()) else []
    faulted = [i for i, entry in enumerate(trail) if entry.fault == kind] or [len(trail) - 1]
    return checks.AnswerCheck(entry=faulted[-1])


def charge_fault(fault: AnswerFault) -> str:
    """Record a fault of the target's answer in the running test (none where the suite's own
    load may explain it: `loaded`); answer why the rest of the test is not judged."""
    if fault.loaded:
        return f"not judged: {fault.what}; {fault.loaded}"
    requirement = fault_requirement(fault)
    if not fault.charged:
        fault.charged = True
        expected = FAULT_EXPECTED[fault.kind]
        findings.charged(requirement, expected, fault.what, fault.evidence, fault_check(fault.kind))
    return f"not judged: {fault.what} (charged to {requirement})"


def charge_observations(record: TestRecord) -> None:
    """The doors' observations of a test as its findings: each distinct problem once, at most
    FINDINGS_PER_REQUIREMENT; each deadline a plain request missed that no finding rests on yet
    (a flow that caught it to try another way, a test that ended not judged)."""
    for missed in (o.fault for o in record.observations if o.kind == MISSED):
        if missed is not None and not missed.charged:
            charge_fault(missed)
    keys = list(dict.fromkeys(o.key for o in record.observations if o.kind == NOT_STRICT_JSON))
    for key in keys[:FINDINGS_PER_REQUIREMENT]:
        found = next(o for o in record.observations if o.key == key)
        check = checks.StrictJsonCheck(entry=record.entry(found.entry))
        findings.charged(SHAPE, STRICT_JSON, found.what, found.evidence, check)
    settle_cross_cutting(record)
    record.observations.clear()


# Rules every answer of a kind keeps, whichever test received it: the observation that breaks one,
# its requirement, what was expected and the header a replay reads again.
CROSS_CUTTING = {
    JSON_UNDECLARED: (
        "ROBUST-JSON-CONTENT-TYPE",
        "a JSON body declared application/json",
        "content-type",
        "json",
    ),
    NOT_CHALLENGED: (
        "AUTH-WWW-AUTHENTICATE",
        "a 401 with a WWW-Authenticate header naming Bearer",
        "www-authenticate",
        BEARER.pattern,
    ),
}


def settle_cross_cutting(record: TestRecord) -> None:
    """Each CROSS_CUTTING rule on every answer of its kind the test received (each distinct
    break once); a 401 with its challenge holds AUTH-WWW-AUTHENTICATE. A rule the test judged
    itself is left to it."""
    for kind, (requirement, expected, header, pattern) in CROSS_CUTTING.items():
        if any(f.requirement == requirement and f.verdict != PASS for f in record.findings):
            continue
        broken = {o.key: o for o in reversed(record.observations) if o.kind == kind}
        for found in list(broken.values())[:FINDINGS_PER_REQUIREMENT]:
            check = checks.HeaderCheck(
                entry=record.entry(found.entry), name=header, pattern=pattern, ignore_case=True
            )
            findings.charged(requirement, expected, found.what, found.evidence, check)
    challenged = [o for o in record.observations if o.kind == CHALLENGED]
    if challenged and not any(o.kind == NOT_CHALLENGED for o in record.observations):
        requirement, expected, _, _ = CROSS_CUTTING[NOT_CHALLENGED]
        findings.charged(requirement, expected, "", challenged[0].evidence, ok=True)


def charge_absent(
    record: TestRecord, shown: Collection[str], probed: Collection[str]
) -> list[absent.Absence]:
    """An operation not implemented is a finding on its status requirement (suite/http/absent.py):
    each one the test's exchanges show absent whatever was sent (`shown`: identifiers the target
    has shown; `probed`: operations the pre-flight found absent) is charged once, unless the test
    judged that answer already. With those its own failed status findings show, the operations
    the report lists as absent."""
    found: list[absent.Absence] = []
    for index, absence in absent.in_trail(record.exchanges, shown, probed):
        entry = record.exchanges[index]
        if not _judged(record, absence.requirement, entry.method, entry.url):
            op = by_label()[absence.operation]
            statuses = (op.success_status,) if op.success_status else ()
            check = checks.StatusClassCheck(
                entry=index, classes=() if statuses else (2,), statuses=statuses
            )
            expected = absent.expected_status(op)
            evidence = absent.exchange_of(entry)
            findings.charged(absence.requirement, expected, absence.reason, evidence, check)
        found.append(absence)
    for f in record.findings:
        if (shows := absent.of_finding(f.requirement, f.verdict, f.evidence, shown)) is not None:
            found.append(shows)
    return found


def _judged(record: TestRecord, requirement: str, method: str, url: str) -> bool:
    """Whether the test recorded a failure of `requirement` on this request already."""
    return any(
        f.requirement == requirement
        and f.verdict == "fail"
        and f.evidence is not None
        and f.evidence.request.url == redact.text(url)
        and f.evidence.request.method == method
        for f in record.findings
    )
