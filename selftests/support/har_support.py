"""HAR files made by hand for the audit's self-tests: an exchange as a browser saves one (HAR 1.2,
a bearer token in the clear, no custom field), each started a millisecond after the one before
ended, so that each is judged with all that came before it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

BASE = "http://127.0.0.1:9"
START = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
TOKEN = "har-support-token-5d1e"


def exchange(
    method: str,
    path: str,
    status: int,
    *,
    body: Any = None,
    answer: Any = None,
    token: str | None = TOKEN,
    headers: dict[str, str] | None = None,
    answer_headers: dict[str, str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One HAR entry (its time is set by `har`); JSON bodies given as values, text as str."""
    sent = {**({"Authorization": f"Bearer {token}"} if token is not None else {}),
            **(headers or {})}  # fmt: skip
    text = answer if isinstance(answer, str) or answer is None else json.dumps(answer)
    kind = "text/event-stream" if text and text.startswith(("event:", "id:", "data:")) else (
        "application/json")  # fmt: skip
    got = {"Content-Type": kind, **(answer_headers or {})} if text is not None else {}
    if status == 401:
        got.setdefault("WWW-Authenticate", "Bearer")
    request: dict[str, Any] = {
        "method": method, "url": BASE + path, "httpVersion": "HTTP/1.1", "cookies": [],
        "headers": [{"name": k, "value": v} for k, v in sent.items()], "queryString": [],
        "headersSize": -1, "bodySize": -1,
    }  # fmt: skip
    if body is not None:
        request["postData"] = {"mimeType": "application/json", "text": json.dumps(body)}
    content = {"size": len((text or "").encode()), "mimeType": got.get("Content-Type", "")}
    if text is not None:
        content["text"] = text
    return {
        "request": request,
        "response": {
            "status": status, "statusText": "", "httpVersion": "HTTP/1.1", "cookies": [],
            "headers": [{"name": k, "value": v} for k, v in got.items()], "content": content,
            "redirectURL": "", "headersSize": -1, "bodySize": -1,
        },
        "cache": {},
        "timings": {"send": 0, "wait": 1, "receive": 0},
        **extra,
    }  # fmt: skip


def har(entries: list[dict[str, Any]], version: str = "1.2") -> dict[str, Any]:
    """The entries in a HAR log, each started 2 ms after the one before (each lasts 1 ms)."""
    for number, entry in enumerate(entries):
        moment = START + timedelta(milliseconds=2 * number)
        entry.setdefault("startedDateTime", moment.isoformat(timespec="milliseconds"))
        entry.setdefault("time", 1)
    creator = {"name": "har_support", "version": "1"}
    return {"log": {"version": version, "creator": creator, "pages": [], "entries": entries}}


def written(path: Path, entries: list[dict[str, Any]], version: str = "1.2") -> Path:
    path.write_text(json.dumps(har(entries, version)), encoding="utf-8")
    return path


def thread(number: int) -> str:
    """A thread id of its own for each number."""
    return f"00000000-0000-4000-8000-{number:012d}"
