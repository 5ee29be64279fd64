"""conformance.html: one self-contained page (no scripts, fonts or links leaving the file),
rendered from templates/conformance.html.j2 with templates/conformance.css inlined.

A summary (outcome, totals, certification level, why the gate failed), then each interface section
with every requirement and its verdict; a failing one shows expected, actual, the exchange and curl.
What the page says is chosen here; how it is marked up is the template's.
"""

from __future__ import annotations

from dataclasses import dataclass

from assistant_conformance.report import document
from assistant_conformance.report.conformance_json import Document, RequirementRecord
from assistant_conformance.report.templating import render_page

UNFOLDED = 5  # findings of a requirement shown before the rest are folded
OPEN = ("fail", "error")  # evidence shown unfolded
WITH_EVIDENCE = ("fail", "error", "warn", "known")
WHAT_LENGTH = 200  # characters of a requirement's first finding in "Needs attention"


def to_html(doc: Document) -> str:
    audit = document.audit_fields(doc)
    by_section: dict[str, list[RequirementRecord]] = {}
    for r in doc.requirements:
        by_section.setdefault(r.section, []).append(r)
    return render_page(
        __package__,
        "conformance.html.j2",
        doc=doc,
        audit=audit,
        ran=None if audit else _ran(doc),
        attention=_attention(doc),
        parts=_parts(doc),
        by_section=by_section,
        unfolded=UNFOLDED,
        open_verdicts=OPEN,
        with_evidence=WITH_EVIDENCE,
        places_line=document.places_line,
        replay_command=document.replay_command,
    )


@dataclass(frozen=True)
class Ran:
    """How a run (not an audit) went: its runs, the operations absent, transport and clean-up."""

    runs: str
    absent: str
    transport: str
    cleanup: list[str]


def _ran(doc: Document) -> Ran:
    absent = document.absent_line(doc)
    return Ran(
        runs=(document.runs_line(doc) or "none").removeprefix("runs: "),
        absent=absent.partition(": ")[2] if absent else "none found",
        transport=(document.transport_line(doc) or "plain").removeprefix("transport: "),
        cleanup=document.cleanup_lines(doc),
    )


def _attention(doc: Document) -> list[tuple[str, str, str]]:
    """(verdict, requirement, what) of each requirement with evidence: its first finding's
    expected and actual, or its reason, cut to WHAT_LENGTH characters."""
    rows = [r for r in doc.requirements if r.verdict in WITH_EVIDENCE]
    rows.sort(key=lambda r: (WITH_EVIDENCE.index(r.verdict), r.id))
    out = []
    for r in rows:
        first = r.findings[0] if r.findings else None
        what = f"expected {first.expected}; actual {first.actual}" if first else r.reason
        if len(what) > WHAT_LENGTH:
            what = what[: WHAT_LENGTH - 1] + "…"
        out.append((r.verdict, r.id, what))
    return out


def _parts(doc: Document) -> list[tuple[str, str, str, str]]:
    """(part, capability, result, notes) of the core and each capability group."""
    cert = doc.certification
    rows = [("core", "required", cert.parts["core"], cert.notes.get("core", ""))]
    for name, status in doc.capabilities.items():
        how = f" ({status.how})" if status.how in ("declared", "detected") else ""
        note = cert.notes.get(name) or "; ".join(status.evidence)
        rows.append((name, status.status + how, cert.parts.get(name, ""), note))
    return rows
