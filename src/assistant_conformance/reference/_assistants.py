"""Routes of assistants: the fixed, read-only catalogue of _agents.py, the same for everyone."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Request
from pydantic import Field

from ._agents import ASSISTANTS, find_assistant
from ._http import Options, is_subset, parse_body, sort_docs
from ._input import MAX_COUNT
from .db import Doc
from .errors import not_found

router = APIRouter()


class AssistantSearch(Options):
    metadata: dict[str, Any] | None = None
    graph_id: str | None = None
    name: str | None = None
    limit: int = Field(10, ge=0, le=MAX_COUNT)
    offset: int = Field(0, ge=0, le=MAX_COUNT)
    sort_by: Literal["assistant_id", "graph_id", "name", "created_at", "updated_at"] | None = None
    sort_order: Literal["asc", "desc"] | None = None


def _matching(options: AssistantSearch) -> list[Doc]:
    found = [
        a
        for a in ASSISTANTS
        if is_subset(options.metadata or {}, a["metadata"])
        and options.graph_id in (None, a["graph_id"])
        and (options.name is None or options.name.lower() in a["name"].lower())
    ]
    return sort_docs(found, options.sort_by, options.sort_order)


@router.post("/assistants/search", status_code=201)
async def search_assistants(request: Request) -> list[Doc]:
    options = await parse_body(request, AssistantSearch)
    return _matching(options)[options.offset : options.offset + options.limit]


@router.post("/assistants/count", status_code=201)
async def count_assistants(request: Request) -> int:
    return len(_matching(await parse_body(request, AssistantSearch)))


@router.get("/assistants/{assistant_id}")
async def read_assistant(assistant_id: str) -> Doc:
    assistant = find_assistant(assistant_id)
    if assistant is None:
        not_found("assistant", assistant_id)
    return assistant
