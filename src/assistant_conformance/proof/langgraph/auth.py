"""Bearer authentication of the LangGraph target: each token in CONFORMANCE_TOKENS is a user.

Threads (and their runs) are each user's own, as LangGraph's resource authorization documents it;
assistants and the store are shared.
"""

from __future__ import annotations

import os
from typing import Any

from langgraph_sdk import Auth

auth = Auth()
TOKENS = [t for t in os.environ.get("CONFORMANCE_TOKENS", "").split(",") if t]
USERS = {token: f"user-{i}" for i, token in enumerate(TOKENS)}


@auth.authenticate
async def authenticate(authorization: str | None) -> str:
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or token not in USERS:
        raise Auth.exceptions.HTTPException(status_code=401, detail="Unauthorized")
    return USERS[token]


@auth.on.threads
async def owner_only(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str]:
    metadata = value.setdefault("metadata", {}) if isinstance(value, dict) else None
    if isinstance(metadata, dict):
        metadata["owner"] = ctx.user.identity
    return {"owner": ctx.user.identity}
