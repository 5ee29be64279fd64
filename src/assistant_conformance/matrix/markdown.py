"""matrix.md: the grid in GitHub-flavoured Markdown, for a README or a PR comment."""

from __future__ import annotations

from typing import Any

from assistant_conformance.report.markdown import cell

DIFFERS = "≠"


def matrix_markdown(matrix: dict[str, Any], heading: str = "## Compatibility matrix") -> str:
    names = [t["name"] for t in matrix["targets"]]
    rows = matrix["requirements"]
    lines = [heading, ""] if heading else []
    lines += [
        f"Generated {matrix['generated'][:10]} by `{matrix['command']}` · suite "
        f"{matrix['suite_version']} (sources {matrix['suite_sha256'][:12]}) · seed "
        f"{matrix['seed']} · examples {matrix['examples'] or 'default'}.",
        "",
        "| target | what | versions | certification | in this grid | time |",
        "|---|---|---|---|---|---:|",
        *(_target_row(t) for t in matrix["targets"]),
        "",
        f"The targets disagree on {matrix['disagreements']} of {len(rows)} requirements "
        f"({DIFFERS}). Cells are each target's own verdict; `error`: the target could not be run.",
        "",
        "| requirement | level | " + " | ".join(names) + f" | {DIFFERS} |",
        "|---|---|" + "---|" * len(names) + "---|",
    ]
    titles = {s["key"]: s["title"] for s in matrix["sections"]}
    section = None
    for row in rows:
        if row["section"] != section:
            section = row["section"]
            lines.append(f"| **{cell(titles[section])}** | |" + " |" * len(names) + " |")
        verdicts = " | ".join(row["verdicts"][name] for name in names)
        mark = "" if row["agree"] else DIFFERS
        lines.append(f"| {row['id']} | {row['level']} | {verdicts} | {mark} |")
    return "\n".join(lines) + "\n"


def _target_row(target: dict[str, Any]) -> str:
    versions = ", ".join(f"{k} {v}" for k, v in target["versions"].items()) or "not given"
    if target["status"] == "error":
        level, counts = f"error: {target['reason']}", ""
    else:
        level = target["certification"]
        counts = ", ".join(f"{n} {v}" for v, n in target["grid_totals"].items())
    return (
        f"| {target['name']} | {cell(target['what'])} | {cell(versions)} | {cell(level, 300)} | "
        f"{counts} | {target['seconds']:.0f} s |"
    )
