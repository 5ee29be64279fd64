"""JSON as RFC 8259 defines it, which every client can parse.

Python's json module also reads `NaN`, `Infinity` and `-Infinity`, which are not JSON (RFC 8259
§6): `JSON.parse` in browsers and Node throws on them. So is a body declared JSON that is not
UTF-8 (§8.1). The doors read every JSON body here and record a body that is JSON only by
Python's reading (suite/http/answer_bounds.py); suite/judging/answer_charges.py judges it.
"""

from __future__ import annotations

import json
from typing import Any


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (RFC 8259 §6)")


def loads(data: str | bytes) -> Any:
    """Parse strictly: ValueError (UnicodeDecodeError included) for anything that is not JSON."""
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    return json.loads(text, parse_constant=_refuse)


def read(data: str | bytes) -> tuple[Any, str | None]:
    """The value of a strict reading (None when there is none) and why `data` is not strict JSON
    (None when it is, or when it is not JSON at all: the content-type and shape checks say so)."""
    try:
        return loads(data), None
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 ({exc.reason} at byte {exc.start})"
    except RecursionError:
        return None, None
    except ValueError as exc:
        return None, (str(exc) if "RFC 8259" in str(exc) else None)


def lenient(data: bytes) -> Any:
    """What Python (and so schemathesis) reads of a body that is not strict JSON (None if none)."""
    for text in (data, data.decode("latin-1")):  # bytes: UTF-8, -16 or -32, as json detects
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            continue
    return None


def problem(data: str | bytes) -> str | None:
    """Why `data` is not strict JSON, or None (see `read`)."""
    return read(data)[1]


def is_json(content_type: str) -> bool:
    return "json" in content_type.lower()
