"""Variants whose knowledge-base documents are looked up as a database-backed server looks them up:

- `KbReferencesToNothing500`: a process body or a status query naming a document that is none of
  the knowledge base's (an id never made, `LPT1`, `""`) answers 500, as the platform the document
  was written from does (its lookup throws on an unknown or malformed id); what a server does with
  references to nothing the document does not say. Every request about documents that exist is
  answered as the reference answers it.
- `DeletedKbStatusEmpty`: a deleted knowledge base's status query answers `200 []` under either
  prefix (one store, the query a filter over documents), where the reference answers 404.

A client that refers only to what it owns is served by both as by the reference.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Receive, Scope, Send

from assistant_conformance.contract.openapi import KB_PREFIXES
from assistant_conformance.proof.mutants._base import (
    ERROR_500,
    answer_of,
    json_or_none,
    read_body,
    replay,
    send_answer,
    send_json,
)
from assistant_conformance.proof.variants._base import Variant
from assistant_conformance.reference._knowledge_pipeline import DOC, KNOWLEDGEBASE
from assistant_conformance.reference.auth import principal_for

KB_DOCUMENTS = re.compile(f"{KB_PREFIXES}/(?P<kb>[^/]+)/(?P<what>process|status)")
KB_ITEM = re.compile(f"{KB_PREFIXES}/(?P<kb>[^/]+)")


def principal_of(app: Any, scope: Scope) -> str | None:
    """The principal a request is authorized as (None: the reference refuses it)."""
    header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
    context = app.state.context
    return principal_for(header or None, context.settings.tokens, context.db)


def named_documents(scope: Scope, what: str, body: Any) -> list[str] | None:
    """The document ids a process body or a status query names (None: not a list of them)."""
    if what == "process":
        ok = isinstance(body, list) and all(isinstance(item, str) for item in body)
        return list(body) if ok else None
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    given = query.get("ids")
    return [part.strip() for part in given[0].split(",")] if given else None


class KbReferencesToNothing500(Variant):
    """Process and status answer 500 where they name a document that is none of the knowledge
    base's (an id never made, malformed, empty), on a knowledge base the caller has: the document
    does not say what references to nothing get (a 5xx there is a robustness finding, the
    SHOULD ROBUST-NO-5XX, never the operation's status)."""

    warns = ("ROBUST-NO-5XX",)
    # the default depth: the state machine then sends process and status with references it drew
    pytest_args = ("--examples=10",)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = KB_DOCUMENTS.fullmatch(scope["path"])
        wanted = {"process": "POST", "status": "GET"}
        if match is None or scope["method"] != wanted[match["what"]]:
            await self.app(scope, receive, send)
            return
        raw = await read_body(receive) if match["what"] == "process" else b""
        named = named_documents(scope, match["what"], json_or_none(raw))
        if named and self.unknown(scope, match["kb"], named):
            await send_json(send, 500, ERROR_500)
            return
        await self.app(scope, replay(raw, receive), send)

    def unknown(self, scope: Scope, kb_id: str, named: list[str]) -> bool:
        """Whether the caller has knowledge base `kb_id` and one of `named` is none of its."""
        owner = principal_of(self.app, scope)
        db = self.app.state.context.db  # type: ignore[attr-defined]
        if owner is None or db.get(KNOWLEDGEBASE, kb_id, owner) is None:
            return False  # 401, 404: as the reference
        docs = [db.get(DOC, doc_id, owner) for doc_id in named]
        return any(doc is None or doc["knowledgebaseId"] != kb_id for doc in docs)


class DeletedKbStatusEmpty(Variant):
    """The status query of a knowledge base deleted (under either prefix) answers `200 []`, the
    answer of a filter over documents that finds none, under both prefixes alike: the prefixes
    share one store. A client cannot tell it from a living knowledge base without those documents
    (KB-DELETE-GONE, a SHOULD)."""

    warns = ("KB-DELETE-GONE",)

    def __init__(self, app: ASGIApp) -> None:
        super().__init__(app)
        self.deleted: set[str] = set()

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        path, method = scope["path"], scope["method"]
        status = KB_DOCUMENTS.fullmatch(path)
        deleted = status is not None and status["kb"] in self.deleted
        if method == "GET" and deleted and principal_of(self.app, scope) is not None:
            await send_json(send, 200, [])
            return
        item = KB_ITEM.fullmatch(path)
        if method != "DELETE" or item is None:
            await self.app(scope, receive, send)
            return
        start, content = await answer_of(self.app, scope, await read_body(receive))
        if 200 <= start["status"] < 300:
            self.deleted.add(item["kb"])
        await send_answer(send, start, start["status"], content)
