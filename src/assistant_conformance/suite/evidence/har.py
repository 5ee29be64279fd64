"""A finding's exchanges as HAR 1.2 (`reports/exchanges/FINDING-ID.har`, opens in a browser's dev
tools), redacted, with what a replay needs beside HAR's own fields (custom fields start with `_`,
as HAR allows):

- `_credential` of each request: `main`, `alt` (the run's tokens, by the variable they come from),
  `none`, or what else it carried (`bearer`, `basic`, `secret`: a credential an earlier answer
  gave), never the credential itself;
- `_provenance`: which values of a request came from which earlier answer (`path[4]` from
  `entry 0, body.thread_id`; `header:last-event-id` from `entry 2, event[2].id`), found by value
  before anything is masked, and kept as places, not values;
- `_stream`: how many events the reader took and why it stopped (a replay stops there too);
  `_fault`: the door's fault when no whole answer came;
- `_poll`: a polling loop's request (until what, within how long); a loop is kept as its first
  and last polls, the last saying how many were left out between and how long they took
  (`skipped`, `seconds`): a replay polls by the loop's words, not by its recorded polls;
- `log._finding`: its stable ID, requirement, verdict, expected and actual, the seed, the test,
  the target, and the check a replay judges it by (`entry` indexes `log.entries`).

A finding's ID is stable: the requirement, the operation, the check and the test at the seed,
hashed; a second alike in the same test gets `-2`.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx

from assistant_conformance import __version__
from assistant_conformance.contract.openapi import operation_label
from assistant_conformance.report import redact
from assistant_conformance.report.model import Finding, without_varying
from assistant_conformance.suite.evidence import places
from assistant_conformance.suite.http import trail
from assistant_conformance.suite.http.trail import Entry
from assistant_conformance.suite.judging import checks
from assistant_conformance.suite.judging.findings import TestRecord, Traced

FOLDER = "exchanges"
ORIGINS_KEPT = 400  # exchanges kept for later findings that use what they made
CREATOR = {"name": "assistant-conformance", "version": __version__}


@dataclass(frozen=True)
class HarRun:
    """What a finding's HAR says of the run it came from: seed, target, the bounds it judged by."""

    report_dir: Path
    seed: int
    target: str
    request_timeout: float
    process_timeout: float
    prefix: str  # the run's mark in what it creates (a replay writes its own instead)

    @classmethod
    def of(cls, settings: Any, target: str, prefix: str) -> HarRun:
        return cls(
            settings.report_dir,
            settings.seed,
            target,
            settings.request_timeout,
            settings.process_timeout,
            prefix,
        )


def keep(record: TestRecord, origins: list[Entry], run: HarRun) -> None:
    """At a test's end: the HAR of each of its findings; what it created stays among `origins`
    (a later test's finding may use it); its other exchanges are let go."""
    write_hars(record, origins, run)
    origins.extend(e for e in record.exchanges if trail.created(e))
    del origins[:-ORIGINS_KEPT]
    record.exchanges.clear()


def clear(report_dir: Path) -> None:
    """Remove the exchanges an earlier run wrote into this report folder."""
    for old in (report_dir / FOLDER).glob("*.har"):
        old.unlink(missing_ok=True)


def write_hars(record: TestRecord, origins: list[Entry], run: HarRun) -> None:
    """Give each failed finding of the test its ID and write the exchanges that led to it: its
    test's from where the finding's case began, after those of fixtures it used the work of."""
    alike: Counter[str] = Counter()
    for traced in record.traced:
        window = record.exchanges[traced.start : traced.end]
        if not window:
            continue
        # A polling loop thinned first: its polls ask the same, and where values came from is
        # sought for each request kept (a loop of 300 polls cost seconds for each poll).
        polled, polled_at = thinned(window)
        before = places.needed(polled, origins)
        entries, kept_at = thinned(before + polled)
        check = traced.check.rebased(_placed(traced.start, len(before), polled_at, kept_at))
        base = finding_id(traced, entries, check, run.seed, record.nodeid)
        alike[base] += 1
        finding = traced.finding
        finding.id = base if alike[base] == 1 else f"{base}-{alike[base]}"
        finding.har = f"{FOLDER}/{finding.id}.har"
        har = har_of(finding, entries, check, run, record.nodeid)
        (run.report_dir / FOLDER).mkdir(parents=True, exist_ok=True)
        text = redact.text(json.dumps(har, indent=1, ensure_ascii=False))
        (run.report_dir / finding.har).write_text(text + "\n", encoding="utf-8")


def _placed(
    start: int, before: int, polled_at: Callable[[int], int], kept_at: Callable[[int], int]
) -> Callable[[int], int]:
    """Where an exchange of the test (its index) is among a finding's entries: past its window's
    start, thinned, after the `before` entries it needed, thinned again."""
    return lambda index: kept_at(before + polled_at(index - start))


def thinned(entries: list[Entry]) -> tuple[list[Entry], Callable[[int], int]]:
    """A polling loop as its first and last polls: the last kept says how many were left out
    between and how long they took (`_poll`: skipped, seconds). Answers the entries kept and
    where each entry's index went (a poll left out: to its loop's last)."""
    kept: list[Entry] = []
    where: list[int] = []
    for run in _loops(entries):
        if len(run) > 2:
            where += [len(kept)] + [len(kept) + 1] * (len(run) - 1)
            last = run[-1]
            kept += [run[0], replace(last, poll={**(last.poll or {}), **_left_out(run[1:-1])})]
        else:
            where += range(len(kept), len(kept) + len(run))
            kept += run
    return kept, lambda index: where[index] if 0 <= index < len(where) else index


def _loops(entries: list[Entry]) -> list[list[Entry]]:
    """The entries in order, those of one polling loop side by side in one list."""
    runs: list[list[Entry]] = []
    for entry in entries:
        loop = (entry.poll or {}).get("loop")
        if runs and loop and (runs[-1][-1].poll or {}).get("loop") == loop:
            runs[-1].append(entry)
        else:
            runs.append([entry])
    return runs


def _left_out(skipped: list[Entry]) -> dict[str, Any]:
    last = skipped[-1]
    ended = last.started.timestamp() + last.seconds
    return {"skipped": len(skipped), "seconds": round(ended - skipped[0].started.timestamp(), 3)}


def main_entry(check: checks.Check, entries: list[Entry]) -> int:
    """The index (in `entries`) of the exchange the finding's check looks at (its last)."""
    index = check.looks_at()
    index = len(entries) - 1 if index is None else index
    return min(max(index, 0), len(entries) - 1)


def finding_id(
    traced: Traced, entries: list[Entry], check: checks.Check, seed: int, nodeid: str
) -> str:
    entry = entries[main_entry(check, entries)]
    operation = operation_label(entry.method, httpx.URL(entry.url).path)
    kind = check.label()
    expected = without_varying(traced.finding.expected)
    key = f"{seed}|{traced.finding.requirement}|{operation}|{kind}|{nodeid}|{expected}"
    return f"{traced.finding.requirement}-{hashlib.sha256(key.encode()).hexdigest()[:8]}"


def har_of(
    finding: Finding, entries: list[Entry], check: checks.Check, run: HarRun, nodeid: str
) -> dict[str, Any]:
    return {
        "log": {
            "version": "1.2",
            "creator": CREATOR,
            "pages": [],
            "entries": [
                _entry(e, places.provenance(entries, i), entries) for i, e in enumerate(entries)
            ],
            "_finding": {
                "id": finding.id,
                "requirement": finding.requirement,
                "verdict": finding.verdict,
                "expected": finding.expected,
                "actual": finding.actual,
                "seed": run.seed,
                "test": nodeid,
                "target": run.target,
                "prefix": run.prefix,
                "check": check.as_json(),
                "bounds": {
                    "request_timeout": run.request_timeout,
                    "process_timeout": run.process_timeout,
                },
            },
        }
    }


def log_of(entries: list[Entry]) -> dict[str, Any]:
    """Exchanges as a HAR 1.2 document of their own, without a finding (the audit proxy's
    recording): each entry as a finding's HAR writes it, without provenance."""
    found = [_entry(e, [], entries) for e in entries]
    return {"log": {"version": "1.2", "creator": CREATOR, "pages": [], "entries": found}}


def _entry(e: Entry, provenance: list[dict[str, Any]], entries: list[Entry]) -> dict[str, Any]:
    url = httpx.URL(e.url)
    milliseconds = round(e.seconds * 1000, 1)
    found: dict[str, Any] = {
        "startedDateTime": e.started.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "time": milliseconds,
        "request": {
            "method": e.method,
            "url": str(url),
            "httpVersion": "HTTP/1.1",
            "cookies": [],
            "headers": _headers(e.request_headers),
            "queryString": [{"name": k, "value": v} for k, v in url.params.multi_items()],
            "headersSize": -1,
            "bodySize": len(e.request_body or b""),
        },
        "response": {
            "status": e.status or 0,
            "statusText": "",
            "httpVersion": "HTTP/1.1",
            "cookies": [],
            "headers": _headers(e.response_headers),
            "content": _content(bytes(e.response_body), e.response_headers),
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": len(e.response_body),
        },
        "cache": {},
        "timings": {"send": 0, "wait": milliseconds, "receive": 0},
        "_credential": credential(e.request_headers),
        "_provenance": provenance,
    }
    if e.request_body:
        post = _content(e.request_body, e.request_headers)
        found["request"]["postData"] = {k: v for k, v in post.items() if k != "size"}
    if e.stream is not None:
        found["_stream"] = e.stream
    if e.fault:
        found["_fault"] = e.fault
    during = [{"entry": i, "events": n} for i, n in _relative(e.during, entries)]
    if during:
        found["_during"] = during
    if e.poll is not None:
        found["_poll"] = e.poll
    return found


def _relative(during: list[tuple[Entry, int]], entries: list[Entry]) -> list[tuple[int, int]]:
    """The open streams of `during` by their index in `entries` (others dropped)."""
    index = {id(e): i for i, e in enumerate(entries)}
    return [(index[id(e)], n) for e, n in during if id(e) in index]


def _headers(values: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": k, "value": v} for k, v in redact.headers(values).items()]


def _content(body: bytes, headers: dict[str, str]) -> dict[str, Any]:
    mime = {k.lower(): v for k, v in headers.items()}.get("content-type", "")
    try:
        return {"size": len(body), "mimeType": mime, "text": body.decode("utf-8")}
    except UnicodeDecodeError:
        encoded = base64.b64encode(body).decode("ascii")
        return {"size": len(body), "mimeType": mime, "text": encoded, "encoding": "base64"}


def credential(headers: dict[str, str]) -> str:
    """Whose credential a request carried, never the credential: main, alt, none, or its kind."""
    sent = {k.lower(): v for k, v in headers.items()}.get("authorization")
    if sent is None:
        return "none"
    scheme, _, value = sent.partition(" ")
    variable = redact.variable_of(value.strip())
    if variable:
        return {"ASSISTANT_API_TOKEN": "main", "ASSISTANT_API_ALT_TOKEN": "alt"}.get(variable, "?")
    if scheme.lower() == "bearer" and redact.is_secret(value.strip()):
        return "secret"
    return scheme.lower() if value.strip() or scheme.lower() != "bearer" else "empty-bearer"


# --- reading them back ----------------------------------------------------------------------------


@dataclass
class Recorded:
    """One finding's HAR."""

    path: Path
    log: dict[str, Any]

    @property
    def finding(self) -> dict[str, Any]:
        found: dict[str, Any] = self.log["_finding"]
        return found

    @property
    def entries(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.log["entries"]
        return found

    @property
    def check(self) -> checks.Check:
        """The finding's check, read back into its class."""
        return checks.from_words(self.finding["check"])


def recorded_findings(report_dir: Path) -> dict[str, Recorded]:
    """The findings of a report folder that have exchanges, by ID."""
    found = {}
    for path in sorted((report_dir / FOLDER).glob("*.har")):
        log = json.loads(path.read_text(encoding="utf-8"))["log"]
        found[log["_finding"]["id"]] = Recorded(path, log)
    return found
