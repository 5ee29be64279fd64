"""Routes of the reference server: knowledge bases and their documents (interface 4.1).

One store behind both prefixes, `/api/ai/v1/kb` and `/api/ai/knowledges`: the same handlers are
mounted twice, so a knowledge base created under one prefix is used under the other.

Extensions outside the contract: `GET <P>/{id}` answers the knowledge base (the suite reads it
back where a target has it), and `GET <P>/{id}/documents` its documents as `{items, total}` (with
`chunkNum` and `tokenNum`).

Processing (`POST <P>/{id}/process`) runs in the background, see `_knowledge_pipeline`.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from . import _knowledge_pipeline
from ._input import (
    Cleaner,
    any_object,
    clean,
    json_body,
    number,
    obj,
    one_of,
    respond,
    string,
    uuid_string,
)
from ._knowledge_pipeline import DOC, JOB, KNOWLEDGEBASE
from .context import Context, context, new_id, now_iso, principal
from .db import Doc
from .errors import ApiError, bad_request, not_found

PARSER_CONFIG = obj({"chunkSize": number, "chunkOverlap": number, "delimiter": string})

KNOWLEDGEBASE_FIELDS: dict[str, Cleaner] = {
    "workspaceId": uuid_string,
    "name": string,
    "description": string,
    "permission": one_of("private", "organization", "public"),
    "type": one_of("standard", "external"),
    "recall": obj({"topK": number, "score": number}),
    "parserConfig": PARSER_CONFIG,
    "integrationId": uuid_string,
    "extKnowledgebaseId": string,
    "copilotModel": obj({"copilotId": string, "modelType": string, "model": string}),
}
KNOWLEDGEBASE_DEFAULTS = {"permission": "private", "recall": {"topK": 10}}

DOCUMENT_FIELDS: dict[str, Cleaner] = {
    "name": string,
    "sourceType": string,
    "category": one_of("text", "image", "audio", "video", "sheet", "other"),
    "type": string,
    "filePath": string,
    "fileUrl": string,
    "size": number,
    "mimeType": string,
    "parserConfig": PARSER_CONFIG,
    "metadata": any_object,
    "content": string,
}

router = APIRouter(prefix="/api/ai")
kb_routes = APIRouter()


@kb_routes.post("", status_code=201)
async def create_knowledgebase(request: Request) -> JSONResponse:
    fields = clean(await json_body(request, required=True), KNOWLEDGEBASE_FIELDS)
    now = now_iso()
    kb = {"id": new_id(), **KNOWLEDGEBASE_DEFAULTS, **fields, "createdAt": now, "updatedAt": now}
    kb["documentNum"] = 0
    context(request).db.put(KNOWLEDGEBASE, kb["id"], principal(request), kb)
    return respond(kb, 201)


@kb_routes.get("/{kb_id}")
async def get_knowledgebase(kb_id: str, request: Request) -> JSONResponse:
    return respond(_knowledgebase(request, kb_id))


@kb_routes.get("/{kb_id}/documents")
async def list_documents(kb_id: str, request: Request) -> JSONResponse:
    _knowledgebase(request, kb_id)
    documents = context(request).db.list(DOC, principal(request), parent=kb_id)
    return respond({"items": documents, "total": len(documents)})


@kb_routes.put("/{kb_id}")
async def replace_knowledgebase(kb_id: str, request: Request) -> JSONResponse:
    fields = clean(await json_body(request, required=True), KNOWLEDGEBASE_FIELDS)
    old = _knowledgebase(request, kb_id)
    kb = {"id": kb_id, **KNOWLEDGEBASE_DEFAULTS, **fields, "createdAt": old["createdAt"]}
    kb.update(updatedAt=now_iso(), documentNum=old["documentNum"])
    context(request).db.put(KNOWLEDGEBASE, kb_id, principal(request), kb)
    return respond(kb)


@kb_routes.delete("/{kb_id}")
async def delete_knowledgebase(kb_id: str, request: Request) -> JSONResponse:
    _knowledgebase(request, kb_id)
    ctx = context(request)
    documents = ctx.db.list(DOC, principal(request), parent=kb_id)
    _knowledge_pipeline.cancel(ctx, [doc["id"] for doc in documents])
    ctx.db.delete_children(JOB, kb_id)
    ctx.db.delete_children(DOC, kb_id)
    ctx.db.delete(KNOWLEDGEBASE, kb_id, principal(request))
    return respond({"raw": [], "affected": 1})


@kb_routes.post("/{kb_id}/bulk", status_code=201)
async def create_documents(kb_id: str, request: Request) -> JSONResponse:
    body = await json_body(request, required=True)
    kb = _knowledgebase(request, kb_id)
    if not isinstance(body, list):
        bad_request("body must be a JSON array of KnowledgeDocument objects")
    # Check every element before storing any: a bad element stores nothing.
    cleaned = [clean(item, DOCUMENT_FIELDS, f"body[{i}]") for i, item in enumerate(body)]
    ctx, owner, now = context(request), principal(request), now_iso()
    documents = [_new_document(kb_id, fields, now) for fields in cleaned]
    for doc in documents:
        ctx.db.put(DOC, doc["id"], owner, doc, parent=kb_id)
    kb.update(documentNum=kb["documentNum"] + len(documents), updatedAt=now)
    ctx.db.put(KNOWLEDGEBASE, kb_id, owner, kb)
    return respond(documents, 201)


@kb_routes.post("/{kb_id}/process", status_code=201)
async def process_documents(kb_id: str, request: Request) -> JSONResponse:
    body = await json_body(request, required=True)
    _knowledgebase(request, kb_id)
    if not isinstance(body, list) or not all(isinstance(item, str) for item in body):
        bad_request("body must be a JSON array of document id strings")
    ctx, owner = context(request), principal(request)
    documents = [_document_of(ctx, owner, kb_id, doc_id) for doc_id in dict.fromkeys(body)]
    return respond(
        [_knowledge_pipeline.start_processing(ctx, owner, doc) for doc in documents], 201
    )


@kb_routes.get("/{kb_id}/status")
async def document_status(kb_id: str, request: Request, ids: str = Query()) -> JSONResponse:
    _knowledgebase(request, kb_id)
    ctx, owner = context(request), principal(request)
    wanted = dict.fromkeys(part.strip() for part in ids.split(",") if part.strip())
    if not wanted:  # `ids=` names no document: as good as missing (the parameter is required)
        bad_request("ids: at least one document id, comma-separated")
    found = (ctx.db.get(DOC, doc_id, owner) for doc_id in wanted)
    return respond(
        [
            {key: doc[key] for key in ("id", "status", "progress", "processMsg")}
            for doc in found
            if doc is not None and doc["knowledgebaseId"] == kb_id
        ]
    )


router.include_router(kb_routes, prefix="/v1/kb", tags=["AI/v1"])
router.include_router(kb_routes, prefix="/knowledges", tags=["AI/Knowledges"])


async def on_startup(ctx: Context) -> None:
    await _knowledge_pipeline.resume_all(ctx)


async def on_shutdown(ctx: Context) -> None:
    await _knowledge_pipeline.stop_all(ctx)


def _knowledgebase(request: Request, kb_id: str) -> Doc:
    kb = context(request).db.get(KNOWLEDGEBASE, kb_id, principal(request))
    if kb is None:
        not_found("knowledge base", kb_id)
    return kb


def _document_of(ctx: Context, owner: str, kb_id: str, doc_id: str) -> Doc:
    doc = ctx.db.get(DOC, doc_id, owner)
    if doc is None or doc["knowledgebaseId"] != kb_id:
        # 404 like any unknown id: the body is well-formed, the document just is not there.
        raise ApiError(404, f"{doc_id!r} is not a document of knowledge base {kb_id!r}")
    return doc


def _new_document(kb_id: str, fields: dict[str, Any], now: str) -> Doc:
    server_fields = {"status": "waiting", "progress": 0, "processMsg": None}
    server_fields.update(chunkNum=None, tokenNum=None, createdAt=now, updatedAt=now)
    return {"id": new_id(), "knowledgebaseId": kb_id, **fields, **server_fields}
