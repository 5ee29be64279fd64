"""Knowledge-base bodies claim only what the suite owns: references only
as the user gave them (--kb-workspace-id, ...), names unique per run, prefix, test and body, the
property layer's generated bodies shaped alike before they are sent (what a negative case broke
kept), acceptance judged on whole bodies only, and a status judged only on requests that name
what the run knows. The doubles that check references and names are variants (proof/variants/
references.py), run by selftests/proof/test_variants.py.
"""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import Any

import pytest

from assistant_conformance.suite.config.options import OPTIONS
from assistant_conformance.suite.config.settings import SuiteSettings
from assistant_conformance.suite.flows import knowledge
from assistant_conformance.suite.judging import schemathesis_charges
from assistant_conformance.suite.judging.negations import Negation
from assistant_conformance.suite.property import owned_bodies
from assistant_conformance.suite.property.cases import complete_kb_body
from assistant_conformance.suite.property.generation import schema

WORKSPACE = str(uuid.uuid4())
REFERENCE_ENV = {
    "ASSISTANT_API_KB_WORKSPACE_ID": WORKSPACE,
    "ASSISTANT_API_KB_COPILOT_ID": "copilot-7",
}


def test_a_valid_body_names_no_resource_the_user_did_not_give() -> None:
    body = knowledge.Bodies("run-1").valid(knowledge.V1, "t")
    assert not {"workspaceId", "integrationId"} & set(body)
    assert "copilotId" not in body["copilotModel"] and body["copilotModel"]["model"]
    assert complete_kb_body(body)  # every other field of 2.1 is there


def test_references_the_user_gave_are_sent() -> None:
    given = {"workspaceId": WORKSPACE, "copilotModel.copilotId": "copilot-7"}
    body = knowledge.Bodies("run-1", given).valid(knowledge.KNOWLEDGES, "t", variant=1)
    assert body["workspaceId"] == WORKSPACE and body["copilotModel"]["copilotId"] == "copilot-7"
    assert "integrationId" not in body


def test_names_are_unique_per_run_prefix_test_and_body() -> None:
    first, second = (
        knowledge.Bodies("run-1"),
        knowledge.Bodies("run-1"),
    )  # two tests, or one test run twice
    names = {
        prefix: [first.valid(prefix, "update")["name"] for _ in range(2)]
        + [second.valid(prefix, "update")["name"], first.minimal(prefix, "update")["name"]]
        for prefix in knowledge.PREFIXES
    }
    every = [n for listed in names.values() for n in listed]
    assert len(set(every)) == len(every)
    for prefix, listed in names.items():
        assert all(n.startswith(f"run-1-{knowledge.PREFIX_NAMES[prefix]}-update") for n in listed)


def test_a_reference_broken_on_purpose_stays() -> None:
    body = {"workspaceId": "not-a-uuid", "integrationId": str(uuid.uuid4()), "name": "x"}
    kept = knowledge.with_references(body, {}, keep={"workspaceId"})
    assert kept == {"workspaceId": "not-a-uuid", "name": "x"}
    nested = {"copilotModel": "embedding"}  # the object itself of the wrong type
    assert knowledge.with_references(nested, {}) == nested


def test_the_options_reach_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    flags = {o.flag: o.env for o in OPTIONS}
    assert flags["--kb-workspace-id"] == "ASSISTANT_API_KB_WORKSPACE_ID"
    assert flags["--kb-integration-id"] == "ASSISTANT_API_KB_INTEGRATION_ID"
    assert flags["--kb-copilot-id"] == "ASSISTANT_API_KB_COPILOT_ID"
    for name, value in REFERENCE_ENV.items():
        monkeypatch.setenv(name, value)
    config = SimpleNamespace(getoption=lambda *_, **__: None, getini=lambda _: None)
    settings = SuiteSettings.from_config(config)  # type: ignore[arg-type]
    assert settings.kb_references == {
        "workspaceId": WORKSPACE,
        "copilotModel.copilotId": "copilot-7",
    }


def generated(body: dict[str, Any]) -> Any:
    return schema()["/api/ai/v1/kb"]["POST"].Case(body=body)


def test_a_generated_body_is_shaped_before_it_is_sent() -> None:
    drawn = {
        "workspaceId": str(uuid.uuid4()),
        "integrationId": str(uuid.uuid4()),
        "name": "0",
        "copilotModel": {"copilotId": "x", "model": "m"},
    }
    case = generated(dict(drawn))
    owned_bodies.own_kb_body(case, {"workspaceId": WORKSPACE}, "run-1-v1CreateKnowledgebase-ab-1")
    assert case.body == {
        "workspaceId": WORKSPACE,
        "name": "run-1-v1CreateKnowledgebase-ab-1-0",
        "copilotModel": {"model": "m"},
    }
    other = generated(dict(drawn))
    owned_bodies.own_kb_body(other, {}, "run-1-v1CreateKnowledgebase-ab-2")
    assert other.body["name"] != case.body["name"] and "workspaceId" not in other.body


def test_what_a_negative_case_broke_is_sent_as_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = [Negation("body", "workspaceId", "format"), Negation("body", "name", "type")]
    monkeypatch.setattr(owned_bodies, "negations", lambda case: broken)
    case = generated({"workspaceId": "1234", "integrationId": str(uuid.uuid4()), "name": 42})
    owned_bodies.own_kb_body(case, {}, "run-1-x-1")
    assert case.body == {"workspaceId": "1234", "name": 42}


@pytest.mark.parametrize(
    "body",
    [
        {},  # which fields are required is not shown: a partial body may be refused
        {"name": "kb"},
        {
            k: v
            for k, v in knowledge.Bodies("r").valid(knowledge.V1, "t").items()
            if k != "description"
        },
        {**knowledge.Bodies("r").valid(knowledge.V1, "t"), "recall": {"topK": 5}},
    ],
)
def test_only_a_whole_body_is_judged_for_acceptance(body: dict[str, Any]) -> None:
    assert not complete_kb_body(body)


def test_a_status_is_judged_only_on_what_the_run_knows() -> None:
    case = schema()["/api/ai/v1/kb/{id}/process"]["POST"].Case(
        path_parameters={"id": "0"}, body=["d"]
    )
    answer: Any = SimpleNamespace(status_code=500)
    check = "status_code_conformance"
    failed = schemathesis_charges.check_failure(check, case, answer, None, known=False)
    assert failed is None  # the 5xx is not_a_server_error's: ROBUST-NO-5XX
    assert schemathesis_charges.check_failure(check, case, answer, None) == "KB-V1-STATUS"
    created: Any = SimpleNamespace(status_code=201, content=b"")
    assert schemathesis_charges.check_passed(check, case, created, known=False) == []
    assert schemathesis_charges.check_passed(check, case, created) == ["KB-V1-STATUS"]
