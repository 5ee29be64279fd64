"""What the proxy keeps of one exchange as it passes (audit/proxy.py), within its bounds: each
body up to BODY_LIMIT bytes (suite/http/trail.py's), all bodies together up to the proxy's budget;
a body past either is passed on whole but kept cut, and marked so (`_truncated`: `request`,
`response` or both, with the whole size beside it): what was not kept is not judged. A gzip or
deflate body is kept as it reads (HAR keeps bodies decoded), inflated no further than the room
left; another encoding is kept as sent and not judged.

A stream's events are counted as they pass, so that how it stopped is said as the suite's reader
says it (suite/http/sse.py): the server ended it, the client stopped reading (after the run's last
event, past the grace a server has to end it: `still open ... after its last event`), or the
proxy's deadline cut it.
"""

from __future__ import annotations

import codecs
import re
import time
import zlib
from dataclasses import dataclass, field
from typing import Any

from assistant_conformance.audit.capture import NO_CREDENTIAL, Credential
from assistant_conformance.suite.evidence import har
from assistant_conformance.suite.http import sse, trail

CLIENT_GONE = "the client stopped reading"
DEADLINE = "the proxy's deadline (--exchange-timeout)"
UPSTREAM_DROPPED = "the upstream closed the connection mid-body"
IN_FLIGHT = "in flight when the proxy stopped"
NOBODY = Credential(NO_CREDENTIAL)
_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass
class Budget:
    """The bytes all recorded bodies of a session may still take."""

    left: int

    def take(self, wanted: int) -> int:
        granted = max(0, min(wanted, self.left))
        self.left -= granted
        return granted


@dataclass
class _Events:
    """Counts a stream's events as its text passes, and when the run's last one came."""

    decoder: sse.SseDecoder = field(default_factory=sse.SseDecoder)
    text: Any = field(default_factory=lambda: codecs.getincrementaldecoder("utf-8")("replace"))
    pending: str = ""
    count: int = 0
    last_at: float | None = None  # when an event the run ends with passed

    def feed(self, data: bytes) -> None:
        chunk = self.pending + self.text.decode(data)
        held = chunk.endswith("\r")  # it may be the half of a CRLF
        lines = _LINE_END.split(chunk[:-1] if held else chunk)
        self.pending = lines.pop() + ("\r" if held else "")
        for line in lines:
            event = self.decoder.feed(line.removeprefix("\ufeff"))
            if event is not None:
                self.count += 1
                if event.event in sse.LAST_EVENTS:
                    self.last_at = time.monotonic()


@dataclass(eq=False)
class Recording:
    """One exchange on its way: its trail entry, filled in as bytes pass, and what the recording
    says of it beside HAR's fields (`marks`)."""

    entry: trail.Entry
    budget: Budget
    request_size: int = 0
    response_size: int = 0
    whole: bool = True
    done: bool = False
    credential: Credential = NOBODY  # whose credential the request carried, once it is over
    own_answer: har.ProxyAnswer | None = None  # the proxy's own answer, where it gave one
    in_flight: bool = False  # the proxy stopped before the exchange ended
    _inflate: Any = None
    _events: _Events | None = None

    def marks(self, principal: str) -> har.ProxyMarks:
        """What the proxy says of the entry beside HAR's fields (suite/evidence/har.py writes it):
        whose credential (`principal`), the parts kept cut with their whole sizes, its own
        answer, whether it was still in flight."""
        request_cut = self.request_size > len(self.entry.request_body or b"")
        cut = (("request",) if request_cut else ()) + (() if self.whole else ("response",))
        return har.ProxyMarks(
            principal,
            cut,
            self.own_answer,
            self.in_flight,
            self.request_size if request_cut else None,
            None if self.whole else self.response_size,
        )

    def request_chunk(self, chunk: bytes) -> None:
        self.request_size += len(chunk)
        kept = self.entry.request_body or b""
        room = self.budget.take(min(len(chunk), trail.BODY_LIMIT - len(kept)))
        self.entry.request_body = kept + chunk[:room]

    def response_start(self, status: int, headers: dict[str, str]) -> None:
        self.entry.status, self.entry.response_headers = status, headers
        lower = {k.lower(): v.lower() for k, v in headers.items()}
        encoding = lower.get("content-encoding", "identity").strip()
        if encoding in ("gzip", "x-gzip", "deflate"):
            self._inflate = zlib.decompressobj(zlib.MAX_WBITS | (16 if "gzip" in encoding else 32))
        elif encoding not in ("identity", ""):
            self.whole = False  # kept as sent: not read as what it encodes
        if "text/event-stream" in lower.get("content-type", ""):
            self._events = _Events()

    def response_chunk(self, chunk: bytes) -> None:
        self.response_size += len(chunk)
        data = chunk
        if self._inflate is not None:
            if not self.whole:
                return  # cut already: nothing more is read
            try:
                data = self._inflate.decompress(chunk, trail.BODY_LIMIT + 1)
            except zlib.error:
                self.whole, data = False, b""
        if self._events is not None:
            self._events.feed(data)
        room = self.budget.take(min(len(data), trail.BODY_LIMIT - len(self.entry.response_body)))
        self.entry.response_body += data[:room]
        self.whole = self.whole and room == len(data)

    def finish(self, closed_by_upstream: bool, cut: str | None) -> None:
        """The exchange is over: how its stream stopped, and how long it took (the upstream that
        dropped the connection mid-body did not end it: said, and not judged as ended)."""
        self.done, self.in_flight = True, cut == IN_FLIGHT
        if self._events is not None:
            why = cut or "the server ended it"
            last = self._events.last_at
            if not closed_by_upstream and last is not None and time.monotonic() - last >= sse.GRACE:
                why = sse.OPEN_AFTER_END  # the server kept it open past its run's last event
            self.entry.stream = trail.StreamEnd(self._events.count, why, closed_by_upstream)
        elif cut is not None:
            self.whole = False  # a part of an answer: not judged as the answer
            self.entry.fault = "" if cut == CLIENT_GONE else "cut"
        self.entry.ended()
