"""The suite passes every conformant variant of the reference server, as it passes the reference.

Each variant of assistant_conformance.variants changes the reference only where the contract
leaves room (extra fields, SSE spelling, opaque event ids, latency, gzip, identifier format). The
whole suite runs against each on its own server, and against the unchanged reference, several at
once (killtable.run_all, as `python -m assistant_conformance.killtable` does): a variant must get
no failure and no error, and no warning the reference does not get.
"""

from __future__ import annotations

import time

import pytest

from assistant_conformance import killtable, sse
from assistant_conformance.variants import VARIANTS, SseDialect, opaque_ids, own_ids

FRAME = b'id: 7\nevent: values\ndata: {"run_id": "r", "n": 1}\n\n'


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, killtable.Outcome]:
    workdir = tmp_path_factory.mktemp("variants")
    jobs, started = killtable.default_jobs(), time.monotonic()
    kinds = [killtable.REFERENCE, killtable.VARIANT]
    done = killtable.run_all(killtable.cases(kinds=kinds), workdir, jobs)
    killtable.write(done, workdir / "reports", time.monotonic() - started, jobs)
    print(f"\n{killtable.text(done)}")
    return {o.case.name: o for o in done}


def test_sse_dialect_spells_the_same_event_differently() -> None:
    spelled = SseDialect(app=None).frame(FRAME)  # type: ignore[arg-type]
    assert b"\r\n" in spelled and b"\n\n" not in spelled.replace(b"\r\n", b"")
    assert spelled.index(b"id:") > spelled.index(b"event:") and b"retry:" in spelled
    [event] = sse.parse(spelled.decode())
    [original] = sse.parse(FRAME.decode())
    assert (event.event, event.data, event.id) == (original.event, original.data, original.id)


def test_opaque_identifiers_map_both_ways() -> None:
    uuid = "0b5e5d7c-2f4e-4c1a-9d3b-6a7f8e9d0c1b"
    answer = opaque_ids({"thread_id": uuid, "workspaceId": uuid})
    assert answer == {"thread_id": "id_" + uuid.replace("-", ""), "workspaceId": uuid}
    assert own_ids(f"/api/ai/threads/{answer['thread_id']}".encode()).decode().endswith(uuid)


def test_the_reference_passes_the_whole_suite(outcomes: dict[str, killtable.Outcome]) -> None:
    reference = outcomes[killtable.REFERENCE]
    assert not reference.problem, f"{reference.problem}\n{reference.log}"
    assert {r: v for r, v in reference.observed.items() if v != "warn"} == {}, reference.log


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variant_passes_the_whole_suite(outcomes: dict[str, killtable.Outcome], name: str) -> None:
    outcome = outcomes[name]
    allowed = {r for r, v in outcomes[killtable.REFERENCE].observed.items() if v == "warn"}
    assert not outcome.problem, f"{outcome.problem}\n{outcome.log}"
    beyond = {r: v for r, v in outcome.observed.items() if not (v == "warn" and r in allowed)}
    assert beyond == {}, outcome.log
