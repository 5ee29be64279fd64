"""A server-sent events reader that follows the WHATWG standard (HTML §9.2.6) and never hangs.

Written here because httpx-sse departs from the standard: after the first `id:` it dispatches an
empty event on every extra blank line, which would look like duplicated events on resume. Like
the door for JSON bodies, it records an event whose `data:` is JSON only by Python's lenient
reading (NaN, Infinity) as an observation for the judge (suite/judging/answer_charges.py).
"""

from __future__ import annotations

import contextvars
import dataclasses
import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from assistant_conformance.contract.openapi import operation_label
from assistant_conformance.suite.http import observe, running_test, strictjson, trail
from assistant_conformance.suite.http.exchange import of_response
from assistant_conformance.suite.http.observe import AnswerFault


@dataclass(frozen=True)
class SseEvent:
    event: str
    data: str
    id: str  # the last event ID in force when the event was dispatched ("" if none yet)
    own_id: bool  # whether this event carried an `id:` field itself
    retry: int | None = None

    def json(self) -> Any:
        return json.loads(self.data)


@dataclass
class SseDecoder:
    """Turns lines into events, exactly as the standard's event stream interpretation."""

    last_id: str = ""
    retry: int | None = None
    _event: str = ""
    _data: list[str] = field(default_factory=list)
    _own_id: bool = False

    def feed(self, line: str) -> SseEvent | None:
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id" and "\0" not in value:
            self.last_id, self._own_id = value, True
        elif name == "retry" and value.isdigit() and value.isascii():
            self.retry = int(value)
        return None

    def _dispatch(self) -> SseEvent | None:
        data, event, own_id = self._data, self._event, self._own_id
        self._data, self._event, self._own_id = [], "", False
        if not data:
            return None
        return SseEvent(event or "message", "\n".join(data), self.last_id, own_id, self.retry)


def iter_lines(chunks: Iterable[str]) -> Iterator[str]:
    """Split text into lines on CRLF, LF or CR, also when a CRLF straddles two chunks."""
    buffer = ""
    pending_cr = False
    for chunk in chunks:
        if pending_cr and chunk.startswith("\n"):
            chunk = chunk[1:]
        pending_cr = False
        buffer += chunk
        start = 0
        i = 0
        while i < len(buffer):
            ch = buffer[i]
            if ch in "\r\n":
                yield buffer[start:i]
                if ch == "\r":
                    if i + 1 < len(buffer):
                        if buffer[i + 1] == "\n":
                            i += 1
                    else:
                        pending_cr = True
                start = i + 1
            i += 1
        buffer = buffer[start:]
    # An unterminated last line is not a complete field: the standard discards it.


def parse_events(text: str) -> list[SseEvent]:
    """All events of a complete stream body."""
    decoder = SseDecoder()
    return [e for line in iter_lines([text.removeprefix("\ufeff")]) if (e := decoder.feed(line))]


@dataclass
class StreamRead:
    """What a bounded read of a stream saw."""

    status: int
    content_type: str
    events: list[SseEvent]
    closed_by_server: bool  # the server ended the stream
    cut: str | None  # why the suite stopped reading: "max_events", "deadline", "read-timeout"
    exchange: trail.Entry
    entry: trail.Entry | None = None  # its exchange on the trail

    @property
    def ids(self) -> list[str]:
        return [e.id for e in self.events]


LAST_EVENTS = frozenset({"end", "complete"})  # LangGraph's last event; the deployed server's
GRACE = 2.0  # seconds a stream may stay open after its run ended before the suite stops reading
QUIET = 1.0  # seconds without an event after which the suite asks whether the run has ended
OPEN_AFTER_END = f"still open {GRACE:g} s after its last event"
OPEN_AFTER_RUN = f"still open {GRACE:g} s after its run ended (GET of the run)"

# Whether the run a stream tells of has ended, from its events so far and its answer's headers.
RunEnded = Callable[[list[SseEvent], dict[str, str]], bool]


def observe_data(
    events: list[SseEvent], label: str, exchange: trail.Entry | None, entry: trail.Entry | None
) -> None:
    """Record the first event whose data is JSON only by Python's lenient reading."""
    for event in events:
        if (wrong := strictjson.problem(event.data)) is not None:
            what = f"{label}: event {event.id or '(no id)'} {event.event}: {wrong}"
            seen = observe.Observation(observe.NOT_STRICT_JSON, what, exchange, f"{label}|{wrong}")
            running_test.seen(dataclasses.replace(seen, entry=entry))
            return


def read_stream(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    deadline: float,
    max_events: int | None = None,
    headers: dict[str, str] | None = None,
    json_body: Any = None,
    content: bytes | None = None,
    run_ended: RunEnded | None = None,
) -> StreamRead:
    """Read a stream until the server ends it, `max_events` arrived, or `deadline` seconds pass.

    Once the run has ended (its last event arrived, or `run_ended` says so after QUIET seconds
    without an event) the stream gets GRACE seconds to end, not the rest of the deadline.
    Reading stops early by closing the connection, which is how a client "drops" a stream.
    """
    events: list[SseEvent] = []
    cut: str | None = None
    closed = False
    started = time.monotonic()
    ends_by, why = deadline, "deadline"
    last_seen = asked = started
    kwargs: dict[str, Any] = {"headers": {"Accept": "text/event-stream", **(headers or {})}}
    if json_body is not None:
        kwargs["json"] = json_body
    if content is not None:  # a body sent again as it was (suite/evidence/replay.py)
        kwargs["content"] = content
    with client.stream(method, url, **kwargs) as response:
        entry = response.extensions.get(trail.ENTRY)
        decoder = SseDecoder()
        first = True
        try:
            for line in iter_lines(response.iter_text()):
                if first:
                    line, first = line.removeprefix("\ufeff"), False
                event = decoder.feed(line)
                now = time.monotonic()
                if event is not None:
                    events.append(event)
                    trail.reading(entry, len(events))
                    last_seen = now
                    if max_events is not None and len(events) >= max_events:
                        cut = "max_events"
                        break
                    if event.event in LAST_EVENTS and why == "deadline":
                        ends_by, why = now - started + GRACE, OPEN_AFTER_END
                elif run_ended and why == "deadline" and now - max(last_seen, asked) >= QUIET:
                    asked = now
                    if run_ended(events, dict(response.headers)):
                        ends_by, why = now - started + GRACE, OPEN_AFTER_RUN
                if now - started > ends_by:
                    cut = why
                    break
            else:
                closed = True
        except httpx.ReadTimeout:
            cut = "read-timeout"
        except httpx.RemoteProtocolError:
            closed = True  # the server dropped the connection mid-body: the stream ended
        except AnswerFault as fault:  # past the door's cap
            cut = fault.what
        text = "\n".join(f"id: {e.id}\nevent: {e.event}\ndata: {e.data}\n" for e in events[:5])
        exchange = of_response(response, body_text=text)
        trail.stopped(entry, len(events), cut or "the server ended it", closed)
    observe_data(events, operation_label(method, httpx.URL(url).path), exchange, entry)
    return StreamRead(
        status=response.status_code,
        content_type=response.headers.get("content-type", ""),
        events=events,
        closed_by_server=closed,
        cut=cut,
        exchange=exchange,
        entry=entry,
    )


@dataclass
class LiveStream:
    """A stream read on a background thread, so that a test can act (cancel) while it flows."""

    client: httpx.Client
    method: str
    url: str
    deadline: float
    headers: dict[str, str] = field(default_factory=dict)
    json_body: Any = None
    events: list[SseEvent] = field(default_factory=list)
    status: int | None = None
    content_type: str = ""
    response_headers: dict[str, str] = field(default_factory=dict)
    closed_by_server: bool = False
    exchange: trail.Entry | None = None
    error: str | None = None
    entry: trail.Entry | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _done: threading.Event = field(default_factory=threading.Event)

    def start(self) -> LiveStream:
        # In the test's context: what the reader observes belongs to the test that started it.
        context = contextvars.copy_context()
        threading.Thread(target=context.run, args=(self._read,), daemon=True).start()
        return self

    def _read(self) -> None:
        started = time.monotonic()
        headers = {"Accept": "text/event-stream", **self.headers}
        try:
            with self.client.stream(
                self.method, self.url, headers=headers, json=self.json_body
            ) as response:
                self.status, self.response_headers = response.status_code, dict(response.headers)
                self.content_type = response.headers.get("content-type", "")
                self.exchange = of_response(response, body_text="")
                self.exchange.note = "(streamed body)"
                self.entry = response.extensions.get(trail.ENTRY)
                decoder = SseDecoder()
                try:
                    for i, line in enumerate(iter_lines(response.iter_text())):
                        event = decoder.feed(line.removeprefix("\ufeff") if i == 0 else line)
                        if event is not None:
                            self.events.append(event)
                            trail.reading(self.entry, len(self.events))
                        if self._stop.is_set() or time.monotonic() - started > self.deadline:
                            break
                    else:
                        self.closed_by_server = True
                except httpx.RemoteProtocolError:
                    self.closed_by_server = True
                why = "the server ended it" if self.closed_by_server else "the test stopped reading"
                trail.stopped(self.entry, len(self.events), why, self.closed_by_server)
        except httpx.HTTPError as exc:  # a read timeout included: the stream did not end
            self.error = type(exc).__name__
        except AnswerFault as fault:  # no answer at all: the thread ends, the test reads why
            self.error = fault.what
        finally:
            observe_data(
                self.events,
                operation_label(self.method, httpx.URL(self.url).path),
                self.exchange,
                self.entry,
            )
            self._done.set()

    def wait_for(self, count: int, timeout: float) -> bool:
        """Wait until `count` events arrived (True) or the stream ended or `timeout` passed."""
        limit = time.monotonic() + timeout
        while len(self.events) < count and not self._done.is_set() and time.monotonic() < limit:
            time.sleep(0.01)
        return len(self.events) >= count

    def finish(self, timeout: float) -> bool:
        """Wait up to `timeout` for the server to end the stream, then stop; True if it ended."""
        self._done.wait(timeout)
        ended = self._done.is_set() and self.closed_by_server
        self._stop.set()
        return ended
