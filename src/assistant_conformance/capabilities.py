"""Optional capability groups: which catalogue sections each covers, and how one is found missing.

A vendor may implement a subset of the interface. The groups below may be declared unsupported
(--unsupported) or are detected: at the start of the session the suite sends one request to every
entry operation of each group (those without path parameters: an unknown id would answer 404 on a
conformant server too), and a group whose probes all answer 404, 405 or 501 is unsupported. Its
tests are skipped and its requirements reported `unsupported`; everything else is core.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import httpx

from .settings import CAPABILITY_GROUPS

MISSING_STATUSES = (404, 405, 501)


@dataclass(frozen=True)
class Group:
    name: str
    sections: tuple[str, ...]  # catalogue section keys (spec/requirements.yaml)
    probes: tuple[tuple[str, str], ...]  # (method, path) of the group's entry operations


GROUPS = {
    g.name: g
    for g in (
        Group(
            "store",
            ("STORE",),
            (("POST", "/api/ai/store/items/search"), ("POST", "/api/ai/store/namespaces")),
        ),
        Group("conversations", ("CONV", "MSG"), (("POST", "/api/ai/conversations/search"),)),
        Group("files", ("FILE",), (("POST", "/api/ai/v1/file"),)),
        Group("contexts", ("CTX",), (("POST", "/api/ai/contexts/file"),)),
        Group("chatkit", ("CHATKIT",), (("POST", "/api/ai/v1/chatkit/sessions"),)),
    )
}
assert tuple(GROUPS) == CAPABILITY_GROUPS
SECTION_GROUP = {section: g.name for g in GROUPS.values() for section in g.sections}

SUPPORTED, UNSUPPORTED, NOT_PROBED = "supported", "unsupported", "not probed"


@dataclass
class GroupStatus:
    status: str  # supported / unsupported / not probed
    how: str = ""  # declared / detected / probed
    evidence: list[str] = field(default_factory=list)  # "POST /api/ai/v1/file -> 404"

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def group_of_section(section: str) -> str | None:
    return SECTION_GROUP.get(section)


def declared(unsupported: tuple[str, ...]) -> dict[str, GroupStatus]:
    return {
        name: GroupStatus(UNSUPPORTED, "declared", ["declared unsupported by configuration"])
        for name in unsupported
    }


def probe(client: httpx.Client, skip: tuple[str, ...] = ()) -> dict[str, GroupStatus]:
    """One request per entry operation of each group not declared unsupported."""
    statuses: dict[str, GroupStatus] = {}
    for group in GROUPS.values():
        if group.name in skip:
            continue
        evidence, missing = [], True
        for method, path in group.probes:
            try:
                status = client.request(method, path, json={}).status_code
            except httpx.HTTPError as exc:
                evidence.append(f"{method} {path} -> {type(exc).__name__}")
                missing = False  # no answer is no proof of absence
                continue
            evidence.append(f"{method} {path} -> {status}")
            missing = missing and status in MISSING_STATUSES
        how = "detected" if missing else "probed"
        statuses[group.name] = GroupStatus(UNSUPPORTED if missing else SUPPORTED, how, evidence)
    return statuses


def skip_reason(status: GroupStatus, group: str) -> str:
    if status.how == "declared":
        return f"capability group {group} declared unsupported"
    return f"capability group {group} unsupported: {'; '.join(status.evidence)}"
