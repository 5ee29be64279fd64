"""badge.json: the certification as a shields.io endpoint badge
(https://shields.io/badges/endpoint-badge), so a vendor can show
`assistant-conformance: core + store (60 pass, 2 warn)` from its own CI:
`https://img.shields.io/endpoint?url=<where badge.json is published>`."""

from __future__ import annotations

from typing import Any

BADGE_FILE = "badge.json"
LABEL = "assistant-conformance"
COLORS = {"full": "brightgreen", "none": "red"}  # otherwise: core, maybe with groups


def badge(doc: dict[str, Any]) -> dict[str, Any]:
    """The endpoint badge of a report (conformance.json's dict)."""
    result, level = doc["result"], doc["certification"]["level"]
    if result["outcome"] in ("harness error", "interrupted"):
        return _shield(result["outcome"], "lightgrey")
    shown = ("pass", "warn", "fail", "error")
    counts = ", ".join(f"{n} {v}" for v, n in doc["totals"].items() if v in shown and n)
    color = COLORS.get(level, "green" if "+" in level else "yellowgreen")
    return _shield(f"{level} ({counts})" if counts else level, color)


def _shield(message: str, color: str) -> dict[str, Any]:
    return {"schemaVersion": 1, "label": LABEL, "message": message, "color": color}
