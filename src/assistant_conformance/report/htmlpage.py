"""conformance.html: one self-contained page (no scripts, fonts or links leaving the file).

A summary (outcome, totals, certification level, why the gate failed), then each interface section
with every requirement and its verdict; a failing one shows expected, actual, the exchange and curl.
"""

from __future__ import annotations

from html import escape
from typing import Any

from assistant_conformance.report.document import (
    absent_line,
    cleanup_lines,
    replay_command,
    runs_line,
    transport_line,
)

MAX_FINDINGS = 5
OPEN = ("fail", "error")  # evidence shown unfolded
WITH_EVIDENCE = ("fail", "error", "warn", "known")

STYLE = """
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#f6f8fa;
--pass:#1a7f37;--fail:#cf222e;--warn:#9a6700;--known:#8250df;--error:#bc4c00;
--skip:#59636e;--unsupported:#0969da;--untested:#818b98;--pending:#818b98}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg)}
.wrap{max-width:1180px;margin:0 auto;padding:24px 28px 64px}
h1{font-size:26px;margin:0 0 4px}
h2{font-size:19px;margin:40px 0 8px;padding-bottom:6px;border-bottom:1px solid var(--line)}
h2 small{font-weight:400;color:var(--muted);font-size:14px;margin-left:8px}
h3{font-size:15px;margin:22px 0 6px}
.outcome{font-size:20px;font-weight:600;margin:14px 0;padding:12px 16px;border-radius:8px;
border:1px solid var(--line);background:var(--bg)}
.outcome.conformant,.outcome.conformant-except-known-failures{border-color:var(--pass);color:var(--pass);background:#dafbe1}
.outcome.not-conformant{border-color:var(--fail);color:var(--fail);background:#ffebe9}
.outcome.harness-error,.outcome.interrupted{border-color:var(--error);color:var(--error);
background:#fff1e5}
.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:12px 0;
color:var(--muted);font-size:14px}
.meta dt{font-weight:600;color:var(--fg)}.meta dd{margin:0;overflow-wrap:anywhere}
.chips{display:flex;flex-wrap:wrap;gap:8px;margin:12px 0}
.chip,.badge{display:inline-block;border-radius:999px;font-weight:600;white-space:nowrap}
.chip{padding:3px 12px;border:1px solid currentColor;font-size:14px}
.badge{padding:1px 9px;font-size:12px;color:#fff;min-width:84px;text-align:center}
.v-pass{color:var(--pass)}.v-fail{color:var(--fail)}.v-warn{color:var(--warn)}
.v-known{color:var(--known)}.v-error{color:var(--error)}.v-skip{color:var(--skip)}
.v-unsupported{color:var(--unsupported)}.v-untested{color:var(--untested)}
.v-pending{color:var(--pending)}
.badge.v-pass{background:var(--pass)}.badge.v-fail{background:var(--fail)}
.badge.v-warn{background:var(--warn)}.badge.v-known{background:var(--known)}
.badge.v-error{background:var(--error)}.badge.v-skip{background:var(--skip)}
.badge.v-unsupported{background:var(--unsupported)}
span.badge{color:#fff}
.badge.v-untested,.badge.v-pending{background:#fff;color:var(--untested);
border:1px dashed var(--untested)}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{text-align:left;vertical-align:top;padding:7px 10px;border-bottom:1px solid var(--line)}
th{background:var(--bg);font-weight:600}
table.small{width:auto;min-width:50%}
td.id code{font-weight:600;white-space:nowrap}
td.level,td.verdict{white-space:nowrap;width:1%}
td.source{color:var(--muted);width:16%}
tr.v-fail td,tr.v-error td{background:#fff8f7}
tr.v-warn td{background:#fffdf3}
tr.req td{color:var(--fg)}
.reason{color:var(--muted);font-size:13px;margin-top:2px}
ul.problems{margin:6px 0;padding-left:20px}
ul.problems li{margin:2px 0}
ul.attention{list-style:none;margin:6px 0;padding:0}
ul.attention li{margin:4px 0;display:flex;gap:10px;align-items:baseline}
ul.attention code{white-space:nowrap}
ul.attention .what{color:var(--muted);font-size:14px}
details{margin-top:8px}
summary{cursor:pointer;color:var(--muted);font-size:13px}
.finding{margin:8px 0 4px;padding:8px 12px;border-left:3px solid var(--line);background:var(--bg);
border-radius:0 6px 6px 0}
.finding.v-fail{border-left-color:var(--fail)}.finding.v-warn{border-left-color:var(--warn)}
.finding dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:0}
.finding dt{font-weight:600;font-size:13px}
.finding dd{margin:0;min-width:0;overflow-wrap:anywhere}
div.finding{color:var(--fg)}
tr.evidence td{border-top:0;padding-top:0}
tr.has-evidence td{border-bottom:0}
pre{margin:0;padding:6px 8px;background:#fff;border:1px solid var(--line);border-radius:6px;
font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:pre-wrap;
overflow-wrap:anywhere;max-height:16em;overflow:auto}
nav{margin:16px 0;font-size:14px}nav a{margin-right:14px;white-space:nowrap}
a{color:#0969da;text-decoration:none}
.tests{font-size:12px;color:var(--muted)}
.tests code{display:block}
footer{margin-top:48px;color:var(--muted);font-size:13px}
"""


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
    result, cert = doc["result"], doc["certification"]
    outcome = result["outcome"].replace(" ", "-")
    mark = "✘" if outcome == "not-conformant" else "✔" if result["exit_status"] == 0 else "⚠"
    spec = doc["spec"]
    out = [
        "<h1>API conformance report</h1>",
        f'<p class="outcome {e(outcome)}">{mark} {e(result["outcome"].capitalize())} '
        f"· exit status {e(result['exit_status'])}</p>",
        '<dl class="meta">',
        f"<dt>Target</dt><dd>{e(doc['target'])}</dd>",
        f"<dt>Certification level</dt><dd><strong>{e(cert['level'])}</strong></dd>",
        f"<dt>Runs</dt><dd>{e((runs_line(doc) or 'none').removeprefix('runs: '))}</dd>",
        f"<dt>Operations absent</dt><dd>{e(_absent(doc))}</dd>",
        f"<dt>Transport</dt><dd>{e((transport_line(doc) or 'plain').removeprefix('transport: '))}"
        "</dd>",
        f"<dt>Clean-up</dt><dd>{'<br>'.join(e(line) for line in cleanup_lines(doc)) or 'none'}"
        "</dd>",
        f"<dt>Started</dt><dd>{e(doc['started'])} · {doc['duration_seconds']:.1f} s</dd>",
        f"<dt>Suite</dt><dd>{e(doc['suite_version'])} (SHA-256 "
        f"{e(doc.get('suite_sha256', '')[:16])}…) · seed {e(doc['seed'])} · strict "
        f"{'on' if doc['options']['strict_conformance'] else 'off'}</dd>",
        f"<dt>Spec SHA-256</dt><dd>openapi.yaml {e(spec['openapi_sha256'][:16])}… · "
        f"requirements.yaml {e(spec['requirements_sha256'][:16])}…</dd>",
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
        detail += (
            f'<details class="tests"><summary>{len(r["tests"])} test(s)</summary>{tests}</details>'
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
    findings = r["findings"]
    shown = "".join(_finding(f, doc) for f in findings[:MAX_FINDINGS])
    more = len(findings) - MAX_FINDINGS
    if more > 0:
        shown += f'<div class="reason">… and {more} more findings in conformance.json</div>'
    label = f"{len(findings)} finding(s): expected, actual, reproduction"
    return f"<details{' open' if unfold else ''}><summary>{e(label)}</summary>{shown}</details>"


def _finding(f: dict[str, Any], doc: dict[str, Any]) -> str:
    rows = [("Expected", f["expected"]), ("Actual", f["actual"])]
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
