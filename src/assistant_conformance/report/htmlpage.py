"""conformance.html: one self-contained page (no scripts, fonts or links leaving the file).

A summary (outcome, totals, certification level, why the gate failed), then each interface section
with every requirement and its verdict; a failing one shows expected, actual, the exchange and curl.
"""

from __future__ import annotations

from html import escape
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
from assistant_conformance.report.htmlstyle import STYLE

UNFOLDED = 5  # findings of a requirement shown before the rest are folded
OPEN = ("fail", "error")  # evidence shown unfolded
WITH_EVIDENCE = ("fail", "error", "warn", "known")


def e(value: object) -> str:
    return escape(str(value if value is not None else ""), quote=True)


def to_html(doc: dict[str, Any]) -> str:
    result = doc["result"]
    title = f"API conformance: {result['outcome']} - {doc['target']}"
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(title)}</title><style>{STYLE}</style></head>",
        '<body><div class="wrap">',
        *_summary(doc),
        *_sections(doc),
        f"<footer>assistant-conformance {e(doc['suite_version'])} · report format "
        f"{e(doc['format'])} · the same data is in conformance.json</footer>",
        "</div></body></html>",
    ]
    return "\n".join(parts) + "\n"


def _absent(doc: dict[str, Any]) -> str:
    line = absent_line(doc)
    return line.partition(": ")[2] if line else "none found"


def _badge(verdict: str) -> str:
    return f'<span class="badge v-{e(verdict)}">{e(verdict)}</span>'


def _summary(doc: dict[str, Any]) -> list[str]:
    result = doc["result"]
    outcome = result["outcome"].replace(" ", "-")
    mark = "✘" if outcome == "not-conformant" else "✔" if result["exit_status"] == 0 else "⚠"
    judged_from = ": traffic the suite did not send" if doc.get("audit") else ""
    out = [
        f"<h1>API conformance report{judged_from}</h1>",
        f'<p class="outcome {e(outcome)}">{mark} {e(result["outcome"].capitalize())} '
        f"· exit status {e(result['exit_status'])}</p>",
        '<dl class="meta">',
        *_meta(doc),
        "</dl>",
        '<div class="chips">',
        *(f'<span class="chip v-{e(v)}">{n} {e(v)}</span>' for v, n in doc["totals"].items()),
        "</div>",
    ]
    if result["problems"]:
        heading = "Why the gate failed" if result["exit_status"] else "Known failures (baseline)"
        out += [f"<h3>{heading}</h3>", '<ul class="problems">']
        out += [f"<li>{e(p)}</li>" for p in result["problems"]]
        out += ["</ul>"]
    out += _attention(doc)
    out += _parts(doc)
    out += _baseline(doc)
    nav = " ".join(f'<a href="#sec-{e(s["key"])}">{e(s["title"])}</a>' for s in doc["sections"])
    out += [f"<nav><strong>Sections:</strong> {nav}</nav>"]
    return out


def _meta(doc: dict[str, Any]) -> list[str]:
    """What was judged and how: a run's target, runs, transport and clean-up, or an audit's
    files, exchanges and period (report/document.py: audit_fields)."""
    cert, spec, audit = doc["certification"], doc["spec"], audit_fields(doc)
    out = [f"<dt>Target</dt><dd>{e(doc['target'])}</dd>"]
    out += [f"<dt>{e(name)}</dt><dd>{e(value)}</dd>" for name, value in audit]
    out.append(f"<dt>Certification level</dt><dd><strong>{e(cert['level'])}</strong></dd>")
    if not audit:
        way = transport_line(doc) or "plain"
        out += [
            f"<dt>Runs</dt><dd>{e((runs_line(doc) or 'none').removeprefix('runs: '))}</dd>",
            f"<dt>Operations absent</dt><dd>{e(_absent(doc))}</dd>",
            f"<dt>Transport</dt><dd>{e(way.removeprefix('transport: '))}</dd>",
            f"<dt>Clean-up</dt><dd>{'<br>'.join(e(line) for line in cleanup_lines(doc)) or 'none'}"
            "</dd>",
        ]
    how = "" if audit else (
        f" · seed {e(doc['seed'])} · strict "
        f"{'on' if doc['options']['strict_conformance'] else 'off'}")  # fmt: skip
    return [
        *out,
        f"<dt>Started</dt><dd>{e(doc['started'])} · {doc['duration_seconds']:.1f} s</dd>",
        f"<dt>Suite</dt><dd>{e(doc['suite_version'])} (SHA-256 "
        f"{e(doc.get('suite_sha256', '')[:16])}…){how}</dd>",
        f"<dt>Spec SHA-256</dt><dd>openapi.yaml {e(spec['openapi_sha256'][:16])}… · "
        f"requirements.yaml {e(spec['requirements_sha256'][:16])}…</dd>",
    ]


def _attention(doc: dict[str, Any]) -> list[str]:
    rows = [r for r in doc["requirements"] if r["verdict"] in WITH_EVIDENCE]
    rows.sort(key=lambda r: (WITH_EVIDENCE.index(r["verdict"]), r["id"]))
    if not rows:
        return []
    out = ["<h3>Needs attention</h3>", '<ul class="attention">']
    for r in rows:
        first = r["findings"][0] if r["findings"] else {}
        what = f"expected {first['expected']}; actual {first['actual']}" if first else r["reason"]
        if len(what) > 200:
            what = what[:199] + "…"
        out.append(
            f'<li>{_badge(r["verdict"])}<a href="#req-{e(r["id"])}"><code>{e(r["id"])}</code></a>'
            f'<span class="what">{e(what)}</span></li>'
        )
    return [*out, "</ul>"]


def _parts(doc: dict[str, Any]) -> list[str]:
    cert = doc["certification"]
    rows = [("core", "required", cert["parts"]["core"], cert["notes"].get("core", ""))]
    for name, status in doc["capabilities"].items():
        how = f" ({status['how']})" if status["how"] in ("declared", "detected") else ""
        note = cert["notes"].get(name) or "; ".join(status["evidence"])
        rows.append((name, status["status"] + how, cert["parts"].get(name, ""), note))
    out = [
        "<h3>Certification by part</h3>",
        '<table class="small"><thead><tr><th>Part</th><th>Capability</th><th>Result</th>'
        "<th>Notes</th></tr></thead><tbody>",
    ]
    out += [
        f"<tr><td>{e(n)}</td><td>{e(c)}</td><td><strong>{e(r)}</strong></td>"
        f'<td class="reason">{e(note)}</td></tr>'
        for n, c, r, note in rows
    ]
    return [*out, "</tbody></table>"]


def _baseline(doc: dict[str, Any]) -> list[str]:
    entries = doc["baseline"]["entries"]
    if not entries:
        return []
    out = [
        f"<h3>Baseline {e(doc['baseline']['file'])}</h3>",
        '<table class="small"><thead><tr><th>Requirement</th><th>Status</th><th>Reason</th>'
        "<th>Expires</th></tr></thead><tbody>",
    ]
    for b in entries:
        status = b["status"] + (f": {b['note']}" if b["note"] else "")
        out.append(
            f"<tr><td><code>{e(b['requirement'])}</code></td><td>{e(status)}</td>"
            f"<td>{e(b['reason'])}</td><td>{e(b['expires'] or '')}</td></tr>"
        )
    return [*out, "</tbody></table>"]


def _sections(doc: dict[str, Any]) -> list[str]:
    by_section: dict[str, list[dict[str, Any]]] = {}
    for r in doc["requirements"]:
        by_section.setdefault(r["section"], []).append(r)
    out = []
    for section in doc["sections"]:
        counts = ", ".join(f"{n} {v}" for v, n in section["totals"].items())
        out += [
            f'<section id="sec-{e(section["key"])}">',
            f"<h2>{e(section['title'])} <small>{e(section['key'])} · {e(counts)}</small></h2>",
            "<table><thead><tr><th>Verdict</th><th>Requirement</th><th>Level</th>"
            "<th>Statement</th><th>Source</th></tr></thead><tbody>",
        ]
        out += [_row(r, doc) for r in by_section.get(section["key"], [])]
        out += ["</tbody></table></section>"]
    return out


def _row(r: dict[str, Any], doc: dict[str, Any]) -> str:
    verdict = r["verdict"]
    detail = f'<div class="reason">{e(r["reason"])}</div>' if r["reason"] else ""
    if r["tests"]:
        tests = "".join(f"<code>{e(t)}</code>" for t in r["tests"])
        what = "file(s) whose exchanges judged it" if doc.get("audit") else "test(s)"
        detail += (
            f'<details class="tests"><summary>{len(r["tests"])} {what}</summary>{tests}</details>'
        )
    evidence = verdict in WITH_EVIDENCE and r["findings"]
    row = (
        f'<tr class="req v-{e(verdict)}{" has-evidence" if evidence else ""}" '
        f'id="req-{e(r["id"])}" data-verdict="{e(verdict)}">'
        f'<td class="verdict">{_badge(verdict)}</td><td class="id"><code>{e(r["id"])}</code></td>'
        f'<td class="level">{e(r["level"])}</td><td>{e(r["statement"])}{detail}</td>'
        f'<td class="source">{e(r["source"])}</td></tr>'
    )
    if evidence:
        row += (
            f'<tr class="evidence v-{e(verdict)}"><td></td><td colspan="4">'
            f"{_findings(r, verdict in OPEN, doc)}</td></tr>"
        )
    return row


def _findings(r: dict[str, Any], unfold: bool, doc: dict[str, Any]) -> str:
    """Every distinct finding (the first few unfolded), each with where it was seen again."""
    findings = r["findings"]
    shown = "".join(_finding(f, doc) for f in findings[:UNFOLDED])
    if len(findings) > UNFOLDED:
        rest = "".join(_finding(f, doc) for f in findings[UNFOLDED:])
        shown += f"<details><summary>{len(findings) - UNFOLDED} more</summary>{rest}</details>"
    again = f", seen {r['repeats']} more time(s)" if r.get("repeats") else ""
    label = f"{len(findings)} finding(s){again}: expected, actual, reproduction"
    return f"<details{' open' if unfold else ''}><summary>{e(label)}</summary>{shown}</details>"


def _finding(f: dict[str, Any], doc: dict[str, Any]) -> str:
    rows = [("Operation", f.get("operation") or "none named"), ("Expected", f["expected"]),
            ("Actual", f["actual"])]  # fmt: skip
    if f.get("also_at"):
        rows.append((f"Seen again ({len(f['also_at'])})", places_line(f["also_at"])))
    ev = f.get("evidence") or {}
    out = "".join(f"<dt>{k}</dt><dd>{e(v)}</dd>" for k, v in rows)
    if ev:
        request, response = ev.get("request", {}), ev.get("response", {})
        out += f"<dt>Request</dt><dd><pre>{e(request.get('method'))} {e(request.get('url'))}"
        if request.get("body"):
            out += f"\n\n{e(request['body'])}"
        out += "</pre></dd>"
        out += f"<dt>Response</dt><dd><pre>HTTP {e(response.get('status'))}"
        if response.get("body"):
            out += f"\n\n{e(response['body'])}"
        out += "</pre></dd>"
        if ev.get("curl"):
            out += f"<dt>Reproduce</dt><dd><pre>{e(ev['curl'])}</pre></dd>"
    if replay := replay_command(doc, f):
        link = f'<a href="{e(f["har"])}">{e(f["har"])}</a> (HAR 1.2: open it in dev tools)'
        out += f"<dt>Exchanges</dt><dd>{link}</dd><dt>Replay</dt><dd><pre>{e(replay)}</pre></dd>"
    return f'<div class="finding v-{e(f["verdict"])}"><dl>{out}</dl></div>'
