"""badge.json: the certification as a shields.io endpoint badge
(https://shields.io/badges/endpoint-badge), so a vendor can show
`assistant-conformance: core + store (60 pass, 2 warn)` from its own CI:
`https://img.shields.io/endpoint?url=<where badge.json is published>`."""

from __future__ import annotations

from typing import TypedDict

from assistant_conformance.report.conformance_json import Document

BADGE_FILE = "badge.json"
LABEL = "assistant-conformance"
COLORS = {"full": "brightgreen", "none": "red"}  # otherwise: core, maybe with groups


class Shield(TypedDict):
    """shields.io's endpoint badge, as badge.json holds it."""

    schemaVersion: int
    label: str
    message: str
    color: str


def badge(doc: Document) -> Shield:
    """The endpoint badge of a report."""
    outcome, level = doc.result.outcome, doc.certification.level
    if outcome in ("harness error", "interrupted"):
        return _shield(outcome, "lightgrey")
    shown = ("pass", "warn", "fail", "error")
    counts = ", ".join(f"{n} {v}" for v, n in doc.totals.items() if v in shown and n)
    color = COLORS.get(level, "green" if "+" in level else "yellowgreen")
    return _shield(f"{level} ({counts})" if counts else level, color)


def _shield(message: str, color: str) -> Shield:
    return Shield(schemaVersion=1, label=LABEL, message=message, color=color)
