"""conformance.html's style sheet (report/htmlpage.py): inline in the page, which loads nothing;
a colour per verdict."""

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
