"""The report room: the result model (model.py), the verdicts decided from it (verdicts.py), the
catalogue and baseline they are decided against, redaction, and every writer. Writers only read a
Run, through one redacted document (conformance_json.Document: conformance.json's typed
model), and render it: conformance.json, conformance.md,
conformance.html, badge.json (a shields.io endpoint) and the terminal summary (terminal.py, a
run's); JUnit XML and Allure come from pytest and allure-pytest, labelled here (integrations.py).
Nothing here imports the suite, the reference or the proof, and only pytest's own writers
(integrations.py: JUnit's and Allure's labels; allure_listener.py) load pytest: the terminal
summary writes to anything with pytest's terminal's `section` and `write_line`, and an audit
writes its reports without pytest."""

from __future__ import annotations

from pathlib import Path

from assistant_conformance.report import badge, document, htmlpage, markdown, redact
from assistant_conformance.report.conformance_json import Document
from assistant_conformance.report.model import Run

JSON_FILE, MARKDOWN_FILE, HTML_FILE = "conformance.json", "conformance.md", "conformance.html"
JUNIT_FILE = "junit.xml"  # pytest's in a run (integrations.py), the audit's own in an audit

__all__ = ["write_all"]


def write_all(run: Run, report_dir: Path) -> None:
    report_dir.mkdir(parents=True, exist_ok=True)
    doc = Document.of_run(run)
    document.write_json(doc.as_json(), report_dir / JSON_FILE)
    (report_dir / MARKDOWN_FILE).write_text(
        redact.text(markdown.to_markdown(doc)), encoding="utf-8"
    )
    (report_dir / HTML_FILE).write_text(htmlpage.to_html(doc), encoding="utf-8")
    document.write_json(badge.badge(doc), report_dir / badge.BADGE_FILE)
