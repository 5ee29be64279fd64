"""index.html of a matrix: one self-contained page (no scripts), requirements by targets, rendered
from templates/matrix.html.j2 with the report's style sheet and templates/matrix.css inlined.

Each cell links to the target's own conformance.html at that requirement (its evidence). A
checkbox shows only the rows where the targets disagree: plain CSS, so it works with scripts off.
"""

from __future__ import annotations

from typing import Any

from assistant_conformance.report.templating import render_page


def matrix_page(matrix: dict[str, Any]) -> str:
    rows = matrix["requirements"]
    title = f"Compatibility matrix: {len(matrix['targets'])} targets, {len(rows)} requirements"
    sections = []
    for section in matrix["sections"]:
        held = [r for r in rows if r["section"] == section["key"]]
        agree = all(r["agree"] for r in held)
        sections.append(
            {"key": section["key"], "title": section["title"], "rows": held, "agree": agree}
        )
    return render_page(__package__, "matrix.html.j2", matrix=matrix, title=title, sections=sections)
