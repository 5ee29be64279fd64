"""What every request of the suite's clients passes: the run's guard.

It stands around every client of a principal of the run (suite/safety/guarded.py: the `api`,
`alt_api` and `anonymous_api` clients, the property layer's session, a replay's clients):
- owned data only: a write with a credential the run holds may change only what the run created
  (its path names an id the ledger lists) or name an identifier the target never answered in this
  run (an unknown id: a random UUID hits real data only by guessing one); anything else is a
  defect of the suite and is not sent (NotOwned);
- under --read-only it refuses, before sending, every such write that could change data: unless
  it only reads (search, count, history, namespaces) or names an unknown id. The test is then
  skipped ("read-only mode: ...");
- it writes what a request may create to the ledger before sending it (intent), and the request
  that deletes it as soon as the answer names its id (contract/resources.py);
- it keeps every string the target answers (identifiers it has shown exist) and registers every
  credential-named field of an answer as a secret, before anything shows it;
- several requests in a row without an answer, or the run's own token refused on request after
  request, stop the run (Stopped: the plugin ends it as a harness error) instead of failing test
  after test.
The answers reach it through the door (suite/http/answer_bounds.py), read under the run's bounds.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from assistant_conformance.contract import openapi
from assistant_conformance.report import redact
from assistant_conformance.suite.http.answer_bounds import label_of
from assistant_conformance.suite.http.observe import NotJudged

READS = frozenset({"GET", "HEAD", "OPTIONS"})
# POST operations of the contract that only read.
READ_LIKE = re.compile(r"/(?:search|count|history)$|/api/ai/store/namespaces$")
TIMEOUTS_IN_A_ROW = 3  # then the target is taken to have stopped answering
REJECTIONS_IN_A_ROW = 10  # the run's own token refused this often in a row: it is not valid


class ReadOnlyRefused(NotJudged):
    """A check would send a write under --read-only; the test is skipped before it is sent."""


class Stopped(NotJudged):
    """The run was stopped (a harness error): the test is not judged, and the plugin ends the run
    (in a pytest-xdist worker: skips the rest, for the controller to end it)."""


class NotOwned(RuntimeError):
    """A check would change data the run did not create: a defect of the suite, never sent."""


def path_ids(path: str) -> list[str] | None:
    """The identifiers in a request path of the contract; None for a path it does not have."""
    found = openapi.match_path(path)
    return list(found[1].values()) if found else None


def bearer_token(request: httpx.Request) -> str:
    """The bearer credential a request carries ("" for none, or another scheme)."""
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" else ""


@dataclass
class Guard:
    """Session-wide state shared by the suite's clients."""

    read_only: bool
    request_timeout: float  # bounds a whole answer, first byte to last (streams: their own)
    max_response_size: int = 16 * 1024 * 1024
    seen: set[str] = field(default_factory=set)  # strings the target answered (ids among them)
    breaches: list[str] = field(default_factory=list)  # writes a read-only run saw succeed
    stopped: str = ""  # why the run was stopped, for the report
    active: bool = True  # off while the session cleans up
    # The status the target answers the run's token now (the preflight request); None: no answer.
    probe: Callable[[], int | None] | None = None
    _timeouts: list[str] = field(default_factory=list)  # operations unanswered, in a row
    _rejections: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def refusal(self, request: httpx.Request, owned: set[str]) -> str | None:
        """Why the run must not send this request; None when it may. A write with a credential
        of the run may change only what the run created (`owned`: a path naming one of its ids)
        or name identifiers the target never showed (unknown ids); under --read-only, only the
        latter, and no create."""
        if request.method in READS or not redact.is_secret(bearer_token(request)):
            return None  # a read; or no valid credential: a check that the target refuses it
        path = request.url.path
        if READ_LIKE.search(path):
            return None
        ids = path_ids(path) or []
        if any(i not in self.seen for i in ids):
            return None  # names an identifier that does not exist, as far as the run has seen
        if self.read_only:
            return f"read-only mode: the check would send {request.method} {path}"
        if not ids or any(i in owned for i in ids):
            return None  # a create, or a change to what the run created
        return (
            f"owned data only: the check would send {request.method} {path}, on data the run "
            "did not create"
        )

    def observe(self, request: httpx.Request, status: int, own: bool) -> None:
        """An answer `status` came to `request` (`own`: sent with the principal's own token)."""
        with self._lock:
            self._timeouts.clear()
            if own and status == 401:
                self._rejections += 1
            elif own:
                self._rejections = 0
            rejected = self._rejections >= REJECTIONS_IN_A_ROW
            if rejected:
                self._rejections = 0
        # Refused again and again: if the preflight request is refused now too, the token is dead
        # (expired, revoked); else only some operations refuse it, which the tests report.
        if rejected and self.active and (self.probe is None or self.probe() in (401, 403)):
            self.stop(
                f"target {_origin(request)} refused the run's token on {REJECTIONS_IN_A_ROW} "
                "requests in a row (HTTP 401), and now refuses it everywhere: it expired or was "
                "revoked; check --token"
            )
        write = request.method not in READS and not READ_LIKE.search(request.url.path)
        if self.read_only and own and write and 200 <= status < 300:
            self.breaches.append(f"{request.method} {request.url.path} -> {status}")

    def timed_out(self, request: httpx.Request) -> None:
        """Requests in a row without an answer, on more than one operation: the target hangs
        (one operation that hangs costs each of its tests the request timeout, and no more)."""
        with self._lock:
            self._timeouts.append(label_of(request))
            recent = self._timeouts[-TIMEOUTS_IN_A_ROW:]
            stop = len(recent) == TIMEOUTS_IN_A_ROW and len(set(recent)) > 1
        if stop and self.active:
            self.stop(
                f"target {_origin(request)} stopped answering: {TIMEOUTS_IN_A_ROW} requests in a "
                f"row, on {len(set(recent))} operations, got no answer within "
                f"{self.request_timeout:g} s (--request-timeout)"
            )

    def stop(self, reason: str) -> None:
        self.stopped = redact.text(reason)
        raise Stopped(f"not judged: harness error: {self.stopped}")

    def remember(self, value: Any) -> None:
        """Keep every string of a JSON answer: identifiers the target has shown exist."""
        pending = [value]
        while pending:
            item = pending.pop()
            if isinstance(item, str) and len(item) <= 256:
                self.seen.add(item)
            elif isinstance(item, dict):
                pending.extend(item.values())
            elif isinstance(item, list):
                pending.extend(item)


def _origin(request: httpx.Request) -> str:
    return f"{request.url.scheme}://{request.url.netloc.decode('ascii', 'replace')}"
