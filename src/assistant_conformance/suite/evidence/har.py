"""HAR 1.2, written and read back by this module alone: a finding's exchanges
(`reports/exchanges/FINDING-ID.har`, opens in a browser's dev tools), the audit proxy's recording
(`recorded.har`), and any HAR file the audit (audit/harfile.py: its bounds) and the replay read.
An exchange is the trail's Entry (suite/http/trail.py) both ways; HAR's own fields are as HAR
has them, and what the project adds beside them (custom fields start with `_`, as HAR allows) is
a typed, frozen value each (StreamEnd, Poll and Agreement on the Entry; Provenance, ProxyMarks,
HarFinding here), read back into the same values (selftests/suite/evidence/test_har_round_trip.py):

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
  the target, and the check a replay judges it by (`entry` indexes `log.entries`);
- the proxy's (audit/recorder.py): `_principal` (`credential-1`, ..., never the credential),
  `_truncated` (the parts kept cut, their whole sizes in HAR's size fields), `_proxy` (its own
  answer), `_in_flight`.

Entries are read one at a time and let go of as they are read (`entries_of`): the audit reads
files of 100,000 exchanges.

A finding's ID is stable: the requirement, the operation, the check and the test at the seed,
hashed; a second alike in the same test gets `-2`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
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
INFLATED_LIMIT = 4 * trail.BODY_LIMIT  # a compressed body is read back up to this much


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
            kept += [run[0], _left_out(last, run[1:-1])]
        else:
            where += range(len(kept), len(kept) + len(run))
            kept += run
    return kept, lambda index: where[index] if 0 <= index < len(where) else index


def _loops(entries: list[Entry]) -> list[list[Entry]]:
    """The entries in order, those of one polling loop side by side in one list."""
    runs: list[list[Entry]] = []
    for entry in entries:
        loop = entry.poll.loop if entry.poll is not None else None
        if runs and loop and _loop_of(runs[-1][-1]) == loop:
            runs[-1].append(entry)
        else:
            runs.append([entry])
    return runs


def _loop_of(entry: Entry) -> str | None:
    return entry.poll.loop if entry.poll is not None else None


def _left_out(last: Entry, skipped: list[Entry]) -> Entry:
    """The loop's last poll, saying how many polls were left out before it and how long they
    took."""
    ended = skipped[-1].started.timestamp() + skipped[-1].seconds
    seconds = round(ended - skipped[0].started.timestamp(), 3)
    loop = last.poll
    return replace(last, poll=loop and replace(loop, skipped=len(skipped), seconds=seconds))


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
    told = HarFinding(
        finding.id,
        finding.requirement,
        finding.verdict,
        finding.expected,
        finding.actual,
        run.seed,
        nodeid,
        run.target,
        run.prefix,
        check,
        run.request_timeout,
        run.process_timeout,
    )
    found = [entry_json(e, entries, _provenance(entries, i)) for i, e in enumerate(entries)]
    return {"log": {**_log_head(), "entries": found, "_finding": told.as_json()}}


def _provenance(entries: list[Entry], index: int) -> tuple[Provenance, ...]:
    return tuple(Provenance(slot, *came) for slot, came in places.provenance(entries, index))


def _log_head() -> dict[str, Any]:
    return {"version": "1.2", "creator": CREATOR, "pages": []}


# --- HAR's entries, with the project's fields -----------------------------------------------------


@dataclass(frozen=True)
class Provenance:
    """`_provenance`: the value of a request's `slot` came from the answer of entry `entry`, at
    `at` (suite/evidence/places.py's words)."""

    slot: str
    entry: int
    at: str

    def as_json(self) -> dict[str, Any]:
        return {"slot": self.slot, "from": {"entry": self.entry, "at": self.at}}


@dataclass(frozen=True)
class ProxyAnswer:
    """`_proxy`: the proxy answered itself (RFC 9209 Proxy-Status): its status and why."""

    status: int
    error: str
    details: str


@dataclass(frozen=True)
class ProxyMarks:
    """What the audit proxy adds to an entry of its recording (audit/recorder.py): whose
    credential (`_principal`: `credential-1`, ..., never the credential), which parts it kept cut
    (`_truncated`, with the whole sizes in HAR's own size fields), its own answer (`_proxy`), an
    exchange still in flight when it stopped (`_in_flight`)."""

    principal: str
    truncated: tuple[str, ...] = ()
    answer: ProxyAnswer | None = None
    in_flight: bool = False
    request_size: int | None = None  # the whole request's size, where it was kept cut
    response_size: int | None = None  # the whole answer's size, where it was kept cut


@dataclass(frozen=True)
class HarEntry:
    """One entry of `log.entries` read back: the exchange as the trail held it (its stream,
    fault and polling loop; `during` naming the entries read before it), and what HAR keeps
    beside it."""

    exchange: Entry
    credential: str | None = None  # `_credential`: whose credential, in the suite's words
    provenance: tuple[Provenance, ...] = ()
    whole: bool = True  # the answer's body was kept whole
    proxy: ProxyMarks | None = None


def entry_json(
    exchange: Entry,
    entries: list[Entry],
    provenance: tuple[Provenance, ...] = (),
    marks: ProxyMarks | None = None,
    whose: str | None = None,
) -> dict[str, Any]:
    """An exchange as a HAR 1.2 entry, with the project's fields; `entries`: those of its
    document (an open stream of `during` is named by its place among them); `whose`: its
    `_credential` where it is known already (read back: the headers hold it masked)."""
    url = httpx.URL(exchange.url)
    milliseconds = round(exchange.seconds * 1000, 1)
    started = exchange.started.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    found: dict[str, Any] = {
        "startedDateTime": started,
        "time": milliseconds,
        "request": {
            "method": exchange.method,
            "url": str(url),
            "httpVersion": "HTTP/1.1",
            "cookies": [],
            "headers": _headers(exchange.request_headers),
            "queryString": [{"name": k, "value": v} for k, v in url.params.multi_items()],
            "headersSize": -1,
            "bodySize": len(exchange.request_body or b""),
        },
        "response": {
            "status": exchange.status or 0,
            "statusText": "",
            "httpVersion": "HTTP/1.1",
            "cookies": [],
            "headers": _headers(exchange.response_headers),
            "content": _content(bytes(exchange.response_body), exchange.response_headers),
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": len(exchange.response_body),
        },
        "cache": {},
        "timings": {"send": 0, "wait": milliseconds, "receive": 0},
        "_credential": credential(exchange.request_headers) if whose is None else whose,
        "_provenance": [p.as_json() for p in provenance],
    }
    if exchange.request_body:
        post = _content(exchange.request_body, exchange.request_headers)
        found["request"]["postData"] = {k: v for k, v in post.items() if k != "size"}
    if exchange.stream is not None:
        found["_stream"] = asdict(exchange.stream)
    if exchange.fault:
        found["_fault"] = exchange.fault
    during = [{"entry": i, "events": n} for i, n in _relative(exchange.during, entries)]
    if during:
        found["_during"] = during
    if exchange.poll is not None:
        found["_poll"] = _poll_json(exchange.poll)
    if marks is not None:
        _mark(found, marks)
    return found


def rewritten(read: HarEntry, entries: list[Entry]) -> dict[str, Any]:
    """An entry read back, written again as it was read."""
    return entry_json(read.exchange, entries, read.provenance, read.proxy, read.credential)


def _poll_json(poll: trail.Poll) -> dict[str, Any]:
    found: dict[str, Any] = {
        "until": poll.until.as_json(with_entry=False),
        "within": poll.within,
        "loop": poll.loop,
    }
    if poll.agree is not None:
        agree = poll.agree
        found["agree"] = {"key": agree.key, "apart": agree.apart, "tries": agree.tries}
        found["agree"].update({"was": agree.was} if agree.was is not None else {})
    if poll.skipped is not None:
        found.update(skipped=poll.skipped, seconds=poll.seconds)
    return found


def _mark(found: dict[str, Any], marks: ProxyMarks) -> None:
    found["_principal"] = marks.principal
    if marks.truncated:
        found["_truncated"] = list(marks.truncated)
    if marks.answer is not None:
        found["_proxy"] = asdict(marks.answer)
    if marks.in_flight:
        found["_in_flight"] = True
    if marks.request_size is not None:  # the sizes of the whole, as sent
        found["request"]["bodySize"] = marks.request_size
    if marks.response_size is not None:
        found["response"]["content"]["size"] = marks.response_size
        found["response"]["bodySize"] = marks.response_size


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


def write_recording(path: Path, entries: Iterable[tuple[Entry, ProxyMarks]]) -> None:
    """The proxy's recording (recorded.har): one entry at a time, each on its line, redacted."""
    head = json.dumps(_log_head())
    with path.open("w", encoding="utf-8") as file:
        file.write('{"log": ' + head[:-1] + ', "entries": [')
        for number, (entry, marks) in enumerate(entries):
            text = json.dumps(entry_json(entry, [], marks=marks), ensure_ascii=False)
            file.write(("," if number else "") + "\n" + redact.text(text))
        file.write("\n]}}\n")


# --- reading entries back ---------------------------------------------------------------------


def entries_of(log: dict[str, Any]) -> Iterator[HarEntry]:
    """The entries of a HAR log (a dict that passed har-read.schema.json, or one the suite
    wrote), each let go of as it is read: the file's entries and those read are never all held
    twice."""
    raw = log["entries"]
    raw.reverse()
    read: list[Entry] = []
    while raw:
        found = entry_of(raw.pop(), read)
        read.append(found.exchange)
        yield found


def entry_of(raw: dict[str, Any], earlier: Sequence[Entry] = ()) -> HarEntry:
    """A HAR entry as the trail holds an exchange, and what HAR keeps beside it; `earlier`: the
    entries read before it (the open streams `_during` names)."""
    request, response = raw["request"], raw["response"]
    entry = Entry(request["method"], request["url"], _named(request), None)
    entry.status = int(response["status"]) or None
    entry.response_headers = _named(response)
    marks = _marks(raw, request, response)
    cut = marks.truncated if marks is not None else _cut(raw.get("_truncated"))
    post = request.get("postData") or {}
    try:
        sent = decoded(post.get("text"), post.get("encoding")) if post else None
    except ValueError:
        sent = None
    entry.request_body = None if "request" in cut else sent
    entry.started = _moment(raw.get("startedDateTime", ""))
    entry.seconds = max(float(raw.get("time", 0)), 0.0) / 1000  # the schema bounds it
    entry.fault = str(raw.get("_fault") or "")
    entry.stream = _stream(raw.get("_stream"))
    body, whole = _body(response.get("content") or {}, entry.response_headers)
    entry.response_body = bytearray(body)
    entry.during = _during(raw.get("_during"), earlier)
    entry.poll = _poll(raw.get("_poll"))
    whole = whole and "response" not in cut and not raw.get("_in_flight")
    whose = raw.get("_credential")
    return HarEntry(
        entry,
        whose if isinstance(whose, str) else None,
        _provenance_of(raw.get("_provenance")),
        whole,
        marks,
    )


def _named(message: dict[str, Any]) -> dict[str, str]:
    """Its headers (HTTP/2's pseudo-headers, `:authority` and the like, left out)."""
    return {h["name"]: h["value"] for h in message["headers"] if not h["name"].startswith(":")}


def _cut(told: Any) -> tuple[str, ...]:
    """`_truncated`: the parts kept cut (`true`: the answer)."""
    if told is True:
        return ("response",)
    return tuple(p for p in told if isinstance(p, str)) if isinstance(told, list) else ()


def _marks(
    raw: dict[str, Any], request: dict[str, Any], response: dict[str, Any]
) -> ProxyMarks | None:
    principal = raw.get("_principal")
    if not isinstance(principal, str):
        return None
    cut = _cut(raw.get("_truncated"))
    answer: Any = raw.get("_proxy")
    try:
        own = ProxyAnswer(int(answer["status"]), str(answer["error"]), str(answer["details"]))
    except (KeyError, TypeError, ValueError):
        own = None
    content = response.get("content") or {}
    return ProxyMarks(
        principal,
        cut,
        own,
        raw.get("_in_flight") is True,
        _size(request.get("bodySize")) if "request" in cut else None,
        _size(content.get("size")) if "response" in cut else None,
    )


def _size(value: Any) -> int | None:
    return value if isinstance(value, int) and value >= 0 else None


def _stream(told: Any) -> trail.StreamEnd | None:
    """`_stream`: the suite's and the proxy's word for how a stream stopped."""
    if not isinstance(told, dict):
        return None
    events = told.get("events", 0)  # a count the schema lets be 1e300: none, then
    events = int(events) if isinstance(events, int | float) and 0 <= events < 2**31 else 0
    closed = told.get("closed_by_server")
    return trail.StreamEnd(
        events, str(told.get("cut", "")), closed if isinstance(closed, bool) else None
    )


def _during(told: Any, earlier: Sequence[Entry]) -> list[tuple[Entry, int]]:
    """`_during`: the streams still open as the request went out, among the entries before it."""
    found = []
    for item in told if isinstance(told, list) else []:
        number = item.get("entry") if isinstance(item, dict) else None
        if isinstance(number, int) and 0 <= number < len(earlier):
            found.append((earlier[number], int(item.get("events", 0))))
    return found


def _poll(told: Any) -> trail.Poll | None:
    """`_poll`: its `until` read back into its check, reading each answer of the loop."""
    if not isinstance(told, dict):
        return None
    try:
        until = checks.from_words({**told["until"], "entry": checks.LOOP_ANSWER})
        agree = told.get("agree")
        agreement = (
            None
            if agree is None
            else trail.Agreement(agree["key"], agree["apart"], agree["tries"], agree.get("was"))
        )
        return trail.Poll(
            until, told["within"], told["loop"], agreement, told.get("skipped"), told.get("seconds")
        )
    except (LookupError, TypeError, ValueError):
        return None  # a loop whose words do not read (not the suite's): not a loop


def _provenance_of(told: Any) -> tuple[Provenance, ...]:
    found = []
    for item in told if isinstance(told, list) else []:
        try:
            found.append(Provenance(item["slot"], item["from"]["entry"], item["from"]["at"]))
        except (KeyError, TypeError):
            continue
    return tuple(found)


def _moment(text: str) -> datetime:
    """When it started (a time no calendar use takes, or none at all: now, so it is judged as
    sent after all before it)."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return datetime.now(UTC)
    if not 1900 <= moment.year <= 9000:
        return datetime.now(UTC)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def decoded(text: str | None, encoding: str | None) -> bytes | None:
    """A body's bytes: base64 where `encoding` says so (ValueError: not base64)."""
    if text is None:
        return None
    if encoding == "base64":
        return base64.b64decode(text, validate=False)
    return text.encode("utf-8", "surrogatepass")


def _body(content: dict[str, Any], headers: dict[str, str]) -> tuple[bytes, bool]:
    """The decoded body HAR keeps, and whether it is whole (its size says how long it was)."""
    size = content.get("size")
    size = size if isinstance(size, int | float) else 0
    try:
        body = decoded(content.get("text"), content.get("encoding"))
    except (binascii.Error, ValueError):
        return b"", False
    if body is None:
        return b"", size <= 0 and "_file" not in content
    body, inflated = inflate(body, headers)
    return body, inflated and len(body) >= size


def inflate(body: bytes, headers: dict[str, str]) -> tuple[bytes, bool]:
    """A body some tools keep as it was sent (gzip or deflate) as it reads; False when it could
    not be read whole within INFLATED_LIMIT. HAR's own bodies are decoded: left as they are."""
    encoding = {k.lower(): v for k, v in headers.items()}.get("content-encoding", "").lower()
    if "gzip" in encoding and body[:2] == b"\x1f\x8b":
        wbits = 16 + zlib.MAX_WBITS
    elif "deflate" in encoding and body[:1] == b"\x78":
        wbits = zlib.MAX_WBITS
    else:
        return body, True
    reader = zlib.decompressobj(wbits)
    try:
        out = reader.decompress(body, INFLATED_LIMIT)
    except zlib.error:
        return body, False
    return out, reader.eof and not reader.unconsumed_tail


# --- a finding, and its file read back --------------------------------------------------------


@dataclass(frozen=True)
class HarFinding:
    """`log._finding`: the finding a HAR holds the exchanges of, the run it came from, and the
    check a replay judges it by (None: its words do not read; `kind`: the word written)."""

    id: str
    requirement: str
    verdict: str
    expected: str
    actual: str
    seed: int
    test: str
    target: str
    prefix: str
    check: checks.Check | None
    request_timeout: float = 10.0
    process_timeout: float = 60.0
    kind: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "requirement": self.requirement,
            "verdict": self.verdict,
            "expected": self.expected,
            "actual": self.actual,
            "seed": self.seed,
            "test": self.test,
            "target": self.target,
            "prefix": self.prefix,
            "check": self.check.as_json() if self.check is not None else {"kind": self.kind},
            "bounds": {
                "request_timeout": self.request_timeout,
                "process_timeout": self.process_timeout,
            },
        }

    @classmethod
    def of_json(cls, told: dict[str, Any]) -> HarFinding:
        words = told.get("check")
        words = words if isinstance(words, dict) else {}
        try:
            check: checks.Check | None = checks.from_words(words)
        except (LookupError, TypeError, ValueError):
            check = None
        bounds = told.get("bounds")
        bounds = bounds if isinstance(bounds, dict) else {}
        return cls(
            str(told.get("id", "")),
            str(told.get("requirement", "")),
            str(told.get("verdict", "")),
            str(told.get("expected") or ""),
            str(told.get("actual") or ""),
            told.get("seed", 0),
            str(told.get("test", "")),
            str(told.get("target", "")),
            str(told.get("prefix") or ""),
            check,
            bounds.get("request_timeout", 10.0),
            bounds.get("process_timeout", 60.0),
            str(words.get("kind", "")),
        )


def finding_of(log: dict[str, Any]) -> HarFinding | None:
    """A log's `_finding` (the suite's own HARs), None where it has none."""
    told = log.get("_finding")
    return HarFinding.of_json(told) if isinstance(told, dict) else None


@dataclass(frozen=True)
class Recorded:
    """One finding's HAR read back: the finding and its entries."""

    path: Path
    finding: HarFinding
    entries: tuple[HarEntry, ...]

    @property
    def check(self) -> checks.Check:
        """The finding's check, read back into its class."""
        if self.finding.check is None:
            raise ValueError(f"{self.path}: its check ({self.finding.kind}) cannot be read")
        return self.finding.check

    def during(self, index: int) -> dict[int, int]:
        """The streams open as request `index` went out (by their index), and their events."""
        at = {id(e.exchange): i for i, e in enumerate(self.entries[:index])}
        return {at[id(e)]: n for e, n in self.entries[index].exchange.during if id(e) in at}


def recorded_of(path: Path, log: dict[str, Any]) -> Recorded:
    """A finding's HAR log (as json read it) read back."""
    finding = finding_of(log)
    if finding is None:
        raise ValueError(f"{path}: no _finding")
    return Recorded(path, finding, tuple(entries_of(log)))


def recorded_findings(report_dir: Path) -> dict[str, Recorded]:
    """The findings of a report folder that have exchanges, by ID."""
    found = {}
    for path in sorted((report_dir / FOLDER).glob("*.har")):
        recorded = recorded_of(path, json.loads(path.read_text(encoding="utf-8"))["log"])
        found[recorded.finding.id] = recorded
    return found
