"""index.html of a matrix: one self-contained page (no scripts), requirements by targets.

Each cell links to the target's own conformance.html at that requirement (its evidence). A
checkbox shows only the rows where the targets disagree: plain CSS, so it works with scripts off.
"""

from __future__ import annotations

from typing import Any

from assistant_conformance.report.htmlpage import STYLE, e

GRID_STYLE = """
.wrap{max-width:1400px}
table.targets td{vertical-align:top}
table.targets tr.error td{background:#fff1e5}
.hash{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;color:var(--muted)}
.filter{display:inline-flex;gap:8px;align-items:center;margin:12px 0;font-weight:600}
table.grid thead th{position:sticky;top:0;z-index:1;text-align:center}
table.grid thead th.req{text-align:left}
table.grid tr.section th{background:#fff;font-size:15px;padding-top:18px;text-align:left}
table.grid td.cell{text-align:center;white-space:nowrap;width:1%}
table.grid td.cell a,table.grid td.cell span{display:inline-block;min-width:84px;padding:1px 9px;
border-radius:999px;font-size:12px;font-weight:600;color:#fff}
td.cell.v-pass>*{background:var(--pass)}td.cell.v-fail>*{background:var(--fail)}
td.cell.v-warn>*{background:var(--warn)}td.cell.v-known>*{background:var(--known)}
td.cell.v-error>*{background:var(--error)}td.cell.v-skip>*{background:var(--skip)}
td.cell.v-unsupported>*{background:var(--unsupported)}
td.cell.v-untested>*,td.cell.v-pending>*{background:#fff;color:var(--untested)!important;
border:1px dashed var(--untested)}
tr.disagree td.id{box-shadow:inset 4px 0 0 var(--warn)}
.statement{color:var(--muted);font-size:13px}
.lede{color:var(--muted);font-size:14px;overflow-wrap:anywhere}
#only-disagree:checked~table.grid tr.agree,
#only-disagree:checked~table.grid tbody.agree{display:none}
"""


def matrix_page(matrix: dict[str, Any]) -> str:
    rows = matrix["requirements"]
    title = f"Compatibility matrix: {len(matrix['targets'])} targets, {len(rows)} requirements"
    return "\n".join(
        [
            "<!doctype html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{e(title)}</title><style>{STYLE}{GRID_STYLE}</style></head>",
            '<body><div class="wrap">',
            f"<h1>{e(title)}</h1>",
            f'<p class="lede">Generated {e(matrix["generated"])} by <code>{e(matrix["command"])}'
            f"</code> · suite {e(matrix['suite_version'])} (sources "
            f"{e(matrix['suite_sha256'][:12])}) · seed {e(matrix['seed'])} · examples "
            f"{e(matrix['examples'] or 'default')}</p>",
            '<h2 id="targets">Targets</h2>',
            *_targets(matrix["targets"]),
            '<h2 id="requirements">Requirements</h2>',
            *_grid(matrix),
            f"<footer>format {e(matrix['format'])} · the same data is in matrix.json</footer>",
            "</div></body></html>",
        ]
    )


def _targets(targets: list[dict[str, Any]]) -> list[str]:
    head = ("target", "what", "versions", "certification", "in this grid", "suite · spec", "time")
    out = ['<table class="targets"><thead><tr>', *(f"<th>{h}</th>" for h in head), "</tr></thead>"]
    for t in targets:
        versions = "<br>".join(f"{e(k)} {e(v)}" for k, v in t["versions"].items()) or "not given"
        name = f'<a href="{e(t["report"])}">{e(t["name"])}</a>' if t["report"] else e(t["name"])
        if t["status"] == "error":
            level = '<strong class="v-error">error</strong>'
            level += f'<div class="reason">{e(t["reason"])}</div>'
            counts, hashes = f'<a href="{e(t["log"])}">suite log</a>', ""
        else:
            level = f"<strong>{e(t['certification'])}</strong><div class='reason'>{e(t['outcome'])}"
            level += f" (exit {e(t['exit_status'])})</div>"
            shown = t["grid_totals"].items()
            counts = " ".join(f'<span class="chip v-{e(v)}">{n} {e(v)}</span>' for v, n in shown)
            hashes = (
                f'<span class="hash">suite {e(t["suite_sha256"][:12])} · openapi '
                f"{e(t['spec']['openapi_sha256'][:12])} · catalogue "
                f"{e(t['spec']['requirements_sha256'][:12])}</span>"
            )
        out.append(
            f'<tr id="target-{e(t["name"])}" class="{e(t["status"])}"><td>{name}</td>'
            f"<td>{e(t['what'])}</td><td>{versions}</td><td>{level}</td><td>{counts}</td>"
            f"<td>{hashes}</td><td>{t['seconds']:.0f} s</td></tr>"
        )
    return [*out, "</table>"]


def _grid(matrix: dict[str, Any]) -> list[str]:
    targets = matrix["targets"]
    titles = {s["key"]: s["title"] for s in matrix["sections"]}
    out = [
        '<input type="checkbox" id="only-disagree">',
        f'<label class="filter" for="only-disagree">Only the {matrix["disagreements"]} rows where '
        "the targets disagree</label>",
        '<table class="grid"><thead><tr><th class="req">requirement</th><th>level</th>',
        *(f'<th data-target="{e(t["name"])}">{e(t["name"])}</th>' for t in targets),
        "</tr></thead>",
    ]
    for key, title in titles.items():
        rows = [r for r in matrix["requirements"] if r["section"] == key]
        agree = "agree" if all(r["agree"] for r in rows) else "disagree"
        out.append(f'<tbody id="sec-{e(key)}" class="{agree}"><tr class="section">')
        out.append(f'<th colspan="{2 + len(targets)}">{e(title)}</th></tr>')
        out += [_row(row, targets) for row in rows]
        out.append("</tbody>")
    return [*out, "</table>"]


def _row(row: dict[str, Any], targets: list[dict[str, Any]]) -> str:
    rid = row["id"]
    cells = []
    for t in targets:
        verdict = row["verdicts"][t["name"]]
        mark = f'<span title="{e(t["reason"])}">{e(verdict)}</span>'
        if t["report"]:
            mark = f'<a href="{e(t["report"])}#req-{e(rid)}">{e(verdict)}</a>'
        cells.append(f'<td class="cell v-{e(verdict)}" data-target="{e(t["name"])}">{mark}</td>')
    agree = "agree" if row["agree"] else "disagree"
    return (
        f'<tr id="req-{e(rid)}" class="req {agree}"><td class="id"><code>{e(rid)}</code>'
        f'<div class="statement">{e(row["statement"])}</div></td>'
        f'<td class="level">{e(row["level"])}</td>{"".join(cells)}</tr>'
    )
