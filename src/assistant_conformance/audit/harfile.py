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

import gc
import json
import re
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from assistant_conformance.audit.capture import Capture, Credential, credential_of
from assistant_conformance.suite.evidence import har
from assistant_conformance.suite.http import trail

MAX_BYTES = 512 * 1024**2  # a file larger is refused: reading one takes about 5 times its size
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
    capture = Capture(str(path), finding=har.finding_of(log))
    for read in har.entries_of(log):  # each let go as it is read: never the file and its capture
        capture.add(*_judged(read))
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


def judged_entry(raw: dict[str, Any]) -> tuple[trail.Entry, Credential, bool]:
    """A HAR entry as a trail entry (suite/evidence/har.py reads it), whose credential it
    carried, and whether its answer's body was kept whole (a browser may keep none, the proxy
    keeps the first BODY_LIMIT bytes)."""
    return _judged(har.entry_of(raw))


def _judged(read: har.HarEntry) -> tuple[trail.Entry, Credential, bool]:
    """A read entry as the audit judges it: a stream whose file does not say how it stopped
    is one all the same (how it stopped unknown)."""
    entry = read.exchange
    if entry.stream is None and _is_stream(entry.response_headers):
        entry.stream = trail.StreamEnd(0, "", None)  # unknown: not said
    declared = (read.proxy.principal if read.proxy is not None else None) or read.credential
    return entry, credential_of(entry.request_headers, declared), read.whole


def _is_stream(headers: dict[str, str]) -> bool:
    content_type = {k.lower(): v for k, v in headers.items()}.get("content-type", "")
    return "text/event-stream" in content_type.lower()
