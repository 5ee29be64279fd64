"""contract/resources.py, the one table of the API's kinds of resource: it covers every operation
of the document that creates or deletes, agrees with the document, and a new row reaches each of
its readers (the ledger, the removal, the lookup, the capability probes, the pre-flight)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from safety_support import TOKEN, serve
from starlette.types import Receive, Scope, Send

from assistant_conformance.contract import resources
from assistant_conformance.contract.catalogue import load
from assistant_conformance.contract.openapi import by_label, operations
from assistant_conformance.contract.resources import (
    RESOURCES,
    Ask,
    Create,
    Resource,
    Route,
    Search,
    capability_probes,
    create_at,
    kinds,
    preflight_reads,
    resource_at,
    write_probed,
)
from assistant_conformance.report.model import SUPPORTED, UNSUPPORTED_GROUP
from assistant_conformance.suite.http.policy import Policy
from assistant_conformance.suite.http.target import Target, preflight
from assistant_conformance.suite.run.capabilities import probe_groups
from assistant_conformance.suite.safety.ledger import Ledger
from assistant_conformance.suite.safety.lookup import Unanswered, look_for
from assistant_conformance.suite.safety.removal import kind_of

MAKES = re.compile(r"create|copy", re.IGNORECASE)  # an operationId that says it makes something


def _routes() -> Iterator[Route]:
    for row in RESOURCES:
        for create in row.creates:
            yield create.route
            if create.removed_by is not None:
                yield create.removed_by
        yield from row.deletes
        yield from (ask.route for ask in (*row.probes, *row.reads))
        if row.search is not None:
            yield row.search.route


def test_every_operation_that_creates_or_deletes_is_a_rows() -> None:
    covered = {c.route.label for row in RESOURCES for c in row.creates}
    covered |= {route.label for row in RESOURCES for route in row.deletes}
    makes_or_deletes = [
        op.label for op in operations() if op.method == "DELETE" or MAKES.search(op.operation_id)
    ]
    assert len(makes_or_deletes) >= 15
    assert [label for label in makes_or_deletes if label not in covered] == []


def test_every_route_is_the_documents_or_said_not_to_be() -> None:
    documented = by_label()
    for route in _routes():
        assert (route.label in documented) == route.documented, route


def test_each_kind_is_told_by_its_create_and_delete_paths() -> None:
    for row in kinds():
        for route in (*(c.route for c in row.creates), *row.deletes):
            path = re.sub(r"\{\w+\}", "x-1", route.path)
            assert resource_at(path) is row, route
            assert kind_of(path) == row.name
    for row in RESOURCES:
        if row.within is not None:  # a part: removed with what holds it, never recorded
            assert row.within in {r.name for r in RESOURCES}
            for create in row.creates:
                assert create_at(create.route.method, create.route.path) is None


def test_the_groups_are_the_catalogues_and_probed_without_path_parameters() -> None:
    groups = capability_probes()
    assert set(groups) == set(load().groups)
    for asks in groups.values():
        assert asks and all("{" not in ask.route.path for ask in asks)
    assert set(write_probed()) == {"files", "contexts", "chatkit"}  # their probes are creates


def test_a_path_parameter_id_names_the_resource_of_its_path() -> None:
    kinds_of_id = {op.path: op.id_kind for op in operations() if "id" in op.path_params}
    assert kinds_of_id and None not in kinds_of_id.values()
    assert kinds_of_id["/api/ai/v1/kb/{id}/bulk"] == kinds_of_id["/api/ai/knowledges/{id}"] == "kb"
    assert kinds_of_id["/api/ai/contexts/file/{id}"] == "context_file"
    assert kinds_of_id["/api/ai/assistants/{id}"] == "assistant"


# --- a new row reaches every reader ---------------------------------------------------------

WIDGETS = "/api/ai/widgets"
WIDGET = Resource(
    "widget",
    r"/api/ai/widgets(?:/[^/]+)?",
    creates=(
        Create(Route("POST", WIDGETS, False), Route("DELETE", f"{WIDGETS}/{{widget_id}}", False)),
    ),
    deletes=(Route("DELETE", f"{WIDGETS}/{{widget_id}}", False),),
    id_field="widget_id",
    mark="title",
    search=Search(Route("POST", f"{WIDGETS}/search", False), ("where", "title"), "take", "skip"),
    group="widgets",
    probes=(Ask(Route("POST", f"{WIDGETS}/search", False), {}),),
    reads=(Ask(Route("POST", f"{WIDGETS}/search", False), {"limit": 1}),),
)


@pytest.fixture
def with_widgets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resources, "RESOURCES", (WIDGET, *RESOURCES))


def _widgets(request: httpx.Request) -> httpx.Response:
    """A target of widgets only: a create answers its id, the search finds one run's widget."""
    if request.url.path == f"/base{WIDGETS}/search":
        asked = json.loads(request.content).get("where", {})
        found = {"widget_id": "w/2", "title": asked.get("title")}
        return httpx.Response(200, json={"items": [found]})
    if request.url.path == f"/base{WIDGETS}":
        return httpx.Response(201, json={"widget_id": "w/1"})
    return httpx.Response(404, json={"detail": "Not Found"})


@pytest.mark.usefixtures("with_widgets")
def test_a_new_row_reaches_the_ledger_the_removal_and_the_lookup(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path, "http://target.test/base")
    mark = {"title": ledger.run_prefix}
    with httpx.Client(
        base_url="http://target.test/base", transport=httpx.MockTransport(_widgets)
    ) as client:
        intent = ledger.intend(client.build_request("POST", WIDGETS, json=mark), "main")
        assert intent is not None
        ledger.created(intent, 201, {"widget_id": "w/1"})
        assert [(e.method, e.path) for e in ledger.entries] == [("DELETE", f"{WIDGETS}/w%2F1")]
        assert kind_of(f"{WIDGETS}/w%2F1") == "widget"
        unanswered = Unanswered(9, "main", f"POST {WIDGETS}", "widget", mark)
        found, unlooked = look_for([unanswered], {"main": client}, lambda: 10, lambda _: True)
    assert unlooked == []
    assert [(r.method, r.path) for r in found] == [("DELETE", f"{WIDGETS}/w%2F2")]


@pytest.mark.usefixtures("with_widgets")
def test_a_new_row_reaches_the_capability_probes() -> None:
    others = tuple(g for g in capability_probes() if g != "widgets")
    with httpx.Client(
        base_url="http://target.test/base", transport=httpx.MockTransport(_widgets)
    ) as client:
        found = probe_groups(client, skip=others)
    assert list(found) == ["widgets"]
    assert found["widgets"].status == SUPPORTED  # its search answered 200
    with httpx.Client(
        base_url="http://target.test/base",
        transport=httpx.MockTransport(lambda r: httpx.Response(404, json={})),
    ) as client:
        assert probe_groups(client, skip=others)["widgets"].status == UNSUPPORTED_GROUP


async def _answers_json(scope: Scope, receive: Receive, send: Send) -> None:
    """A target whose every read answers a JSON list."""
    if scope["type"] != "http":
        return
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": b"[]"})


@pytest.mark.usefixtures("with_widgets")
def test_a_new_row_reaches_the_preflight() -> None:
    assert preflight_reads()[0].route.path == f"{WIDGETS}/search"
    with serve(_answers_json) as url:
        target = Target(url, TOKEN, None)
        preflight(target, Policy(deadline=5.0))
    assert target.first_read == ("POST", f"{WIDGETS}/search", {"limit": 1})
