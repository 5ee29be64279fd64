"""conformance.json: the whole run as data; every other report renders from the same document.

Its shape is one typed model (conformance_json.Document): the document is written from it, every
writer reads it, and the JSON Schema shipped with the package (schemas/conformance.schema.json) is
generated from it. Every string in it has passed through redact.text, so no report written from it
carries a credential. Here: the lines the writers share, and writing JSON.
"""

from __future__ import annotations

import datetime as dt
import json
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from assistant_conformance.report import redact
from assistant_conformance.report.conformance_json import Document, FindingRecord, LeftGroup


def audit_fields(doc: Document) -> list[tuple[str, str]]:
    """The header of an audit's (or a proxy session's) report, in place of a run's: the files,
    the exchanges judged, off the document and unanswered, the period they cover, and why the
    untested are. None for a run."""
    seen = doc.audit
    if seen is None:
        return []
    counts = f"{seen.exchanges}: {seen.judged} judged, {seen.off_document} off the "
    counts += f"document, {seen.unanswered} unanswered"
    for count, what in (
        (seen.unread, "unread (nested too deep)"),
        (seen.unrecorded, "not recorded"),
    ):
        counts += f", {count} {what}" if count else ""
    period = seen.period
    covered = f"{period.from_} to {period.to}" if period else "none"
    fields = [("Files", ", ".join(seen.files)), ("Exchanges", counts), ("Period", covered)]
    if "not_judgeable" in seen.model_fields_set:
        untested = f"{seen.not_judgeable} not judgeable from traffic, "
        fields.append(("Untested", f"{untested}{seen.not_exercised} not exercised by these"))
    return fields


def runs_line(doc: Document) -> str | None:
    """One line on the runs the suite started: with which assistant and input, and their cost;
    or why no run was judged."""
    runs = doc.runs
    if runs is None:
        return None
    agent = runs.agent
    if agent is None:
        return f"runs: {runs.started} started; no check needed the agent"
    if agent.problem:
        return f"runs: not judged ({runs.started} started): {agent.problem}"
    statuses = ", ".join(f"{n} {s}" for s, n in sorted(runs.statuses.items())) or "none"
    cost = f"{runs.total_seconds:g} s in all"
    if runs.longest_seconds is not None:
        cost += f", the longest {runs.longest_seconds:g} s"
    refused = agent.refused_options
    options = f"; options refused: {', '.join(sorted(refused))}" if refused else ""
    if agent.numbering:
        options += f"; event ids {agent.numbering}"
    return (
        f"runs: {runs.started} started with assistant {agent.name} "
        f"({agent.assistant_id}, {agent.how}), input {agent.input_shape}; "
        f"statuses {statuses}; {cost}{options}"
    )


def absent_line(doc: Document) -> str | None:
    """One line on the operations the target lacks (suite/http/absent.py: each a finding on its
    status requirement), with what showed each; None when it lacks none (or the run did not
    look)."""
    found = doc.absent_operations
    if not found:
        return None
    said = "; ".join(f"{a.reason} ({a.requirement})" for a in found)
    return f"operations absent ({len(found)}): {said}"


def transport_line(doc: Document) -> str | None:
    """One line on how the target was reached: TLS not verified or checked against a CA bundle,
    extra headers, a rate limit, throttled requests waited out, the bound of the suite's runs in
    flight."""
    way = doc.transport
    if way is None:
        return None
    parts = [f"{doc.workers} workers (--concurrency)"] if doc.workers > 1 else []
    if way.tls != "verified":
        parts.append(f"TLS {way.tls}")
    if way.headers:
        parts.append(f"extra headers {', '.join(way.headers)}")
    if way.rate_limit:
        parts.append(f"rate limit {way.rate_limit:g}/s")
    throttled = way.throttled
    if throttled.requests:
        parts.append(
            f"the target throttled {throttled.requests} requests, "
            f"{throttled.seconds:g} s waited (not findings)"
        )
    if resent := way.resent_after_close:
        parts.append(f"{resent} requests sent again after the connection closed before an answer")
    if "runs_at_once" in way.model_fields_set:
        bound, most, over = way.runs_at_once, way.most_runs_in_flight, way.runs_over_bound
        went = f"; {over} started over it after waiting their longest for a place" if over else ""
        parts.append(f"runs in flight at most {bound} at once across workers (most {most}{went})")
    return "transport: " + "; ".join(parts) if parts else None


def cleanup_lines(doc: Document) -> list[str]:
    """What the end of the run removed or kept, and what stays on the target, and why."""
    done = doc.cleanup
    if done is None:
        return []
    runs = ", ".join(done.runs) or "this run"
    ledgers = ", ".join(done.ledgers)
    said = []
    if done.kept:
        said.append(
            f"--no-cleanup: kept the {done.kept} resources run {runs} created (listed in "
            f"{ledgers}); `pytest --sweep` removes them"
        )
    elif done.removed or done.left:
        said.append(
            f"cleanup: removed {done.removed} resources run {runs} created (ledger {ledgers})"
        )
    return said + left_lines(done.left)


def left_lines(groups: Sequence[LeftGroup]) -> list[str]:
    """`left: 23 chat-kit sessions (the interface has no delete; they expire by ...)`."""
    out = []
    for g in groups:
        kind = g.kind if g.count == 1 else g.kind + "s"
        why = g.reason
        if g.expires_by:
            why += f"; {'it expires' if g.count == 1 else 'they expire'} by "
            why += _minute(g.expires_by)
        out.append(redact.text(f"left: {g.count} {kind} ({why})"))
    return out


def _minute(iso: str) -> str:
    """`2026-11-24T11:05Z`: the minute by which (rounded up), as people read it."""
    moment = dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    if moment.second or moment.microsecond:
        moment = moment.replace(second=0, microsecond=0) + dt.timedelta(minutes=1)
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%MZ")


def write_json(document: Mapping[str, object], path: Path) -> None:
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def places_line(places: list[str], limit: int = 0) -> str:
    """Where a finding was seen again, compactly: `a.har: entries 3, 4, 9-12; exchanges/X.har`
    (`limit`: the characters it may take, the rest counted; 0: no limit)."""
    entries: dict[str, list[int]] = {}
    others: list[str] = []
    for place in places:
        name, said, number = place.rpartition(", entry ")
        if said and number.isdigit():
            entries.setdefault(name, []).append(int(number))
        else:
            others.append(place)
    parts = [f"{name}: {'entry' if len(n) == 1 else 'entries'} {_ranges(n)}"
             for name, n in entries.items()] + others  # fmt: skip
    text = "; ".join(parts)
    if limit and len(text) > limit:
        cut = text.rfind(", ", 0, limit)
        text = text[: cut if cut > 0 else limit] + f" … ({len(places)} in all: conformance.json)"
    return text


def _ranges(numbers: list[int]) -> str:
    """`3, 4, 9-12`: runs of three or more written as their ends."""
    runs: list[list[int]] = []
    for number in sorted(set(numbers)):
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 2 else ", ".join(map(str, r)) for r in runs)


def replay_command(doc: Document, finding: FindingRecord) -> str | None:
    """The one line that replays a finding from its exchanges (None: it kept none)."""
    if not finding.har:
        return None
    folder = shlex.quote(doc.options.report_dir or "reports")
    return f"assistant-conformance replay {folder} {finding.id}"
