"""conformance.md: the outcome, totals and the failing requirements, for a CI step summary or a PR
comment (GitHub-flavoured Markdown, kept well under a comment's size limit)."""

from __future__ import annotations

from assistant_conformance.report.conformance_json import (
    Document,
    FindingRecord,
    RequirementRecord,
)
from assistant_conformance.report.document import (
    absent_line,
    audit_fields,
    cleanup_lines,
    places_line,
    replay_command,
    runs_line,
    transport_line,
)

MAX_ROWS = 60
CELL = 160
ICON = {"conformant": "✅", "conformant except known failures": "✅", "not conformant": "❌"}
SHOWN = ("fail", "error", "warn", "known")  # verdicts listed requirement by requirement


def cell(text: object, limit: int = CELL) -> str:
    value = " ".join(str(text or "").split())
    if len(value) > limit:
        value = value[: limit - 1] + "…"
    return value.replace("|", "\\|").replace("<", "&lt;") or " "


def to_markdown(doc: Document) -> str:
    result = doc.result
    icon = ICON.get(result.outcome, "⚠️")
    lines = [
        f"## {icon} API conformance: {result.outcome} (exit {result.exit_status})",
        "",
        *_judged(doc),
        "",
        "| " + " | ".join(doc.totals) + " |",
        "|" + "---:|" * len(doc.totals),
        "| " + " | ".join(str(n) for n in doc.totals.values()) + " |",
    ]
    if (runs := runs_line(doc)) is not None:
        lines += ["", cell(runs, 600)]
    if (way := transport_line(doc)) is not None:
        lines += ["", cell(way, 600)]
    if said := cleanup_lines(doc):
        lines += ["", *(f"- {cell(line, 600)}" for line in said)]
    if result.problems:
        why = "Why the gate failed" if result.exit_status else "Known failures (baseline)"
        lines += ["", f"**{why}:**"]
        lines += [f"- {cell(p, 300)}" for p in result.problems[:MAX_ROWS]]
        if len(result.problems) > MAX_ROWS:
            lines.append(f"- … and {len(result.problems) - MAX_ROWS} more")
    lines += _requirements(doc)
    lines += _capabilities(doc)
    lines += _baseline(doc)
    lines += ["", "Full report: `conformance.html` (evidence, curl, exchanges for every finding)."]
    return "\n".join(lines) + "\n"


def _judged(doc: Document) -> list[str]:
    """What was judged: a run's target and seed, or an audit's files, exchanges and period."""
    when = f"{doc.started} · {doc.duration_seconds:.0f} s"
    level = f"certification level **{doc.certification.level}**"
    audit = audit_fields(doc)
    if not audit:
        suite = f"suite {doc.suite_version} · seed {doc.seed}"
        return [f"Target `{doc.target}` · {suite} · {when} · {level}"]
    said = " · ".join(f"{name.lower()}: {cell(value, 600)}" for name, value in audit)
    traffic = f"Judged from recorded traffic (`{cell(doc.target, 600)}`)"
    return [f"{traffic} · {said} · suite {doc.suite_version} · {when} · {level}"]


def _requirements(doc: Document) -> list[str]:
    """A row per distinct finding of each failing or warned requirement (a requirement without
    one: a row with its reason), with where the same failure was seen again."""
    rows = [r for r in doc.requirements if r.verdict in SHOWN]
    rows.sort(key=lambda r: (SHOWN.index(r.verdict), r.id))
    if not rows:
        return ["", "No requirement fails or warns."]
    lines = [
        "",
        "### Failing and warned requirements",
        "",
        "| Requirement | Level | Verdict | Operation | Expected | Actual | Seen again |",
        "|---|---|---|---|---|---|---|",
    ]
    found: list[tuple[RequirementRecord, FindingRecord | None]] = []
    for r in rows:  # a requirement without a finding: a row with its reason
        found += [(r, f) for f in r.findings] or [(r, None)]
    for r, f in found[:MAX_ROWS]:
        expected = (f.expected if f else "") or r.statement
        actual = (f.actual if f else "") or r.reason
        again = places_line(f.also_at if f else [], 300)
        lines.append(
            f"| `{r.id}` | {r.level} | {r.verdict} | {cell(f.operation if f else '')} | "
            f"{cell(expected)} | {cell(actual)} | {cell(again, 400)} |"
        )
    if len(found) > MAX_ROWS:
        more = len(found) - MAX_ROWS
        lines.append(f"\n… and {more} more findings in conformance.json and conformance.html.")
    shown = [(r.id, f) for r, f in found[:20] if f is not None]
    ways = [(rid, f) for rid, f in shown if _curl(f) or f.har]
    if ways:
        lines += [
            "",
            "<details><summary>Reproduce (curl, or replay the exchanges; export "
            "ASSISTANT_API_TOKEN first)</summary>",
            "",
        ]
        for rid, finding in ways:
            lines += _reproduction(doc, rid, finding)
        lines += ["</details>"]
    return lines


def _reproduction(doc: Document, rid: str, finding: FindingRecord) -> list[str]:
    lines = [f"`{rid}`" + (f" ([exchanges]({finding.har}))" if finding.har else "")]
    commands = [c for c in (_curl(finding)[:1500], replay_command(doc, finding)) if c]
    return [*lines, "```sh", *commands, "```"]


def _curl(finding: FindingRecord) -> str:
    return finding.evidence.curl if finding.evidence else ""


def _capabilities(doc: Document) -> list[str]:
    groups = doc.capabilities
    parts = doc.certification.parts
    lines = [
        "",
        "**Certification by part:**",
        "",
        "| Part | Result | Capability |",
        "|---|---|---|",
    ]
    lines.append(f"| core | {parts['core']} | required |")
    for name, status in groups.items():
        how = f" ({status.how})" if status.how in ("declared", "detected") else ""
        lines.append(f"| {name} | {parts.get(name, '')} | {status.status}{how} |")
    if (lacking := absent_line(doc)) is not None:
        lines += ["", cell(lacking, 1200)]
    return lines


def _baseline(doc: Document) -> list[str]:
    entries = doc.baseline.entries
    if not entries:
        return []
    lines = [
        "",
        f"Baseline `{doc.baseline.file}`:",
        "",
        "| Requirement | Status | Reason | Expires |",
        "|---|---|---|---|",
    ]
    for e in entries:
        status = e.status + (f": {e.note}" if e.note else "")
        lines.append(
            f"| `{e.requirement}` | {cell(status)} | {cell(e.reason)} | {e.expires or ''} |"
        )
    return lines
