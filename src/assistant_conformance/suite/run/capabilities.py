"""Optional capability groups: which catalogue sections each covers, and how one is found missing.

A vendor may implement a subset of the interface. The groups (the catalogue's) may be declared
unsupported (--unsupported) or are detected: at the start of the session the suite sends one
request to every entry operation of each group (contract/resources.py's `probes` of the group's
resources: without path parameters, as an unknown id would answer 404 on a conformant server
too), and a group whose probes all answer 404, 405 or 501 is unsupported. Its
tests are skipped (`CapabilityGate` puts the fixture that skips them first) and its requirements
reported `unsupported`; everything else is core.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

import httpx
import pytest

from assistant_conformance.contract.catalogue import load
from assistant_conformance.contract.resources import Ask, capability_probes
from assistant_conformance.report.model import NOT_PROBED, SUPPORTED, UNSUPPORTED_GROUP, GroupStatus
from assistant_conformance.suite.http import observe
from assistant_conformance.suite.http.observe import AnswerFault, Overdue
from assistant_conformance.suite.run.outcomes import requirement_ids
from assistant_conformance.suite.safety.budget import BudgetSpent

__all__ = [
    "NOT_PROBED",
    "SUPPORTED",
    "UNSUPPORTED_GROUP",
    "GroupStatus",
    "declared_unsupported",
    "probe_groups",
]

MISSING_STATUSES = (404, 405, 501)


def group_of_section(section: str) -> str | None:
    return load().group_of_section(section)


def groups_of(item: pytest.Item) -> list[str]:
    """The capability groups of the requirements a test checks (its `req` markers)."""
    catalogue = load()
    sections = {catalogue[rid].section for rid in requirement_ids(item)}
    return sorted({g for s in sections if (g := group_of_section(s))})


class CapabilityGate:
    """The `capability_gate` fixture (suite/fixtures.py) first, for the tests of a capability
    group (a few dozen: a fixture for every test cost each its set-up and an Allure file). A
    plugin object."""

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            if isinstance(item, pytest.Function) and groups_of(item):
                item.fixturenames = ["capability_gate", *item.fixturenames]  # its own list


def declared_unsupported(unsupported: tuple[str, ...]) -> dict[str, GroupStatus]:
    return {
        name: GroupStatus(UNSUPPORTED_GROUP, "declared", ["declared unsupported by configuration"])
        for name in unsupported
    }


def probe_groups(
    client: httpx.Client,
    skip: tuple[str, ...] = (),
    answered: Callable[[str, str], AbstractContextManager[str]] = lambda m, p: nullcontext(""),
) -> dict[str, GroupStatus]:
    """One request per entry operation of each group not declared unsupported; `answered(method,
    path)`: around the probe, what the run knows of it already (another of its processes made
    what it creates and nothing removes: not made again), "" when nothing."""
    statuses: dict[str, GroupStatus] = {}
    for name, probes in capability_probes().items():
        if name in skip:
            continue
        evidence, missing = [], True
        for probe in probes:
            with answered(probe.route.method, probe.route.path) as known:
                found, absent = _probe(client, probe, known)
            evidence.append(found)
            missing = missing and absent
        how = "detected" if missing else "probed"
        statuses[name] = GroupStatus(UNSUPPORTED_GROUP if missing else SUPPORTED, how, evidence)
    return statuses


def _probe(client: httpx.Client, probe: Ask, known: str) -> tuple[str, bool]:
    """What one probe found, and whether it shows the operation absent."""
    sent = probe.route.label
    if known:
        return f"{sent}: {known}", False
    try:
        with observe.unjudged():  # no test records what it gets
            answer = client.request(probe.route.method, probe.route.path, json=probe.body)
    except (httpx.HTTPError, AnswerFault) as exc:
        return f"{sent} -> {type(exc).__name__}", False  # no answer: no proof of absence
    except (BudgetSpent, Overdue) as unasked:  # not sent: no proof of absence either
        return f"{sent} not sent: {unasked.msg.removeprefix('not judged: ')}", False
    return f"{sent} -> {answer.status_code}", answer.status_code in MISSING_STATUSES


def skip_reason(status: GroupStatus, group: str) -> str:
    if status.how == "declared":
        return f"capability group {group} declared unsupported"
    return f"capability group {group} unsupported: {'; '.join(status.evidence)}"
