"""What every route module shares: the settings, the database and the caller's principal."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from fastapi import Request

from .db import Database


@dataclass
class Settings:
    tokens: dict[str, str]  # token -> principal name
    db_path: Path
    files_dir: Path
    token_delay_ms: int = 20
    max_body_bytes: int = 5 * 1024 * 1024
    body_timeout_s: float = 30.0  # a request body not complete by then: 408
    # The run workers: runs executing at once (None: each run at once), and what starting one
    # costs a worker (a queue-backed server's model load) before its first event.
    run_slots: int | None = None
    run_start_s: float = 0.0


@dataclass
class Context:
    settings: Settings
    db: Database
    extras: dict[str, object] = field(default_factory=dict)  # per-module runtime state


def context(request: Request) -> Context:
    ctx: Context = request.app.state.context
    return ctx


def principal(request: Request) -> str:
    """The authenticated principal (set by the BearerAuth middleware)."""
    return str(request.state.principal)


def new_id() -> str:
    return str(uuid.uuid4())


def now_iso() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def now_ts() -> float:
    return time.time()
