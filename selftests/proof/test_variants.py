"""The suite passes every conformant variant of the reference server, as it passes the reference.

Each variant of assistant_conformance.proof.variants changes the reference only where the contract
leaves room (extra fields, SSE spelling, opaque event ids, latency, gzip, identifier format). The
whole suite runs against each on its own server, several at once, in the same pool as the mutants
(killtable_batch.py, as `python -m assistant_conformance.proof.killtable` does): a variant must
get no failure, no warning and no error, as the reference gets none, but a warning on a SHOULD it
names as its own (`warns`: a 5xx for references to nothing, a deleted knowledge base's empty
status); a timed variant (its room is in timing) in a run with the default workers.
"""

from __future__ import annotations

import json

import pytest
from killtable_batch import outcomes

from assistant_conformance.proof import killreport, killtable
from assistant_conformance.proof.variants import VARIANTS, SseDialect, opaque_ids, own_ids
from assistant_conformance.suite.http import sse

# Under xdist the table is made once, on one worker, for the mutants' tests and these.
pytestmark = pytest.mark.xdist_group("killtable")
FRAME = b'id: 7\nevent: values\ndata: {"run_id": "r", "n": 1}\n\n'


def test_sse_dialect_spells_the_same_event_differently() -> None:
    spelled = SseDialect(app=None).frame(FRAME)  # type: ignore[arg-type]
    assert b"\r\n" in spelled and b"\n\n" not in spelled.replace(b"\r\n", b"")
    assert spelled.index(b"id:") > spelled.index(b"event:") and b"retry:" in spelled
    [event] = sse.parse_events(spelled.decode())
    [original] = sse.parse_events(FRAME.decode())
    assert (event.event, event.data, event.id) == (original.event, original.data, original.id)


def test_opaque_identifiers_map_both_ways() -> None:
    uuid = "0b5e5d7c-2f4e-4c1a-9d3b-6a7f8e9d0c1b"
    answer = opaque_ids({"thread_id": uuid, "workspaceId": uuid})
    assert answer == {"thread_id": "id_" + uuid.replace("-", ""), "workspaceId": uuid}
    assert own_ids(f"/api/ai/threads/{answer['thread_id']}".encode()).decode().endswith(uuid)


def test_a_variant_whose_verdicts_differ_between_its_runs_fails() -> None:
    [case] = killtable.cases(["extra-fields"])
    steady = killreport.CaseOutcome(case, {}, 1.0, 0)
    flipping = killreport.CaseOutcome(case, {}, 1.0, 0, differing={"AUTH-401": ["pass", "skip"]})
    killtable.judge_outcomes([steady, flipping])
    assert (steady.result, flipping.result) == ("passed", "failed")
    said = killreport.rows([flipping])[0]["observed"]
    assert said == "none; verdicts differed between runs: AUTH-401 pass/skip"


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variant_passes_the_whole_suite(name: str) -> None:
    """No finding but the SHOULDs it names (a timed variant in a run with the default workers, the
    suite's runs in flight within their bound)."""
    outcome = outcomes()[name]
    assert not outcome.problem, f"{outcome.problem}\n{outcome.log}"
    assert outcome.report is not None
    transport = json.loads(outcome.report.read_text(encoding="utf-8"))["transport"]
    assert transport["most_runs_in_flight"] <= transport["runs_at_once"], transport
    if outcome.case.lenient:  # validates nothing: SHOULD warnings only, and `full`
        assert outcome.result == "passed", f"{outcome.observed} {outcome.level}\n{outcome.log}"
        assert outcome.observed, "a variant that validates nothing gets the rejection warnings"
        return
    allowed = dict.fromkeys(outcome.case.warns, "warn")  # the SHOULDs it breaks, if any
    assert all(allowed.get(rid) == v for rid, v in outcome.observed.items()), outcome.log
