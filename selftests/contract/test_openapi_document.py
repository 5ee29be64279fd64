"""spec/openapi.yaml against the contract (spec/interface.md): operations, params, links."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec" / "openapi.yaml"
INTERFACE = ROOT / "spec" / "interface.md"

KB_PREFIXES = ("/api/ai/v1/kb", "/api/ai/knowledges")
# Tags by path prefix (interface document, sections 1 and 9); the first match wins.
TAG_BY_PREFIX = (
    ("/api/ai/v1/", "AI/v1"),
    ("/api/ai/knowledges", "AI/Knowledges"),
    ("/api/ai/contexts/", "AI/Contexts"),
    ("/api/ai/assistants/", "AI/Assistants"),
    ("/api/ai/threads", "AI/Threads"),
    ("/api/ai/conversations", "AI/Conversations"),
    ("/api/ai/store/", "AI/Store"),
)
METHODS = ("get", "put", "post", "delete", "patch")
ROW = re.compile(r"^\| (GET|PUT|POST|DELETE|PATCH) \| `([^`]+)` \| (.*) \| (\d{3}|unspecified) \|$")
DECLARED = re.compile(r"`([^`]+)` \((\w+), (?:declared )?required\)")


def _interface_rows() -> dict[tuple[str, str], dict[str, Any]]:
    """(method, path) -> {status, params: {name: (in, type)}}, from the tables of section 4."""
    rows = {}
    for line in INTERFACE.read_text().splitlines():
        match = ROW.match(line.strip())
        if not match:
            continue
        method, path, request, status = match.groups()
        params: dict[str, tuple[str, str]] = {}
        for part in request.split(";"):
            part = part.strip()
            if part.startswith("path "):
                params.update({name: ("path", "string") for name in re.findall(r"`([^`]+)`", part)})
            elif part.startswith(("query ", "header ")):
                location = part.split()[0]
                params.update({n: (location, t) for n, t in DECLARED.findall(part)})
        for prefix in KB_PREFIXES if "<P>" in path else (None,):
            concrete = path.replace("<P>", prefix) if prefix else path
            rows[(method.lower(), concrete)] = {"status": status, "params": params}
    return rows


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return yaml.safe_load(SPEC.read_text())


@pytest.fixture(scope="module")
def table() -> dict[tuple[str, str], dict[str, Any]]:
    return _interface_rows()


def _deref(doc: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = doc
        for key in node["$ref"].removeprefix("#/").split("/"):
            target = target[key]
        node = target
    return node


def _operations(doc: dict[str, Any]):
    for path, item in doc["paths"].items():
        for method in METHODS:
            if method in item:
                yield method, path, item, item[method]


def _params(doc: dict[str, Any], item: dict[str, Any], op: dict[str, Any]) -> dict[str, dict]:
    found = [_deref(doc, p) for p in item.get("parameters", []) + op.get("parameters", [])]
    return {p["name"]: p for p in found}


def test_document_is_valid_openapi_31(doc):
    from openapi_spec_validator import validate

    assert doc["openapi"].startswith("3.1")
    validate(doc)


def test_operations_are_exactly_the_interface_tables(doc, table):
    ours = {(method, path) for method, path, _, _ in _operations(doc)}
    assert len(table) == 49
    assert ours == set(table)


def test_success_status_matches_the_table(doc, table):
    for method, path, _, op in _operations(doc):
        expected = table[(method, path)]["status"]
        key = "2XX" if expected == "unspecified" else expected
        assert op["x-success-status"] == (expected if expected == "unspecified" else int(expected))
        success_keys = {k for k in map(str, op["responses"]) if k.startswith("2")}
        assert success_keys == {key}, (method, path)


def test_security_401_tag_and_operation_id(doc):
    scheme = doc["components"]["securitySchemes"]["bearer"]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
    assert doc["security"] == [{"bearer": []}]
    ids = []
    for method, path, _, op in _operations(doc):
        assert op["security"] == [{"bearer": []}], (method, path)
        assert "401" in op["responses"] and "4XX" in op["responses"], (method, path)
        expected_tag = next(tag for prefix, tag in TAG_BY_PREFIX if path.startswith(prefix))
        assert op["tags"] == [expected_tag], (method, path)
        ids.append(op["operationId"])
    assert len(ids) == len(set(ids))


def test_declared_parameters(doc, table):
    for method, path, item, op in _operations(doc):
        params = _params(doc, item, op)
        for name, (location, type_) in table[(method, path)]["params"].items():
            param = params[name]
            assert (param["in"], param["required"], param["schema"]["type"]) == (
                location,
                True,
                type_,
            ), (method, path, name)
        assert set(re.findall(r"\{(\w+)\}", path)) == {
            n for n, p in params.items() if p["in"] == "path"
        }


def test_links_target_existing_operations_and_parameters(doc):
    by_id = {op["operationId"]: (item, op) for _, _, item, op in _operations(doc)}
    count = 0
    for _, _, _, op in _operations(doc):
        for response in op["responses"].values():
            for name, link in _deref(doc, response).get("links", {}).items():
                assert link["operationId"] in by_id, name
                item, target = by_id[link["operationId"]]
                assert set(link.get("parameters", {})) <= set(_params(doc, item, target)), name
                count += 1
    assert count > 0


def test_schemathesis_loads_every_operation():
    import schemathesis

    schema = schemathesis.openapi.from_path(str(SPEC))
    results = list(schema.get_all_operations())
    assert len(results) == 49
    assert all(type(result).__name__ == "Ok" for result in results)
