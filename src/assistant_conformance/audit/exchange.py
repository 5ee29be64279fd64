"""What one exchange to a documented operation shows, each as a judgement (audit/judge.py):

- the bearer rule: a request without an Authorization header (AUTH-MISSING-REJECTED), or with a
  credential that is no bearer token, or a token the server refused (401) on every request it
  carried before this one was sent (AUTH-INVALID-REJECTED; capture.py), is answered with no
  2xx, and refused with 401 (AUTH-401: a 2xx is the first's finding alone, as
  suite/judging/schemathesis_charges.py charges it); a stream request with
  `last-event-id` and no credential, with no 2xx (AUTH-LAST-EVENT-ID-NOT-CREDENTIAL). An operation
  answered 405 or 501 is not there to refuse anything: not judged;
- every 401 names the Bearer scheme in WWW-Authenticate, and a 2xx JSON body is declared JSON:
  the doors' cross-cutting rules (suite/judging/answer_charges.py), with the checks a run judges
  them by;
- on a request with a credential the server had not refused: a 2xx is the documented success
  status (a 4xx may answer the client's own input, and is not judged); a 5xx is ROBUST-NO-5XX;
- a JSON body is RFC 8259 JSON, and a documented success answer has the documented shape
  (ROBUST-RESPONSE-SHAPE); a 4xx has a JSON body (ROBUST-ERROR-JSON);
- a stream's content type, each event's own id (an opening frame without one excepted), and,
  where the file says how it stopped, whether the server ended it (RUN-STREAM-ENDS): a stream
  the client stopped reading is not judged.
"""

from __future__ import annotations

from assistant_conformance.audit.capture import BEARER_CREDENTIAL, NO_CREDENTIAL, Capture
from assistant_conformance.audit.judge import JsonBodyCheck, Judgement, ResponseSchemaCheck
from assistant_conformance.audit.operations import has_shape, header_value, last_event_id
from assistant_conformance.contract.openapi import Operation, by_label
from assistant_conformance.suite.http import sse, strictjson
from assistant_conformance.suite.http.absent import NOT_SERVED
from assistant_conformance.suite.http.observe import JSON_UNDECLARED, NOT_CHALLENGED
from assistant_conformance.suite.judging import checks
from assistant_conformance.suite.judging.answer_charges import CROSS_CUTTING, STRICT_JSON
from assistant_conformance.suite.judging.schemathesis_charges import (
    AUTH_401,
    ERROR_JSON,
    INVALID,
    MISSING,
    NO_5XX,
    SHAPE,
)

NOT_2XX, NOT_5XX = (1, 3, 4, 5), (1, 2, 3, 4)  # status classes
LAST_EVENT_ID_NOT_CREDENTIAL = "AUTH-LAST-EVENT-ID-NOT-CREDENTIAL"
EVENT_IDS, STREAM_ENDS = "RUN-STREAM-EVENT-IDS", "RUN-STREAM-ENDS"
SERVER_KEPT_OPEN = (sse.OPEN_AFTER_END, sse.OPEN_AFTER_RUN)  # cuts that are the server's doing
# The doors' rules of every answer of a kind, in the words a run judges them by (requirement,
# expected, the header a check reads, its pattern): suite/judging/answer_charges.py's.
CHALLENGE, JSON_DECLARED = CROSS_CUTTING[NOT_CHALLENGED], CROSS_CUTTING[JSON_UNDECLARED]


def exchange_requirements() -> set[str]:
    """Every requirement one exchange can show (the operations' own: status, content type)."""
    own = {
        MISSING,
        INVALID,
        AUTH_401,
        LAST_EVENT_ID_NOT_CREDENTIAL,
        CHALLENGE[0],
        JSON_DECLARED[0],
        NO_5XX,
        SHAPE,
        ERROR_JSON,
        EVENT_IDS,
        STREAM_ENDS,
    }
    for op in by_label().values():
        own |= {op.requirements[k] for k in ("status", "content-type") if k in op.requirements}
    return own


def judged(capture: Capture, index: int, op: Operation | None) -> list[Judgement]:
    """The judgements of one exchange (none off the document, or without an answer)."""
    entry = capture.entries[index]
    if op is None or entry.status is None:
        return []
    found = bearer_rule(capture, index, op) + cross_cutting(capture, index, op)
    if capture.valid_credential(index):
        found += status(capture, index, op)
    found += bodies(capture, index, op)
    if op.streaming and 200 <= entry.status < 300:
        found += stream(capture, index, op)
    return found


def bearer_rule(capture: Capture, index: int, op: Operation) -> list[Judgement]:
    entry, credential = capture.entries[index], capture.credentials[index]
    refused = capture.refused_before(index) if credential.kind == BEARER_CREDENTIAL else None
    if (credential.kind == BEARER_CREDENTIAL and refused is None) or entry.status in NOT_SERVED:
        return []
    what = credential.what
    if refused is not None:
        what = (
            f"a token refused (401) {refused.count} time(s) before, first at entry "
            f"{refused.entry}, and taken on none of the requests it carried"
        )
    requirement = MISSING if credential.kind == NO_CREDENTIAL else INVALID
    expected = f"not a 2xx: the request carries {what}"
    not_2xx = checks.StatusClassCheck(entry=index, classes=NOT_2XX)
    found = [Judgement(requirement, not_2xx, expected, index, op.label)]
    if not 200 <= (entry.status or 0) < 300:
        check: checks.Check = checks.StatusCheck(entry=index, statuses=(401,))
        expected = f"HTTP 401: the request carries {what}"
        found.append(Judgement(AUTH_401, check, expected, index, op.label))
    if credential.kind == NO_CREDENTIAL and op.streaming and last_event_id(entry):
        expected = "not a 2xx: last-event-id is no credential"
        found.append(Judgement(LAST_EVENT_ID_NOT_CREDENTIAL, not_2xx, expected, index, op.label))
    return found


def _rule(rule: tuple[str, str, str, str], index: int, op: Operation) -> Judgement:
    requirement, expected, name, pattern = rule
    check = checks.HeaderCheck(entry=index, name=name, pattern=pattern, ignore_case=True)
    return Judgement(requirement, check, expected, index, op.label)


def cross_cutting(capture: Capture, index: int, op: Operation) -> list[Judgement]:
    """The doors' rules of every answer (suite/http/answer_bounds.py observe_answer), judged both
    ways."""
    entry = capture.entries[index]
    status = entry.status or 0
    if status == 401:
        return [_rule(CHALLENGE, index, op)]
    body = bytes(entry.response_body)
    json_body = body.lstrip()[:1] in (b"{", b"[") and strictjson.read(body)[0] is not None
    if 200 <= status < 300 and capture.whole[index] and json_body:
        return [_rule(JSON_DECLARED, index, op)]
    return []


def status(capture: Capture, index: int, op: Operation) -> list[Judgement]:
    """The documented success status of a 2xx; no 5xx. A 4xx may answer the client's own input
    (or a resource it does not have): not judged."""
    code = capture.entries[index].status or 0
    no_5xx = checks.StatusClassCheck(entry=index, classes=NOT_5XX)
    found = [Judgement(NO_5XX, no_5xx, "no 5xx answer", index, op.label)]
    if 200 <= code < 300:
        if op.success_status is None:
            check: checks.Check = checks.StatusClassCheck(entry=index, classes=(2,))
            expected = "a 2xx (the document leaves the status unspecified)"
        else:
            check = checks.StatusCheck(entry=index, statuses=(op.success_status,))
            expected = f"HTTP {op.success_status}, the documented success status"
        found.append(Judgement(op.status_requirement, check, expected, index, op.label))
    return found


def bodies(capture: Capture, index: int, op: Operation) -> list[Judgement]:
    """Strict JSON, the documented shape of a success answer, a JSON body on a 4xx."""
    entry = capture.entries[index]
    code, found = entry.status or 0, []
    if not capture.whole[index]:
        return []  # what was not kept is not judged
    declared_json = strictjson.is_json(header_value(entry.response_headers, "content-type"))
    if entry.stream is not None or (declared_json and entry.response_body):
        strict = checks.StrictJsonCheck(entry=index)
        found.append(Judgement(SHAPE, strict, STRICT_JSON, index, op.label))
    documented = op.success_status in (None, code)
    if 200 <= code < 300 and documented and not op.streaming and has_shape(op, code):
        check: checks.Check = ResponseSchemaCheck(entry=index, operation=op.label)
        expected = "the shape spec/openapi.yaml gives this answer"
        found.append(Judgement(SHAPE, check, expected, index, op.label))
    if 400 <= code < 500:
        check = JsonBodyCheck(entry=index)
        found.append(Judgement(ERROR_JSON, check, "a JSON body", index, op.label))
    return found


def stream(capture: Capture, index: int, op: Operation) -> list[Judgement]:
    entry = capture.entries[index]
    kind = op.requirements.get("content-type", "")
    pattern = r"^\s*text/event-stream\s*(;|$)"
    check: checks.Check = checks.HeaderCheck(
        entry=index, name="content-type", pattern=pattern, ignore_case=True
    )
    found = [Judgement(kind, check, "Content-Type text/event-stream", index, op.label)]
    if checks.events_of(entry):
        check = checks.EventIdsCheck(entry=index)
        found.append(Judgement(EVENT_IDS, check, "an id on every event", index, op.label))
    told = entry.stream
    if told is not None and (told.closed_by_server or told.cut in SERVER_KEPT_OPEN):
        check = checks.StreamEndsCheck(entry=index)
        expected = "the server ends the stream once the run is terminal"
        found.append(Judgement(STREAM_ENDS, check, expected, index, op.label))
    return found


def only_failures(judgement: Judgement) -> bool:
    """Strict JSON counts where it breaks (as the run's doors record it), never as a pass: a
    body's shape says whether it holds what the document names."""
    return isinstance(judgement.check, checks.StrictJsonCheck)
