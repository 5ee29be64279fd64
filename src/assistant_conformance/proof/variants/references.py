"""Variants whose knowledge bases check what the document leaves to the server, as the platform
the document was written from does (deployed-system notes, "Seen running"):

- `KbReferencesChecked`: fields that name another resource are foreign keys, and names are unique
  per principal across both prefixes (one store). A body naming a workspace, integration or
  copilot the server does not have is refused (400, a JSON message), and so is a name a living
  knowledge base of the same principal carries ("Name Exist"). It has one workspace, which the
  suite is given (--kb-workspace-id): a reference the user gives is sent, the others left out.
- `KbNameRequired`: a knowledge base without `name` is refused (400). The document does not say
  which fields are required, so a server may require one.

A client that sends only what it owns (references it was given, names of its own) is served by
both as by the reference: the suite must pass them with no failure, warning or error.
"""

from __future__ import annotations

from typing import Any

from starlette.types import Receive, Scope, Send

from assistant_conformance.proof.mutants._base import json_or_none, read_body, replay, send_json
from assistant_conformance.proof.variants._base import KB_WRITE, Variant
from assistant_conformance.reference._knowledge_pipeline import KNOWLEDGEBASE
from assistant_conformance.reference.auth import principal_for

# The one workspace this server has (the suite is told, as a user would tell it).
WORKSPACE = "5f0c2b1e-7a44-4d36-9c0e-2b8f6a1d9e33"
CHECKED_REFERENCES = {
    "workspaceId": ("workspace", {WORKSPACE}),
    "integrationId": ("integration", set()),
    "copilotModel.copilotId": ("copilot", set()),
}


def _value_at(body: dict[str, Any], path: str) -> Any:
    parent, _, leaf = path.rpartition(".")
    holder = body.get(parent) if parent else body
    return holder.get(leaf) if isinstance(holder, dict) else None


def bad_request_body(message: str) -> dict[str, Any]:
    return {"statusCode": 400, "message": message, "error": "Bad Request"}


class KbWriteVariant(Variant):
    """Base: judges the JSON object body of an authorized knowledge-base create or update
    (`refusal`); a refused one is answered 400, anything else goes to the reference as sent."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = KB_WRITE.fullmatch(scope["path"])
        write = "PUT" if match and match["id"] else "POST"  # update an item, create in the list
        if match is None or scope["method"] != write:
            await self.app(scope, receive, send)
            return
        raw = await read_body(receive)
        body, owner = json_or_none(raw), self.owner(scope)
        why = self.refusal(body, owner, match["id"]) if isinstance(body, dict) and owner else None
        if why is not None:
            await send_json(send, 400, bad_request_body(why))
            return
        await self.app(scope, replay(raw, receive), send)

    def owner(self, scope: Scope) -> str | None:
        """The principal the request is authorized as (None: the reference refuses it)."""
        header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        context = self.app.state.context  # type: ignore[attr-defined]
        return principal_for(header or None, context.settings.tokens, context.db)

    def refusal(self, body: dict[str, Any], owner: str, kb_id: str | None) -> str | None:
        return None


class KbReferencesChecked(KbWriteVariant):
    """Knowledge bases name only the workspace, integration and copilot the server has, and
    names are unique per principal across both prefixes: 400 otherwise, as the platform."""

    pytest_args = (f"--kb-workspace-id={WORKSPACE}",)

    def refusal(self, body: dict[str, Any], owner: str, kb_id: str | None) -> str | None:
        for path, (kind, known) in CHECKED_REFERENCES.items():
            value = _value_at(body, path)
            if isinstance(value, str) and value not in known:
                return f"Bad Request: {path} names no {kind} ({value})"
        name = body.get("name")
        if not isinstance(name, str):
            return None
        living = self.app.state.context.db.list(KNOWLEDGEBASE, owner)  # type: ignore[attr-defined]
        if any(kb.get("name") == name and kb.get("id") != kb_id for kb in living):
            return "Name Exist"
        return None


class KbNameRequired(KbWriteVariant):
    """A knowledge base without `name` is refused (400): which fields are required is not
    shown, so a server may require this one."""

    def refusal(self, body: dict[str, Any], owner: str, kb_id: str | None) -> str | None:
        return None if "name" in body else "name is required"
