"""conformance.md: the outcome, totals and the failing requirements, for a CI step summary or a PR
comment (GitHub-flavoured Markdown, kept well under a comment's size limit)."""

from __future__ import annotations

from typing import Any

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


def to_markdown(doc: dict[str, Any]) -> str:
    result = doc["result"]
    icon = ICON.get(result["outcome"], "⚠️")
    lines = [
        f"## {icon} API conformance: {result['outcome']} (exit {result['exit_status']})",
        "",
        *_judged(doc),
        "",
        "| " + " | ".join(doc["totals"]) + " |",
        "|" + "---:|" * len(doc["totals"]),
        "| " + " | ".join(str(n) for n in doc["totals"].values()) + " |",
    ]
    if (runs := runs_line(doc)) is not None:
        lines += ["", cell(runs, 600)]
    if (way := transport_line(doc)) is not None:
        lines += ["", cell(way, 600)]
    if said := cleanup_lines(doc):
        lines += ["", *(f"- {cell(line, 600)}" for line in said)]
    if result["problems"]:
        why = "Why the gate failed" if result["exit_status"] else "Known failures (baseline)"
        lines += ["", f"**{why}:**"]
        lines += [f"- {cell(p, 300)}" for p in result["problems"][:MAX_ROWS]]
        if len(result["problems"]) > MAX_ROWS:
            lines.append(f"- … and {len(result['problems']) - MAX_ROWS} more")
    lines += _requirements(doc)
    lines += _capabilities(doc)
    lines += _baseline(doc)
    lines += ["", "Full report: `conformance.html` (evidence, curl, exchanges for every finding)."]
    return "\n".join(lines) + "\n"


def _judged(doc: dict[str, Any]) -> list[str]:
    """What was judged: a run's target and seed, or an audit's files, exchanges and period."""
    when = f"{doc['started']} · {doc['duration_seconds']:.0f} s"
    level = f"certification level **{doc['certification']['level']}**"
    audit = audit_fields(doc)
    if not audit:
        return [f"Target `{doc['target']}` · suite {doc['suite_version']} · seed {doc['seed']} · "
                f"{when} · {level}"]  # fmt: skip
    said = " · ".join(f"{name.lower()}: {cell(value, 600)}" for name, value in audit)
    return [f"Judged from recorded traffic (`{cell(doc['target'], 600)}`) · {said} · suite "
            f"{doc['suite_version']} · {when} · {level}"]  # fmt: skip


def _requirements(doc: dict[str, Any]) -> list[str]:
    """A row per distinct finding of each failing or warned requirement (a requirement without
    one: a row with its reason), with where the same failure was seen again."""
    rows = [r for r in doc["requirements"] if r["verdict"] in SHOWN]
    rows.sort(key=lambda r: (SHOWN.index(r["verdict"]), r["id"]))
    if not rows:
        return ["", "No requirement fails or warns."]
    lines = [
        "",
        "### Failing and warned requirements",
        "",
        "| Requirement | Level | Verdict | Operation | Expected | Actual | Seen again |",
        "|---|---|---|---|---|---|---|",
    ]
    found = [(r, f) for r in rows for f in (r["findings"] or [{}])]
    for r, f in found[:MAX_ROWS]:
        expected = f.get("expected") or r["statement"]
        actual = f.get("actual") or r["reason"]
        again = places_line(f.get("also_at") or [], 300)
        lines.append(
            f"| `{r['id']}` | {r['level']} | {r['verdict']} | {cell(f.get('operation'))} | "
            f"{cell(expected)} | {cell(actual)} | {cell(again, 400)} |"
        )
    if len(found) > MAX_ROWS:
        lines.append(f"\n… and {len(found) - MAX_ROWS} more findings in conformance.json and "
                     "conformance.html.")  # fmt: skip
    shown = [(r["id"], f) for r, f in found[:20] if f]
    ways = [(rid, f) for rid, f in shown if _curl(f) or f.get("har")]
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


def _reproduction(doc: dict[str, Any], rid: str, finding: dict[str, Any]) -> list[str]:
    lines = [f"`{rid}`" + (f" ([exchanges]({finding['har']}))" if finding.get("har") else "")]
    commands = [c for c in (_curl(finding)[:1500], replay_command(doc, finding)) if c]
    return [*lines, "```sh", *commands, "```"]


def _curl(finding: dict[str, Any]) -> str:
    return str((finding.get("evidence") or {}).get("curl") or "")


def _capabilities(doc: dict[str, Any]) -> list[str]:
    groups = doc["capabilities"]
    parts = doc["certification"]["parts"]
    lines = [
        "",
        "**Certification by part:**",
        "",
        "| Part | Result | Capability |",
        "|---|---|---|",
    ]
    lines.append(f"| core | {parts['core']} | required |")
    for name, status in groups.items():
        how = f" ({status['how']})" if status["how"] in ("declared", "detected") else ""
        lines.append(f"| {name} | {parts.get(name, '')} | {status['status']}{how} |")
    if (lacking := absent_line(doc)) is not None:
        lines += ["", cell(lacking, 1200)]
    return lines


def _baseline(doc: dict[str, Any]) -> list[str]:
    entries = doc["baseline"]["entries"]
    if not entries:
        return []
    lines = [
        "",
        f"Baseline `{doc['baseline']['file']}`:",
        "",
        "| Requirement | Status | Reason | Expires |",
        "|---|---|---|---|",
    ]
    for e in entries:
        status = e["status"] + (f": {e['note']}" if e["note"] else "")
        lines.append(
            f"| `{e['requirement']}` | {cell(status)} | {cell(e['reason'])} | "
            f"{e['expires'] or ''} |"
        )
    return lines
