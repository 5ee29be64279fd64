"""Reading a HAR file as browsers, proxies and HTTP libraries write it, into a Capture
(capture.py).

What is read is HAR 1.2's (and 1.1's, which differs from it only where nothing here reads): each
entry's request (method, URL, headers, body), its answer (status, headers, body), when it started
and how long it took. Whatever else a tool adds is kept out of the way, not refused: Chromium's
and Playwright's `_initiator`, `_resourceType`, `_transferSize`, cookies with `sameSite`,
Firefox's `_securityState`, Charles' and mitmproxy's own fields, a body kept in a file beside the
HAR (`_file`: not read, so not judged). The schema a file is checked against
(report/schemas/har-read.schema.json) refuses only what cannot be judged.

A file is read within bounds: up to MAX_BYTES, UTF-8 (with or without a byte order mark) or
UTF-16 with one, JSON nested no deeper than Python's reader goes; anything else is refused in one
line (NotAHar), never with a traceback.
"""

from __future__ import annotations

import base64
import binascii
import gc
import json
import re
import zlib
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from assistant_conformance.audit.capture import Capture, Credential, credential_of
from assistant_conformance.suite.http import trail

MAX_BYTES = 512 * 1024**2  # a file larger is refused: reading one takes about 5 times its size
INFLATED_LIMIT = 4 * trail.BODY_LIMIT  # a compressed body is read back up to this much
READ_SCHEMA = "schemas/har-read.schema.json"
LONE_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")  # maybe one, maybe a pair


class NotAHar(ValueError):
    """A file the audit cannot read as HAR; the message is one line."""


@cache
def har_schema() -> dict[str, Any]:
    """What the audit needs of a HAR file (report/schemas/har-read.schema.json)."""
    text = resources.files("assistant_conformance.report").joinpath(READ_SCHEMA)
    return json.loads(text.read_text(encoding="utf-8"))


def load_har(path: Path) -> Capture:
    """A HAR file's exchanges; NotAHar (one line) for what cannot be read as HAR."""
    document = _document(path)
    validator = jsonschema.Draft202012Validator(har_schema())
    try:
        wrong = jsonschema.exceptions.best_match(validator.iter_errors(document))
    except RecursionError:
        raise NotAHar(f"{path}: not a HAR file: nested too deep to read") from None
    if wrong is not None:
        where = "/".join(str(p) for p in wrong.absolute_path) or "the top"
        raise NotAHar(f"{path}: not a HAR file: at {where}: {wrong.message[:200]}")
    log = document["log"]
    capture = Capture(str(path), finding=log.get("_finding"))  # an object, as the schema says
    entries = log["entries"]
    entries.reverse()
    while entries:  # each read entry let go as it is read: the file and its capture never both
        capture.add(*entry_of(entries.pop()))
    return capture


def _document(path: Path) -> Any:
    try:
        if path.is_file() and path.stat().st_size > MAX_BYTES:  # said before a byte is read
            raise NotAHar(f"{path}: larger than {MAX_BYTES // 1024**2} MiB: not read")
        data = path.read_bytes() if path.is_file() else _bounded(path)
    except OSError as exc:
        raise NotAHar(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_BYTES:
        raise NotAHar(f"{path}: larger than {MAX_BYTES // 1024**2} MiB: not read")
    try:
        text = _text(data)
    except UnicodeDecodeError as exc:
        raise NotAHar(
            f"{path}: not a HAR file: not UTF-8 or UTF-16 text ({exc.reason} at byte {exc.start})"
        ) from None
    del data
    collecting = gc.isenabled()
    gc.disable()  # a file's million objects hold no cycle: a collection would only walk them
    try:
        document = json.loads(text, parse_constant=_not_json)
        if LONE_SURROGATE.search(text):
            document = _whole_characters(document)
    except json.JSONDecodeError as exc:
        raise NotAHar(
            f"{path}: not a HAR file: not JSON, or cut short ({exc.msg} at line {exc.lineno}, "
            f"column {exc.colno})"
        ) from None
    except RecursionError:
        raise NotAHar(f"{path}: not a HAR file: JSON nested too deep to read") from None
    except ValueError as exc:
        raise NotAHar(f"{path}: not a HAR file: {exc}") from None
    finally:
        if collecting:
            gc.enable()
    return document


def _whole_characters(value: Any) -> Any:
    """The document with each half of a UTF-16 pair written alone (`\\ud800`: JSON allows it,
    no UTF-8 writer does) read as U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if isinstance(value, dict):
        return {_whole_characters(k): _whole_characters(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole_characters(v) for v in value]
    return value


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (RFC 8259)")


def _bounded(path: Path) -> bytes:
    """What a pipe or a device gives, up to one byte past MAX_BYTES."""
    chunks, size = [], 0
    with path.open("rb") as file:
        while size <= MAX_BYTES and (chunk := file.read(1024**2)):
            chunks.append(chunk)
            size += len(chunk)
    return b"".join(chunks)


def _text(data: bytes) -> str:
    """UTF-8 (a byte order mark dropped), or UTF-16 where a byte order mark says so."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return data.decode("utf-16")
    return data.decode("utf-8").removeprefix("\ufeff")


def entry_of(raw: dict[str, Any]) -> tuple[trail.Entry, Credential, bool]:
    """A HAR entry as a trail entry, whose credential it carried, and whether its answer's body
    was kept whole (a browser may keep none, the proxy keeps the first BODY_LIMIT bytes)."""
    request, response = raw["request"], raw["response"]
    entry = trail.Entry(request["method"], request["url"], _headers(request), None)
    entry.status = int(response["status"]) or None
    entry.response_headers = _headers(response)
    cut = raw.get("_truncated")
    parts = {"response"} if cut is True else set(cut) if isinstance(cut, list) else set()
    post = request.get("postData") or {}
    try:
        sent = _decoded(post.get("text"), post.get("encoding")) if post else None
    except ValueError:
        sent = None
    entry.request_body = None if "request" in parts else sent
    entry.started = _moment(raw["startedDateTime"])
    entry.seconds = max(float(raw["time"]), 0.0) / 1000  # the schema bounds it
    entry.fault = str(raw.get("_fault") or "")
    stream = raw.get("_stream")
    if isinstance(stream, dict):  # the suite's and the proxy's word for how it stopped
        events = stream.get("events", 0)  # a count the schema lets be 1e300: none, then
        entry.stream = {"events": int(events) if 0 <= events < 2**31 else 0,
                        "cut": stream.get("cut", ""),
                        "closed_by_server": stream.get("closed_by_server")}  # fmt: skip
    body, whole = _body(response.get("content") or {}, entry.response_headers)
    entry.response_body = bytearray(body)
    if entry.stream is None and _is_stream(entry.response_headers):
        entry.stream = {"events": 0, "cut": "", "closed_by_server": None}  # unknown: not said
    whole = whole and "response" not in parts and not raw.get("_in_flight")
    declared = raw.get("_principal") or raw.get("_credential")
    declared = declared if isinstance(declared, str) else None
    return entry, credential_of(entry.request_headers, declared), whole


def _headers(message: dict[str, Any]) -> dict[str, str]:
    """Its headers (HTTP/2's pseudo-headers, `:authority` and the like, left out)."""
    return {h["name"]: h["value"] for h in message["headers"] if not h["name"].startswith(":")}


def _moment(text: str) -> datetime:
    """When it started (a time no calendar use takes, or none at all: now, so it is judged as
    sent after all before it)."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return datetime.now(UTC)
    if not 1900 <= moment.year <= 9000:
        return datetime.now(UTC)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _is_stream(headers: dict[str, str]) -> bool:
    content_type = {k.lower(): v for k, v in headers.items()}.get("content-type", "")
    return "text/event-stream" in content_type.lower()


def _decoded(text: str | None, encoding: str | None) -> bytes | None:
    """A body's bytes: base64 where `encoding` says so (ValueError: not base64)."""
    if text is None:
        return None
    if encoding == "base64":
        return base64.b64decode(text, validate=False)
    return text.encode("utf-8", "surrogatepass")


def _body(content: dict[str, Any], headers: dict[str, str]) -> tuple[bytes, bool]:
    """The decoded body HAR keeps, and whether it is whole (its size says how long it was)."""
    size = content.get("size")
    size = size if isinstance(size, int | float) else 0
    try:
        body = _decoded(content.get("text"), content.get("encoding"))
    except (binascii.Error, ValueError):
        return b"", False
    if body is None:
        return b"", size <= 0 and "_file" not in content
    body, inflated = inflate(body, headers)
    return body, inflated and len(body) >= size


def inflate(body: bytes, headers: dict[str, str]) -> tuple[bytes, bool]:
    """A body some tools keep as it was sent (gzip or deflate) as it reads; False when it could
    not be read whole within INFLATED_LIMIT. HAR's own bodies are decoded: left as they are."""
    encoding = {k.lower(): v for k, v in headers.items()}.get("content-encoding", "").lower()
    if "gzip" in encoding and body[:2] == b"\x1f\x8b":
        wbits = 16 + zlib.MAX_WBITS
    elif "deflate" in encoding and body[:1] == b"\x78":
        wbits = zlib.MAX_WBITS
    else:
        return body, True
    reader = zlib.decompressobj(wbits)
    try:
        out = reader.decompress(body, INFLATED_LIMIT)
    except zlib.error:
        return body, False
    return out, reader.eof and not reader.unconsumed_tail
