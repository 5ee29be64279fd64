"""Helpers of the audit and proxy self-tests: a client app's traffic (the official LangGraph
Python client with a token, plain requests without one), the servers it is sent to, the audit of
what was recorded."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import jsonschema
from langgraph_sdk import get_sync_client
from langgraph_sdk.errors import LangGraphError
from safety_support import TOKEN, reference_app

from assistant_conformance.cli import command
from assistant_conformance.proof import mutants, variants
from assistant_conformance.reference._agents import ECHO_ASSISTANT_ID
from assistant_conformance.report.conformance_json import report_schema


def attempt(step: Callable[[], Any]) -> Any:
    """A client's step against a server that may break it: what it got, or None."""
    try:
        return step()
    except (httpx.HTTPError, LangGraphError):
        return None


def client_traffic(base: str) -> None:
    """What a client app sends: the SDK with a token, then requests without one (or a wrong one)."""
    sdk = get_sync_client(
        url=f"{base}/api/ai", api_key=None, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    try:
        thread = sdk.threads.create(metadata={"app": "audit"})["thread_id"]
        attempt(lambda: sdk.threads.update(thread, metadata={"n": 2}))
        attempt(lambda: sdk.threads.get(thread))
        attempt(lambda: sdk.threads.search(metadata={"app": "audit"}, limit=10))
        text = {"text": "the quick brown fox"}
        parts = attempt(lambda: list(sdk.runs.stream(thread, "echo", input=text))) or []
        run_id = (parts[0].data or {}).get("run_id") if parts else None
        named = [p.id for p in parts if p.id]
        if run_id:
            attempt(lambda: list(sdk.runs.join_stream(thread, run_id)))
        if run_id and len(named) > 2:
            attempt(lambda: list(sdk.runs.join_stream(thread, run_id, last_event_id=named[1])))
            attempt(lambda: resume_a_new_run(base, thread, text, named[1]))
        attempt(lambda: sdk.threads.delete(thread))
        attempt(lambda: sdk.threads.get(thread))
    finally:
        sdk.http.client.close()
    with httpx.Client(base_url=base, timeout=10) as anonymous:
        anonymous.post("/api/ai/threads/search", json={})
        anonymous.get(f"/api/ai/assistants/{ECHO_ASSISTANT_ID}")
        wrong = {"Authorization": "Bearer not-a-token-at-all"}
        for _ in range(2):  # refused once, so known refused the second time
            anonymous.post("/api/ai/threads/search", json={}, headers=wrong)
        anonymous.post("/api/ai/threads", json={}, headers={"Authorization": "Basic YTpi"})


def resume_a_new_run(base: str, thread: str, text: dict[str, str], last_id: str) -> None:
    """A new run started with `last-event-id` (plain requests: the SDK sends none on a POST),
    then joined without it: its whole replay."""
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=base, headers=auth, timeout=10) as client:
        body = {"assistant_id": ECHO_ASSISTANT_ID, "input": text}
        url = f"/api/ai/threads/{thread}/runs/stream"
        with client.stream("POST", url, json=body, headers={"last-event-id": last_id}) as read:
            read.read()
        where = read.headers.get("content-location", "")
        if "/runs/" in where:
            client.get(f"{where}/stream", headers={"Accept": "text/event-stream"})


def upstream_of(name: str, workdir: Path) -> Any:
    app = reference_app(workdir / name)
    if name in mutants.MUTANTS:
        return mutants.with_mutant(app, name)
    return variants.with_variant(app, name) if name != "reference" else app


def audited(hars: list[Path], report: Path, *more: str) -> tuple[int, dict[str, Any]]:
    code = command.exit_status(["audit", *map(str, hars), "--report-dir", str(report), *more])
    document = json.loads((report / "conformance.json").read_text())
    jsonschema.validate(document, report_schema())
    return code, document


def verdicts(document: dict[str, Any]) -> dict[str, str]:
    return {r["id"]: r["verdict"] for r in document["requirements"]}
