"""Operations the target does not implement, told apart from a refusal of the suite's input.

An answer says its operation is not implemented (`unimplemented`, `reason`) when it is
- 501 Not Implemented (RFC 9110 §15.6.2: the server does not support the functionality);
- 404 or 405 on a documented operation whose request named no identifier, or only identifiers
  the target has shown in this run (`shown`: what the run created, or was listed): the path or
  the method is not served, it is no resource the target does not know;
- another 4xx (but 406 and 415, which are about media types) whose JSON message says so, in one
  of PHRASES (case-insensitive), e.g. the deployed platform's 400 "This feature is not yet
  implemented".
Such an answer is a finding on the operation's status requirement (its x-requirements `status`),
never a refusal of the suite's reading of a body: the operation was not there to read it.

How the suite learns of it, in three places, each where what it reads proves the absence:
- the pre-flight (suite/http/target.py) sends the reads of contract/resources.py in order until one
  answers as this API does: those before it that did not are absent (and a target where none
  does is refused: the address is wrong, or the token);
- at the end of every test, its exchanges (`in_trail`, charged by
  suite/judging/answer_charges.py): a 405 or a 501 on a documented operation, and a 404 on one
  the pre-flight found absent. These depend
  on neither the input nor the test, so any test that met one has seen the absence;
- a failed status finding whose answer says so (`of_finding`): a 404 on another operation and
  the phrasings depend on what was sent, so they count only where a test sent the request as
  valid (suite/judging/findings.py's status checks).
The report lists the operations found absent (`summary`), but not those of a capability group
found unsupported as a whole (suite/run/capabilities.py): the group's line says it.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any
from urllib.parse import urlsplit

import httpx

from assistant_conformance.contract.catalogue import load
from assistant_conformance.contract.openapi import Operation, by_label, match_path
from assistant_conformance.report.exchange_record import ExchangeRecord
from assistant_conformance.suite.http import trail

PHRASES = ("not yet implemented", "not implemented", "not supported", "unsupported")
NOT_SERVED = (405, 501)  # whatever was sent: the method or the operation is not served
ABSENT_STATUSES = (404, *NOT_SERVED)
MEDIA_TYPE_STATUSES = (406, 415)  # "Unsupported Media Type" is about the body, not the operation
MESSAGE_KEYS = ("message", "detail", "msg", "error", "title", "description")
PREFLIGHT, OBSERVED = "pre-flight", "observed"  # how an absence was found
NOTHING: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Absence:
    """One operation the target does not implement, and what showed it."""

    operation: str  # `METHOD /path/{template}`
    requirement: str  # its status requirement
    reason: str  # one line: what it answered
    how: str = OBSERVED

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def operation(method: str, path: str) -> Operation | None:
    """The documented operation of a request (None off the document)."""
    found = match_path(path)
    return by_label().get(f"{method.upper()} {found[0]}") if found else None


def message_said(text: str) -> str:
    """The message of a JSON error body ("" when there is none): of each object, its first
    message-like field (MESSAGE_KEYS, in order); every string of a list."""
    try:
        body = json.loads(text)
    except (ValueError, RecursionError):
        return ""
    pending: list[Any] = [body]
    said: list[str] = []
    while pending and len(said) < 8:
        item = pending.pop(0)
        if isinstance(item, str):
            said.append(item)
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, dict):  # its first message-like field (not the reason phrase)
            pending.extend([item[k] for k in MESSAGE_KEYS if k in item][:1])
    return "; ".join(said)[:300]


def says_unimplemented(text: str) -> str | None:
    """The message of a body that says its operation is not implemented (PHRASES), else None."""
    said = message_said(text)
    return said if any(p in said.lower() for p in PHRASES) else None


def reason(
    method: str, path: str, status: int | None, text: str, shown: Collection[str] = NOTHING
) -> str | None:
    """Why an answer says its (documented) operation is not implemented; None when it does not."""
    op = operation(method, path)
    if op is None or status is None:
        return None
    where = f"{op.label} answered {status}"
    if status == 501:
        return f"{where} (Not Implemented)"
    ids = list((match_path(path) or ("", {}))[1].values())
    if status in (404, 405) and all(i in shown for i in ids):
        named = "no identifier" if not ids else "identifiers the target had shown"
        return f"{where} to a request naming {named}: not served there"
    if 400 <= status < 500 and status not in MEDIA_TYPE_STATUSES:
        said = says_unimplemented(text)
        if said is not None:
            return f"{where}: {said!r}"
    return None


def unimplemented(response: httpx.Response, shown: Collection[str] = NOTHING) -> str | None:
    """Why `response` says its operation is not implemented (see the module docstring), or None.
    `shown`: identifiers the target has shown in this run; without them a 404 or 405 on a path
    that names one is no absence (an unknown id answers 404 on a complete server too)."""
    request = response.request
    try:
        text = response.text
    except httpx.ResponseNotRead:
        text = ""
    return reason(request.method, request.url.path, response.status_code, text, shown)


def in_trail(
    entries: Iterable[trail.Entry], shown: Collection[str], probed: Collection[str]
) -> list[tuple[int, Absence]]:
    """The exchanges of a test that show an operation absent whatever was sent (see the module
    docstring): 405 and 501, and 404 on operations the pre-flight found absent (`probed`
    labels); each operation once, with its index in the trail."""
    found: dict[str, tuple[int, Absence]] = {}
    for index, entry in enumerate(entries):
        if entry.status not in ABSENT_STATUSES:
            continue
        path = urlsplit(entry.url).path
        op = operation(entry.method, path)
        if op is None or op.label in found or (entry.status == 404 and op.label not in probed):
            continue
        text = bytes(entry.response_body).decode("utf-8", "replace")
        why = reason(entry.method, path, entry.status, text, shown)
        if why is not None:
            found[op.label] = (index, Absence(op.label, op.status_requirement, why))
    return list(found.values())


def of_finding(
    requirement: str, verdict: str, evidence: ExchangeRecord | None, shown: Collection[str]
) -> Absence | None:
    """The absence a failed status finding shows: its answer says its operation is not there."""
    if verdict != "fail" or evidence is None:
        return None
    method, path = evidence.request.method, urlsplit(evidence.request.url).path
    op = operation(method, path)
    if op is None or op.status_requirement != requirement:
        return None
    why = reason(method, path, evidence.response.status, evidence.response.body, shown)
    return Absence(op.label, requirement, why) if why else None


def exchange_of(entry: trail.Entry) -> trail.Entry:
    """Evidence of a trail entry: what was sent, and the start of what came back (2000 bytes,
    where a report shows the first EXCERPT characters of others)."""
    text = bytes(entry.response_body[:2000]).decode("utf-8", "replace")
    return replace(entry, note=text)


def expected_status(op: Operation) -> str:
    return f"HTTP {op.success_status or '2xx'}: the operation implemented (interface §4)"


def group_of(label: str) -> str | None:
    """The optional capability group an operation belongs to (None: core)."""
    op = by_label().get(label)
    return load().group_of_section(load()[op.status_requirement].section) if op else None


def absent_summary(
    records: Iterable[Mapping[str, str]], unsupported: Collection[str] = NOTHING
) -> list[dict[str, str]]:
    """The operations found absent, each once (the pre-flight's word first), in document order;
    none of a capability group found unsupported as a whole (`unsupported`: group names)."""
    first: dict[str, dict[str, str]] = {}
    for record in sorted(records, key=lambda r: r.get("how") != PREFLIGHT):
        group = group_of(record["operation"])
        if group is None or group not in unsupported:
            first.setdefault(record["operation"], dict(record))
    order = {label: i for i, label in enumerate(by_label())}
    return sorted(first.values(), key=lambda r: order.get(r["operation"], len(order)))
