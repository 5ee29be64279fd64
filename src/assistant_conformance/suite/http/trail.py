"""The trail of a test: every exchange its requests made, in order, as the doors saw them, so that a
finding can be written with the exchanges that led to it (suite/evidence/har.py) and replayed
(suite/evidence/replay.py). Entry is the suite's one exchange type: the doors' evidence of a fault,
a finding's exchange in the reports (suite/http/exchange.py), the trail's, and what HAR writes and
reads back; it is filled in as its answer comes, so it is not frozen, but what it holds beside
HTTP's own fields (its stream's end, its polling loop) is typed and frozen.

The doors append an Entry to the running test's trail as a request goes out (running_test.py:
`enter`) and fill it in as its answer comes (a stream's bytes as its reader takes them, and where
the reader stopped); outside a test nothing is kept.
Bodies are kept up to BODY_LIMIT bytes: what is needed to see and replay a finding, not a copy of
every answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from time import monotonic
from typing import Any, Protocol

BODY_LIMIT = 256 * 1024
ENTRY = "conformance_trail_entry"  # httpx response extension: the answer's Entry


class Words(Protocol):
    """A check, as its words (suite/judging/checks.py's Check): what a polling loop reads until."""

    def as_json(self, *, with_entry: bool = True) -> dict[str, Any]: ...


@dataclass(frozen=True)
class StreamEnd:
    """Where a stream's reader stopped (HAR's `_stream`): the events it took, why it stopped, and
    whether the server ended it (None: not known)."""

    events: int
    cut: str
    closed_by_server: bool | None = None


@dataclass(frozen=True)
class Agreement:
    """A polling loop's second part (`_poll.agree`): read again `apart` seconds apart, at most
    `tries` more, until two answers agree at `key`; `was`: what a settled read found before
    (None: nothing)."""

    key: str
    apart: float
    tries: int
    was: Any = None


@dataclass(frozen=True)
class Poll:
    """The polling loop a request belongs to (HAR's `_poll`): read again until the check `until`
    holds on an answer or `within` seconds pass, then per `agree`. A loop kept as its first and
    last polls says on its last how many were left out between and how long they took
    (`skipped`, `seconds`)."""

    until: Words
    within: float
    loop: str
    agree: Agreement | None = None
    skipped: int | None = None
    seconds: float | None = None


@dataclass
class Entry:
    method: str
    url: str
    request_headers: dict[str, str]
    request_body: bytes | None
    started: datetime = field(default_factory=lambda: datetime.now(UTC))
    status: int | None = None
    response_headers: dict[str, str] = field(default_factory=dict)
    response_body: bytearray = field(default_factory=bytearray)
    seconds: float = 0.0
    fault: str = ""  # the door's fault kind when no (whole) answer came
    stream: StreamEnd | None = None  # events taken by the reader, and why it stopped
    open: bool = False  # a stream still being read
    events: int = 0  # events its reader has taken so far
    during: list[tuple[Entry, int]] = field(default_factory=list)  # (open stream, its events)
    poll: Poll | None = None  # sent by a polling loop: until what, within how long
    note: str = ""  # what a report says of the answer instead of its body (suite/http/exchange.py)
    _t0: float = field(default_factory=monotonic)

    def take(self, chunk: bytes) -> None:
        """Keep the answer's bytes (up to BODY_LIMIT) as they arrive."""
        room = BODY_LIMIT - len(self.response_body)
        if room > 0:
            self.response_body += chunk[:room]

    def ended(self) -> None:
        """The answer is whole (or given up): how long it took."""
        self.seconds, self.open = monotonic() - self._t0, False


def created(entry: Entry) -> bool:
    """Whether the exchange may have made something: a write answered with a 2xx."""
    return entry.method != "GET" and entry.status is not None and 200 <= entry.status < 300


def reading(entry: Entry | None, events: int) -> None:
    """A stream reader took its `events`-th event."""
    if entry is not None:
        entry.events, entry.open = events, True


def stopped(entry: Entry | None, events: int, cut: str, closed_by_server: bool) -> None:
    """A stream reader's account of where it stopped reading (replay stops there too)."""
    if entry is not None:
        entry.stream = StreamEnd(events, cut, closed_by_server)
        entry.events = events
        entry.ended()


def cap(body: bytes | None) -> bytes | None:
    return None if body is None else body[:BODY_LIMIT]
