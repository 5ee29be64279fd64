"""Routes of the reference server: file uploads and chat-kit sessions (interface 4.2).

Uploads on `/v1/file` and `/contexts/file` share one table (kind `file`): both create the same
stored-file record, and `DELETE /contexts/file/{id}` removes any file of the caller, whichever
route uploaded it (otherwise a `/v1/file` upload could never be removed). The bytes are stored
under `Settings.files_dir` as the record's server-generated id; the client's file name is kept
only as data, never used as a path.

Extension outside the contract: `GET /api/ai/files/{id}` answers the stored bytes; it is what a
record's `url` points to.

Chat-kit sessions are stored as kind `chatkit_secret` with the secret as id; the bearer middleware
accepts the secret as a token of its creator until `expires_at` (epoch seconds).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse
from starlette.datastructures import UploadFile

from ._input import clean, json_body, respond
from .context import context, new_id, now_iso, principal
from .db import Doc
from .errors import bad_request, not_found

FILE = "file"
CHATKIT_SECRET = "chatkit_secret"
DEFAULT_EXPIRES_AFTER = 600
MAX_EXPIRES_AFTER = 365 * 24 * 3600  # bounds are not in the contract; a year is plenty
PUBLIC_FILE_FIELDS = ("id", "originalName", "size", "mimetype", "url")

router = APIRouter(prefix="/api/ai")


@router.post("/v1/file", status_code=201, tags=["AI/v1"])
async def create_file(request: Request) -> JSONResponse:
    return await _store_upload(request, source="v1")


@router.post("/contexts/file", status_code=201, tags=["AI/Contexts"])
async def create_context_file(request: Request) -> JSONResponse:
    return await _store_upload(request, source="context")


@router.delete("/contexts/file/{file_id}", tags=["AI/Contexts"])
async def delete_context_file(file_id: str, request: Request) -> JSONResponse:
    ctx, owner = context(request), principal(request)
    record = _file_record(request, file_id)
    ctx.db.delete(FILE, file_id, owner)
    _stored_path(request, record).unlink(missing_ok=True)
    return respond({"raw": [], "affected": 1})


@router.get("/files/{file_id}", name="download_file")
async def download_file(file_id: str, request: Request) -> FileResponse:
    record = _file_record(request, file_id)
    path = _stored_path(request, record)
    if not path.is_file():
        not_found("file content", file_id)
    return FileResponse(path, media_type=record["mimetype"], filename=record["originalName"])


@router.post("/v1/chatkit/sessions", status_code=201, tags=["AI/v1"])
async def create_chatkit_session(request: Request) -> JSONResponse:
    body = await json_body(request, required=False)
    fields = clean(body, {"expires_after": _expires_after})
    expires_after = fields.get("expires_after", DEFAULT_EXPIRES_AFTER)
    secret = "ck_" + secrets.token_urlsafe(32)
    # Whole seconds, and the secret stops working exactly at the expiry it announces.
    expires_at = int(time.time()) + expires_after
    owner = principal(request)
    session = {"owner": owner, "expires_at": expires_at, "expires_after": expires_after}
    context(request).db.put(CHATKIT_SECRET, secret, owner, {**session, "createdAt": now_iso()})
    answer = {"client_secret": secret, "expires_at": int(expires_at)}
    return respond({**answer, "expires_after": expires_after}, 201)


def _expires_after(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        bad_request(f"{name} must be a positive integer (seconds)")
    if value > MAX_EXPIRES_AFTER:
        bad_request(f"{name} must be at most {MAX_EXPIRES_AFTER} seconds")
    return value


async def _store_upload(request: Request, source: str) -> JSONResponse:
    # Starlette answers a malformed multipart body with a 400 of its own.
    async with request.form() as form:
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            bad_request("file: a multipart/form-data file part named 'file' is required")
        content = await upload.read()
        file_id = new_id()
        record: Doc = {
            "id": file_id,
            "originalName": _printable(upload.filename or "file"),
            "size": len(content),
            "mimetype": _printable(upload.content_type or "application/octet-stream"),
            "url": str(request.url_for("download_file", file_id=file_id)),
            "source": source,
            "storedName": file_id,  # the only name used on disk
            "createdAt": now_iso(),
        }
    path = _files_dir(request) / record["storedName"]
    await asyncio.to_thread(path.write_bytes, content)
    context(request).db.put(FILE, file_id, principal(request), record)
    return respond({key: record[key] for key in PUBLIC_FILE_FIELDS}, 201)


def _printable(text: str) -> str:
    """The text with anything that cannot go back out as UTF-8 replaced."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _file_record(request: Request, file_id: str) -> Doc:
    record = context(request).db.get(FILE, file_id, principal(request))
    if record is None:
        not_found("file", file_id)
    return record


def _files_dir(request: Request) -> Path:
    return context(request).settings.files_dir


def _stored_path(request: Request, record: Doc) -> Path:
    return _files_dir(request) / record["storedName"]
