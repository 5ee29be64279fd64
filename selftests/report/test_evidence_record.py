"""A failed finding's exchange is one frozen value (report/exchange_record.py's ExchangeRecord):
made where the finding is (suite/http/exchange.py: `evidence_record`, redacted), carried between
the run's processes as JSON (`Finding.as_json` / `Finding.of_json`: pytest-xdist passes only
plain data) and written into conformance.json by the same class, with `har` and `entry` only in
an audit's."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from assistant_conformance.report import redact
from assistant_conformance.report.conformance_json import FindingRecord
from assistant_conformance.report.exchange_record import ExchangeRecord
from assistant_conformance.report.model import FAIL, Finding
from assistant_conformance.suite.http.exchange import evidence_record
from assistant_conformance.suite.http.trail import Entry

SECRET = "evidence-record-secret-token"


def _exchange() -> Entry:
    sent = Entry(
        "POST",
        "http://127.0.0.1:9/api/ai/threads",
        {"Authorization": f"Bearer {SECRET}", "Content-Type": "application/json"},
        b'{"metadata": {}}',
        status=200,
    )
    sent.response_body = bytearray(b'{"thread_id": "t1"}')
    return sent


@pytest.fixture(autouse=True)
def _secret() -> Iterator[None]:
    with redact.scope():
        redact.register(SECRET)
        yield


def test_a_runs_evidence_is_typed_redacted_and_names_no_har() -> None:
    made = evidence_record(_exchange())
    assert isinstance(made, ExchangeRecord)
    assert made.request.method == "POST" and made.response.status == 200
    assert list(made.as_json()) == ["request", "response", "curl"]
    assert SECRET not in json.dumps(made.as_json())


def test_an_audits_evidence_names_its_file_and_entry() -> None:
    made = evidence_record(_exchange(), har="traffic.har", entry=3)
    assert list(made.as_json()) == ["request", "response", "curl", "har", "entry"]
    found = Finding("THR-STATUS", FAIL, "HTTP 201", "HTTP 200", made)
    assert found.place() == "traffic.har, entry 3"


@pytest.mark.parametrize("where", [{}, {"har": "traffic.har", "entry": 0}])
def test_a_finding_crosses_processes_and_reaches_the_report_as_it_was_made(where) -> None:
    found = Finding(
        "THR-STATUS", FAIL, "HTTP 201", "HTTP 200", evidence_record(_exchange(), **where)
    )
    found.operation, found.also_at = "POST /api/ai/threads", ["exchanges/X.har"]
    sent = json.loads(json.dumps(found.as_json()))  # as a worker hands it to the controller
    back = Finding.of_json(sent)
    assert back == found and isinstance(back.evidence, ExchangeRecord)
    written = FindingRecord.model_validate(sent).model_dump(mode="json", exclude_unset=True)
    assert written["evidence"] == found.evidence.as_json()
