"""JUnit XML and Allure: written into the report directory by default, labelled by requirement.

pytest writes JUnit (`--junitxml`) and allure-pytest writes Allure results (`--alluredir`); the
suite only points them at the report directory when the user gave no place of their own, labels
each test (requirement IDs, interface section, level as severity, a link to the section) and
attaches the redacted request and response of every failed finding.
"""

from __future__ import annotations

import json
import re
import shutil
from functools import cache
from pathlib import Path

import pytest

from assistant_conformance.contract import files
from assistant_conformance.contract.catalogue import Catalogue
from assistant_conformance.contract.files import CATALOGUE_PATH, SPEC_DIR, read_yaml
from assistant_conformance.report import JUNIT_FILE
from assistant_conformance.report.model import Finding

ALLURE_DIR = "allure-results"
INTERFACE = "spec/interface.md"
ALLURE_SEVERITY = {"MUST": "critical", "SHOULD": "normal"}


def is_suite_run(config: pytest.Config) -> bool:
    """Whether the run collects the suite's checks (`assistant_conformance.tests`, in a checkout
    its testpaths): not when it collects only other paths (e.g. `selftests`, or the tests of a
    project that has the package installed, which the plugin then leaves alone)."""
    checks = files.tests_dir().resolve()
    for arg in config.args:
        path = (config.invocation_params.dir / arg.split("::", 1)[0]).resolve()
        if path.is_relative_to(checks) or checks.is_relative_to(path):
            return True
    return False


def default_outputs(config: pytest.Config, report_dir: Path) -> None:
    """Point JUnit and Allure at the report directory unless the user chose their own."""
    if not is_suite_run(config) or config.option.collectonly:
        return
    if not getattr(config.option, "xmlpath", None):
        config.option.xmlpath = str(report_dir / JUNIT_FILE)
    if config.pluginmanager.hasplugin("allure_pytest") and not getattr(
        config.option, "allure_report_dir", None
    ):
        allure_dir = report_dir / ALLURE_DIR
        if not hasattr(config, "workerinput"):  # the controller clears last run's results once
            shutil.rmtree(allure_dir, ignore_errors=True)
        config.option.allure_report_dir = str(allure_dir)


@cache
def _interface_anchors() -> dict[str, str]:
    """Section number -> GitHub-style anchor of its heading in spec/interface.md."""
    anchors = {}
    for line in (SPEC_DIR / "interface.md").read_text(encoding="utf-8").splitlines():
        match = re.match(r"#{2,3} (\d+(?:\.\d+)?)\.? (.+)", line)
        if match:
            slug = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
            anchors[match.group(1)] = slug
    return anchors


@cache
def _section_sources() -> dict[str, str]:
    data = read_yaml(CATALOGUE_PATH)
    return {key: value.get("source", "") for key, value in data["sections"].items()}


def interface_link(source: str, section: str) -> tuple[str, str] | None:
    """(name, url) of the interface section a requirement comes from, if it names one."""
    for text in (source, _section_sources().get(section, "")):
        match = re.search(r"interface §(\d+(?:\.\d+)?)", text)
        if match and match.group(1) in _interface_anchors():
            number = match.group(1)
            return f"interface §{number}", f"{INTERFACE}#{_interface_anchors()[number]}"
    return None


def label(item: pytest.Item, catalogue: Catalogue, requirement_ids: list[str]) -> None:
    """Allure labels from the requirements a test names (markers: read when the test ends)."""
    if not requirement_ids or not item.config.pluginmanager.hasplugin("allure_pytest"):
        return
    reqs = [catalogue[rid] for rid in requirement_ids]
    mark = pytest.mark.allure_label
    item.add_marker(mark(*requirement_ids, label_type="requirement"))
    item.add_marker(mark(*requirement_ids, label_type="tag"))
    severity = "critical" if any(r.level == "MUST" for r in reqs) else "normal"
    item.add_marker(mark(severity, label_type="severity"))
    sections = list(dict.fromkeys(r.section for r in reqs))
    item.add_marker(mark(*(catalogue.sections[s] for s in sections), label_type="feature"))
    links = {link for r in reqs if (link := interface_link(r.source, r.section))}
    for name, url in sorted(links):
        item.add_marker(pytest.mark.allure_link(url, name=name, link_type="link"))


def attach(failed: list[Finding]) -> None:
    """Attach the redacted evidence of failed findings to the running Allure test, if any."""
    try:
        import allure
    except ImportError:
        return
    for finding in failed:
        if finding.evidence:
            allure.attach(
                json.dumps(finding.evidence.as_json(), indent=2),
                name=f"{finding.requirement}: request and response",
                attachment_type=allure.attachment_type.JSON,
            )


def without_argument_containers(config: pytest.Config) -> None:
    """allure-pytest writes a container file for each fixture a test sets up, pytest's stand-ins
    for parametrize arguments too (about 1,100 a run): those name no test (allure links a
    container to the tests whose fixtures it finds by name, and an argument is none), so Allure
    shows nothing of them. Its listener, taught to pass them by, writes the rest as before."""
    listener = config.pluginmanager.getplugin("allure_listener")
    if listener is None or not is_suite_run(config):
        return
    from assistant_conformance.report.allure_listener import ArgumentsAreNotFixtures

    config.pluginmanager.unregister(listener)
    listener.__class__ = ArgumentsAreNotFixtures  # the same object: allure's clean-up keeps it
    config.pluginmanager.register(listener, "allure_listener")
