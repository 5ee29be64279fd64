"""Routes of the reference server: conversations, messages and feedbacks (interface 4.5).

Extension outside the contract: `POST .../messages/{message_id}/feedbacks` with
`{rating: like|dislike, content?}` creates a feedback (201), so that there is something to list
and delete.

Searches take their filters flat (`{"title": ..., "limit": 10}`) or TypeORM-style as the deployed
servers do (`{"where": {...}, "take": 10, "skip": 0}`); `title` (conversations) and `query`
(messages) match substrings, other filters match exactly. Deleting a conversation deletes its
messages and their feedbacks.
"""

from __future__ import annotations

from contextlib import closing
from typing import Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from ._input import (
    Cleaner,
    any_json,
    any_object,
    clean,
    count,
    json_body,
    one_of,
    query_number,
    respond,
    string,
)
from .context import context, new_id, now_iso, principal
from .db import Database, Doc, narrows
from .errors import bad_request, not_found

CONVERSATION = "conversation"
MESSAGE = "conversation_message"
FEEDBACK = "message_feedback"

CONVERSATION_FIELDS: dict[str, Cleaner] = {
    "threadId": string,
    "title": string,
    "status": string,
    "from": string,
    "options": any_object,
    "xpertId": string,
}
CONVERSATION_DEFAULTS = {
    "threadId": None,
    "title": None,
    "status": "idle",
    "from": "api",
    "options": None,
    "xpertId": None,
}
MESSAGE_FIELDS: dict[str, Cleaner] = {"role": string, "content": any_json, "status": string}
MESSAGE_DEFAULTS = {"role": "user", "content": "", "status": "success"}
FEEDBACK_FIELDS: dict[str, Cleaner] = {"rating": one_of("like", "dislike"), "content": string}
PAGING_FIELDS: dict[str, Cleaner] = {name: count for name in ("limit", "offset", "take", "skip")}

router = APIRouter(prefix="/api/ai", tags=["AI/Conversations"])


@router.post("/conversations", status_code=201)
async def post_conversation(request: Request) -> JSONResponse:
    fields = clean(await json_body(request, required=False), CONVERSATION_FIELDS)
    now = now_iso()
    conversation = {"id": new_id(), **CONVERSATION_DEFAULTS, **fields}
    conversation.update(createdAt=now, updatedAt=now)
    context(request).db.put(CONVERSATION, conversation["id"], principal(request), conversation)
    return respond(conversation, 201)


@router.post("/conversations/search")
async def search_conversations(request: Request) -> JSONResponse:
    query = _search_query(await json_body(request, required=False), CONVERSATION_FIELDS)
    db, owner = context(request).db, principal(request)
    return respond(await run_in_threadpool(_search_conversations, db, owner, query))


def _search_conversations(db: Database, owner: str, query: dict[str, Any]) -> dict[str, Any]:
    """Narrowed by the index (all but the title, matched as a substring), read on a worker
    thread (off the event loop); in creation order, every match counted for `total`."""
    equals = {
        k: v for k, v in query.items() if k not in PAGING_FIELDS and k != "title" and narrows(v)
    }
    with closing(db.scan(CONVERSATION, owner, equals)) as found:
        conversations = list(found)[::-1]
    return _page(_matching(conversations, query, substring="title"), query)


@router.get("/conversations/{conversation_id}")
async def get_conversation(conversation_id: str, request: Request) -> JSONResponse:
    return respond(_conversation(request, conversation_id))


@router.patch("/conversations/{conversation_id}")
async def update_conversation(conversation_id: str, request: Request) -> JSONResponse:
    fields = clean(await json_body(request, required=False), CONVERSATION_FIELDS)
    conversation = {**_conversation(request, conversation_id), **fields, "updatedAt": now_iso()}
    context(request).db.put(CONVERSATION, conversation_id, principal(request), conversation)
    return respond(conversation)


@router.delete("/conversations/{conversation_id}", status_code=202)
async def delete_conversation(conversation_id: str, request: Request) -> Response:
    _conversation(request, conversation_id)
    ctx = context(request)
    for message in ctx.db.list(MESSAGE, principal(request), parent=conversation_id):
        ctx.db.delete_children(FEEDBACK, message["id"])
    ctx.db.delete_children(MESSAGE, conversation_id)
    ctx.db.delete(CONVERSATION, conversation_id, principal(request))
    return Response(status_code=202)  # the deployed servers answer 202 with an empty body


@router.get("/conversations/{conversation_id}/messages")
async def list_messages(
    conversation_id: str, request: Request, limit: str = Query(), offset: str = Query()
) -> JSONResponse:
    _conversation(request, conversation_id)
    query = {"limit": query_number(limit, "limit"), "offset": query_number(offset, "offset")}
    messages = context(request).db.list(MESSAGE, principal(request), parent=conversation_id)
    return respond(_page(messages, query))


@router.post("/conversations/{conversation_id}/messages", status_code=201)
async def create_message(conversation_id: str, request: Request) -> JSONResponse:
    fields = clean(await json_body(request, required=False), MESSAGE_FIELDS)
    _conversation(request, conversation_id)
    now = now_iso()
    message = {"id": new_id(), "conversationId": conversation_id, **MESSAGE_DEFAULTS, **fields}
    message.update(createdAt=now, updatedAt=now)
    ctx = context(request)
    ctx.db.put(MESSAGE, message["id"], principal(request), message, parent=conversation_id)
    return respond(message, 201)


@router.post("/conversations/{conversation_id}/messages/search")
async def search_messages(conversation_id: str, request: Request) -> JSONResponse:
    filters: dict[str, Cleaner] = {"query": string, "role": string, "status": string}
    query = _search_query(await json_body(request, required=False), filters)
    _conversation(request, conversation_id)
    messages = context(request).db.list(MESSAGE, principal(request), parent=conversation_id)
    if "query" in query:
        query["content"] = query.pop("query")
    return respond(_page(_matching(messages, query, substring="content"), query))


@router.get("/conversations/{conversation_id}/messages/{message_id}")
async def get_message(conversation_id: str, message_id: str, request: Request) -> JSONResponse:
    return respond(_message(request, conversation_id, message_id))


@router.get("/conversations/{conversation_id}/messages/{message_id}/feedbacks")
async def list_feedbacks(conversation_id: str, message_id: str, request: Request) -> JSONResponse:
    _message(request, conversation_id, message_id)
    feedbacks = context(request).db.list(FEEDBACK, principal(request), parent=message_id)
    return respond({"items": feedbacks, "total": len(feedbacks)})


@router.post("/conversations/{conversation_id}/messages/{message_id}/feedbacks", status_code=201)
async def create_feedback(conversation_id: str, message_id: str, request: Request) -> JSONResponse:
    """Extension outside the contract: create a feedback on a message."""
    fields = clean(await json_body(request, required=True), FEEDBACK_FIELDS)
    if "rating" not in fields:
        bad_request("rating is required (like or dislike)")
    _message(request, conversation_id, message_id)
    feedback: Doc = {"id": new_id(), "conversationId": conversation_id, "messageId": message_id}
    feedback.update(rating=fields["rating"], content=fields.get("content"), createdAt=now_iso())
    ctx = context(request)
    ctx.db.put(FEEDBACK, feedback["id"], principal(request), feedback, parent=message_id)
    return respond(feedback, 201)


@router.delete("/conversations/{conversation_id}/messages/{message_id}/feedbacks/{feedback_id}")
async def delete_feedback(
    conversation_id: str, message_id: str, feedback_id: str, request: Request
) -> JSONResponse:
    _message(request, conversation_id, message_id)
    ctx, owner = context(request), principal(request)
    feedback = ctx.db.get(FEEDBACK, feedback_id, owner)
    if feedback is None or feedback["messageId"] != message_id:
        not_found("feedback", feedback_id)
    ctx.db.delete(FEEDBACK, feedback_id, owner)
    return respond({"raw": [], "affected": 1})


def _search_query(body: Any, filters: dict[str, Cleaner]) -> dict[str, Any]:
    """Filters and paging from a search body: flat, or inside `where` (TypeORM style)."""
    query = clean(body, {**filters, **PAGING_FIELDS})
    if "where" in body:
        query = {**clean(body["where"], filters, "where"), **query}
    query.setdefault("limit", query.pop("take", None))
    query.setdefault("offset", query.pop("skip", 0))
    return query


def _matching(records: list[Doc], query: dict[str, Any], substring: str) -> list[Doc]:
    filters = {key: value for key, value in query.items() if key not in PAGING_FIELDS}

    def matches(record: Doc) -> bool:
        for key, wanted in filters.items():
            value = record.get(key)
            if key == substring and isinstance(wanted, str):
                if not isinstance(value, str) or wanted.lower() not in value.lower():
                    return False
            elif value != wanted:
                return False
        return True

    return [record for record in records if matches(record)]


def _page(records: list[Doc], query: dict[str, Any]) -> dict[str, Any]:
    offset, limit = query.get("offset") or 0, query.get("limit")
    items = records[offset:] if limit is None else records[offset : offset + limit]
    return {"items": items, "total": len(records)}


def _conversation(request: Request, conversation_id: str) -> Doc:
    conversation = context(request).db.get(CONVERSATION, conversation_id, principal(request))
    if conversation is None:
        not_found("conversation", conversation_id)
    return conversation


def _message(request: Request, conversation_id: str, message_id: str) -> Doc:
    _conversation(request, conversation_id)
    message = context(request).db.get(MESSAGE, message_id, principal(request))
    if message is None or message["conversationId"] != conversation_id:
        not_found("message", message_id)
    return message
