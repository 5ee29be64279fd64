"""tests/scenario/test_auth.py covers every operation of spec/openapi.yaml, and fails where auth is
skipped.

The broken servers are the reference server behind a small proxy that "skips auth" on chosen
operations: a request to one of them without a valid credential is passed on as the main
principal's. Each item of the auth table sends its unauthenticated requests to one operation
only (the checks around it use valid credentials), so one run against a proxy skipping auth on
every operation shows, operation by operation, what a server skipping it on that one would get.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from reverse_proxy import ReverseProxy, Rewrite
from safety_support import run_suite

from assistant_conformance.contract.openapi import Operation, by_id, operations
from assistant_conformance.reference import embedded

ROOT = Path(__file__).resolve().parents[2]
TOKEN_A, TOKEN_B = "auth-table-token-a", "auth-table-token-b"
VALID = {f"Bearer {TOKEN_A}", f"Bearer {TOKEN_B}"}
MISSING_OR_INVALID = re.compile(r"\[AUTH-(MISSING|INVALID)-REJECTED\]")
# Operations whose effect a client can see through the document's reads: a refused request that
# went through anyway must show as AUTH-REJECTED-NO-EFFECT (bulk and PUT of a KB have no read).
EFFECT_VISIBLE = (
    "createThread", "createConversation", "patchThread", "deleteThread", "updateThreadState",
    "copyThread", "createRun", "waitRun", "patchConversation", "deleteConversation",
    "createMessage", "v1DeleteKnowledgebase", "knowledgesDeleteKnowledgebase",
    "v1ProcessDocuments", "knowledgesProcessDocuments", "deleteContextFile", "deleteFeedback",
)  # fmt: skip
# What a check is not judged by once a target kept the chat-kit sessions it should have refused:
# the budget spent, or (one made already) no other such request risked.
BUDGET_SPENT = ("chat-kit sessions is spent", "another is not risked")


def _auth_module() -> Any:
    spec = importlib.util.spec_from_file_location(
        "auth_table_under_test", ROOT / "tests" / "scenario" / "test_auth.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses resolve their annotations through it
    spec.loader.exec_module(module)
    return module


def _ids(params: list[Any]) -> set[str]:
    return {p.id for p in params}


def test_operation_table_is_the_whole_document() -> None:
    doc = yaml.safe_load((ROOT / "spec" / "openapi.yaml").read_text())
    declared = {
        (method.upper(), path)
        for path, item in doc["paths"].items()
        for method in item
        if method in ("get", "put", "post", "delete", "patch")
    }
    table = operations()
    assert len(declared) == 49
    assert {(op.method, op.path) for op in table} == declared
    assert len({op.operation_id for op in table}) == 49
    assert {op.operation_id for op in table if op.streaming} == {"streamRun", "joinRunStream"}
    for op in table:  # every placeholder filled, every required parameter given
        args = op.request()
        assert "{" not in args["url"], op.label
        assert set(args.get("params", {})) == set(op.query_params)


def test_auth_tests_have_an_item_per_operation_and_case() -> None:
    module = _auth_module()
    labels = [op.label for op in operations()]
    cases = ("no-header", "basic", "empty-bearer", "wrong-token")
    assert _ids(module._every_operation()) == {
        f"{label}-{case}" for label in labels for case in cases
    }
    by_id_ops = [op.label for op in operations() if op.path_params]
    assert len(by_id_ops) == 36
    assert _ids(module._every_operation_on_a_resource()) == {
        f"{label}-{case}" for label in by_id_ops for case in ("no-header", "wrong-token")
    }


# --- a server that skips auth -------------------------------------------------------------------


def _pattern(op: Operation) -> re.Pattern[str]:
    return re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(op.path)) + "$")


def skipping_auth(skips: Callable[[str, str], bool]) -> Rewrite:
    """The proxy's change: a request to an operation `skips` names, without a valid credential,
    is passed on as the main principal's."""

    def rewrite(method: str, path: str, headers: dict[str, str]) -> dict[str, str]:
        credential = next((v for k, v in headers.items() if k.lower() == "authorization"), None)
        if not skips(method, path) or credential in VALID:
            return headers
        kept = {k: v for k, v in headers.items() if k.lower() != "authorization"}
        return {**kept, "Authorization": f"Bearer {TOKEN_A}"}

    return rewrite


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[embedded.RunningServer]:
    server = embedded.start(
        [TOKEN_A, TOKEN_B], tmp_path_factory.mktemp("auth-table") / "ref.db", token_delay_ms=5
    )
    yield server
    server.stop()


def run_auth_suite(
    upstream: str, skips: Callable[[str, str], bool], out: Path, *args: str
) -> dict[str, str | None]:
    """Run tests/scenario/test_auth.py through a proxy; answer {test name: failure text or None
    (passed)}."""
    junit = out / "junit.xml"
    with ReverseProxy(upstream, skipping_auth(skips)) as proxy:
        run = run_suite(
            out / "reports",
            "tests/scenario/test_auth.py",
            f"--base-url={proxy.url}",
            f"--token={TOKEN_A}",
            f"--alt-token={TOKEN_B}",
            f"--junitxml={junit}",
            *args,
        )
    assert junit.exists(), run.stdout[-3000:] + run.stderr[-3000:]
    outcomes: dict[str, str | None] = {}
    for case in ET.parse(out / "junit.xml").getroot().iter("testcase"):
        failure = case.find("failure")
        assert case.find("error") is None, case.get("name")
        skipped = case.find("skipped")  # the reference has all it needs; a target that keeps
        said = skipped.get("message") or "" if skipped is not None else ""
        spent = any(reason in said for reason in BUDGET_SPENT)
        assert skipped is None or spent, case.get("name")  # refused creates spends the budget
        outcomes[case.attrib["name"]] = (
            None if failure is None else (failure.text or "") + failure.get("message", "")
        )
    return outcomes


def _items_of(outcomes: dict[str, str | None], op: Operation) -> dict[str, str | None]:
    return {
        name: text
        for name, text in outcomes.items()
        if name.startswith("test_refused")
        and re.search(rf"\[{re.escape(op.label)}-[a-z-]+\]$", name)
    }


def test_every_operation_fails_when_it_skips_auth(
    upstream: embedded.RunningServer, tmp_path: Path
) -> None:
    outcomes = run_auth_suite(
        upstream.base_url, lambda method, path: True, tmp_path, "--strict-conformance"
    )
    assert len(outcomes) == 306
    for op in operations():
        items = _items_of(outcomes, op)
        refused = [name for name, text in items.items() if text and MISSING_OR_INVALID.search(text)]
        assert refused, f"no MUST failure for {op.label}: {items}"
        if op.operation_id in EFFECT_VISIBLE:
            assert any("[AUTH-REJECTED-NO-EFFECT]" in (t or "") for t in items.values()), op.label
    streams = [n for n, t in outcomes.items() if n.startswith("test_last_event_id") and t]
    assert len(streams) == 2
    # The second principal's credential is valid: isolation is untouched by skipped auth.
    assert not [n for n, t in outcomes.items() if n.startswith("test_other_principal") and t]


@pytest.mark.parametrize("operation_id", ["deleteThread"])
def test_skipping_auth_on_one_operation_fails_only_its_items(
    upstream: embedded.RunningServer, tmp_path: Path, operation_id: str
) -> None:
    op = by_id(operation_id)
    pattern = _pattern(op)
    outcomes = run_auth_suite(
        upstream.base_url,
        lambda method, path: method == op.method and bool(pattern.match(path)),
        tmp_path,
    )
    failed = {name for name, text in outcomes.items() if text is not None}
    assert failed == {
        f"test_refused_on_an_existing_resource[{op.label}-no-header]",
        f"test_refused_on_an_existing_resource[{op.label}-wrong-token]",
    }
    for name in failed:
        assert MISSING_OR_INVALID.search(outcomes[name] or "")
