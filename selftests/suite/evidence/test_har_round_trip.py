"""HAR written and read back by one module (suite/evidence/har.py): an exchange with every field
the project adds to HAR (`_stream`, `_fault`, `_during`, `_poll` with its `agree` and what a
thinned loop left out, `_provenance`, `_credential`, the proxy's `_principal`, `_truncated`,
`_proxy`, `_in_flight`, and `log._finding`) reads back into the same typed values, and written
again gives the same JSON: a field written but not read fails here."""

from __future__ import annotations

import json
from dataclasses import MISSING, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assistant_conformance.suite.evidence import har
from assistant_conformance.suite.http import trail
from assistant_conformance.suite.judging import checks

STARTED = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
THREAD = "http://t/api/ai/threads/th-0123456789"


def _exchange(method: str, url: str, status: int, body: bytes, **extra: Any) -> trail.Entry:
    entry = trail.Entry(method, url, {"Accept": "*/*"}, b'{"x": 1}' if method != "GET" else None)
    entry.started, entry.seconds, entry.status = STARTED, 1.5, status
    entry.response_headers = {"content-type": "text/event-stream" if b"id:" in body else "x/y"}
    entry.take(body)
    for name, value in extra.items():
        setattr(entry, name, value)
    return entry


def _exchanges() -> list[trail.Entry]:
    """A stream, a request sent while it flowed, and a thinned poll of a settling loop."""
    stream = _exchange(
        "POST",
        f"{THREAD}/runs/stream",
        200,
        b"id: 1\nevent: values\ndata: {}\n\n",
        stream=trail.StreamEnd(1, "max_events", False),
    )
    during = _exchange("GET", f"{THREAD}/runs", 500, b"{}", fault="cut", during=[(stream, 1)])
    until = checks.FieldCheck(entry=checks.LOOP_ANSWER, key="status", not_in=("pending",))
    agree = trail.Agreement("status", 0.3, 4, "success")
    poll = trail.Poll(until, 60, "l1", agree, skipped=7, seconds=2.25)
    polled = _exchange("GET", f"{THREAD}/runs/r1", 200, b'{"status": "success"}', poll=poll)
    return [stream, during, polled]


def _written(entries: list[trail.Entry]) -> list[dict[str, Any]]:
    origin = har.Provenance("path[4]", 0, "event[0].id")
    return [
        har.entry_json(e, entries, (origin,) if i else (), _MARKS if i == 1 else None)
        for i, e in enumerate(entries)
    ]


_MARKS = har.ProxyMarks(
    "credential-1",
    ("request", "response"),
    har.ProxyAnswer(504, "connection_timeout", "ReadTimeout"),
    True,
    request_size=9000,
    response_size=8000,
)


def test_every_project_field_is_set_in_the_sample() -> None:
    """The sample sets every field of the typed extension classes away from its default: a field
    added to one of them is in this round trip, or this fails."""
    values = [_MARKS, _MARKS.answer, *(e.stream for e in _exchanges()), _exchanges()[2].poll]
    values.append(_exchanges()[2].poll.agree)  # type: ignore[union-attr]
    for value in [v for v in values if v is not None]:
        for f in fields(value):
            if f.default is not MISSING:
                assert getattr(value, f.name) != f.default, (type(value).__name__, f.name)


def test_entries_read_back_into_the_same_typed_values_and_write_again_the_same() -> None:
    entries = _exchanges()
    written = _written(entries)
    read = list(har.entries_of({"entries": json.loads(json.dumps(written))}))
    again = [har.rewritten(r, [x.exchange for x in read]) for r in read]
    assert again == written  # a field written but not read is missing here
    stream, during, polled = (r.exchange for r in read)
    assert stream.stream == trail.StreamEnd(1, "max_events", False)
    assert during.during == [(stream, 1)] and during.fault == "cut"
    assert read[1].proxy == _MARKS and read[1].credential == "none"
    assert read[2].provenance == (har.Provenance("path[4]", 0, "event[0].id"),)
    assert polled.poll is not None and polled.poll.agree == trail.Agreement(
        "status", 0.3, 4, "success"
    )
    assert polled.poll.until == checks.FieldCheck(
        entry=checks.LOOP_ANSWER, key="status", not_in=("pending",)
    )
    assert (polled.poll.loop, polled.poll.within, polled.poll.skipped) == ("l1", 60, 7)
    assert (polled.started, polled.seconds, polled.status) == (STARTED, 1.5, 200)


def test_a_findings_har_reads_back_into_its_finding(tmp_path: Path) -> None:
    check = checks.EventsNewCheck(
        got=(checks.EventSlice(entry=2),), seen=(checks.EventSlice(entry=0, end=1),)
    )
    finding = har.HarFinding(
        "RUN-JOIN-RESUME-0123abcd",
        "RUN-JOIN-RESUME",
        "fail",
        "no event already received",
        "repeated: ['1:values']",
        7,
        "tests/scenario/test_streams.py::test_join",
        "http://t",
        "run-x",
        check,
        request_timeout=3.5,
        process_timeout=45.0,
        kind="events-new",
    )
    entries = _exchanges()
    log = {"entries": _written(entries), "_finding": finding.as_json()}
    path = tmp_path / "exchanges" / f"{finding.id}.har"
    path.parent.mkdir()
    path.write_text(json.dumps({"log": log}))
    recorded = har.recorded_findings(tmp_path)[finding.id]
    assert recorded.finding == finding and recorded.check == check
    assert len(recorded.entries) == 3 and recorded.during(1) == {0: 1}
