"""What differs between two reads of a resource left alone: a server may answer a fresh timestamp
or checkpoint on every read of an idle resource, which is no effect of any request. A before and
after comparison leaves out (masks) the places where two idle reads already differed."""

from __future__ import annotations

from typing import Any

VARIES = "(varies between idle reads)"


def varying(first: Any, second: Any, path: str = "") -> set[str]:
    """The places (dotted paths) where two reads of an idle resource differ."""
    if isinstance(first, dict) and isinstance(second, dict):
        return {p for k in set(first) | set(second)
                for p in varying(first.get(k), second.get(k), f"{path}.{k}")}  # fmt: skip
    if isinstance(first, list) and isinstance(second, list) and len(first) == len(second):
        return {p for i, (a, b) in enumerate(zip(first, second, strict=True))
                for p in varying(a, b, f"{path}.{i}")}  # fmt: skip
    return set() if first == second else {path}


def masked(value: Any, places: set[str], path: str = "") -> Any:
    """`value` with what lies at `places` replaced by VARIES."""
    if path in places:
        return VARIES
    if isinstance(value, dict):
        return {k: masked(v, places, f"{path}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v, places, f"{path}.{i}") for i, v in enumerate(value)]
    return value
