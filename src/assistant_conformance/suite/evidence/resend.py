"""A finding's exchanges sent again, in order (suite/evidence/replay.py's sending): the new
answers' values where the old answers' were (`_provenance`), streams read as far as the originals
were and requests sent while they flow (`_during`), polling loops polled by the same words
(`_poll`). What cannot be sent as it was stops it, and says why (unreplayed.py: NotReplayed).
"""

from __future__ import annotations

import base64
import contextvars
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Protocol, cast

import httpx

from assistant_conformance.suite.evidence import places, unreplayed
from assistant_conformance.suite.evidence.har import Recorded
from assistant_conformance.suite.flows import POLL_INTERVAL
from assistant_conformance.suite.http import running_test, trail
from assistant_conformance.suite.http.observe import AnswerFault, Overdue
from assistant_conformance.suite.http.sse import read_stream
from assistant_conformance.suite.http.target import Target
from assistant_conformance.suite.judging import checks
from assistant_conformance.suite.safety.guard import NotOwned, Stopped
from assistant_conformance.suite.safety.ledger import ALT, MAIN
from assistant_conformance.suite.safety.session import SafetySession

DROPPED_HEADERS = frozenset(
    {
        "host",
        "content-length",
        "authorization",
        "connection",
        "accept-encoding",
        "cookie",
        "transfer-encoding",
        "user-agent",
    }
)


class Sender(Protocol):
    """What sends: the replay's target, its safety session, a client per principal."""

    target: Target
    safety: SafetySession

    @property
    def tokens(self) -> dict[str, str | None]: ...

    def client(self, principal: str) -> httpx.Client: ...


@dataclass
class Resend:
    """One finding's exchanges, sent again in order (see the module docstring)."""

    sender: Sender
    recorded: Recorded
    process_timeout: float
    polls_within: float | None
    made_before: dict[str, str]  # what the reported run created: the replay cannot own it
    got: dict[int, trail.Entry] = field(default_factory=dict)
    renamed: dict[str, str] = field(default_factory=dict)  # an old answer's value → the new one
    readers: dict[int, tuple[threading.Thread, trail.Entry | None]] = field(default_factory=dict)
    stopped: tuple[int, str] | None = None  # the first exchange not sent as it was, and why

    def go(self) -> list[trail.Entry]:
        entries, index = self.recorded.entries, 0
        sent: list[trail.Entry] = []
        with running_test.following(sent):
            try:
                while index < len(entries):
                    self.wait_for_streams(index)
                    index = self.step(index)
            except unreplayed.NotReplayed as why:  # what follows would not be the finding's
                self.stopped = (index, str(why))
            finally:
                for number in list(self.readers):
                    self.finish(number)
        missing = trail.Entry("GET", "", {}, None, fault="not sent")
        return [self.got.get(i, missing) for i in range(len(entries))]

    # --- streams the original read while it sent more -----------------------------------------

    def wait_for_streams(self, index: int) -> None:
        """Before a request the original sent while streams flowed: as many of their events;
        a stream the original no longer read by then is finished first."""
        during = self.recorded.during(index)
        for number in [n for n in self.readers if n not in during]:
            self.finish(number)
        limit = time.monotonic() + self.sender.safety.policy.deadline
        for number, events in during.items():
            reader = self.readers.get(number)
            while reader and reader[0].is_alive() and self.events_of(number) < events:
                if time.monotonic() > limit:
                    break
                time.sleep(0.01)

    def events_of(self, number: int) -> int:
        entry = self.got.get(number)
        return entry.events if entry is not None else 0

    def finish(self, number: int) -> None:
        thread, _ = self.readers.pop(number)
        thread.join(self.process_timeout)

    # --- one exchange (or one polling loop) ---------------------------------------------------

    def step(self, index: int) -> int:
        entries = self.recorded.entries
        entry = entries[index].exchange
        loop = entry.poll
        if loop is not None:
            end = index
            while end + 1 < len(entries) and _loop_of(entries[end + 1].exchange) == loop.loop:
                end += 1
            answer = self.poll(index, loop)
            for number in range(index, end + 1):
                self.got[number] = answer
            return end + 1
        if entry.stream is not None:
            self.stream(index)
        else:
            self.got[index] = self.send(index)
            if entry.method != "GET":  # what a write made: its new ids
                self.align(entry, self.got[index])
        return index + 1

    def align(self, old: trail.Entry, new: trail.Entry) -> None:
        """The strings the old answer gave, as the new one gives them at the same places."""
        given = dict(places.leaves(checks.body_of(new)))
        for path, value in places.leaves(checks.body_of(old)):
            now = given.get(path)
            if now and now != value and len(value) >= places.SHORTEST:
                self.renamed.setdefault(value, now)

    def poll(self, index: int, loop: trail.Poll) -> trail.Entry:
        deadline = time.monotonic() + (self.polls_within or float(loop.within))
        until = self.check(cast(checks.Check, loop.until))  # read back into its class (har.py)
        while True:
            answer = self.send(index)
            if checks.holds(until, [answer]) or time.monotonic() >= deadline:
                break
            time.sleep(POLL_INTERVAL)
        agree = loop.agree or trail.Agreement("", 0.0, 0)
        said = checks.value_at(checks.body_of(answer), agree.key)
        done = not checks.holds(until, [answer]) or (agree.was is not None and said == agree.was)
        for _ in range(0 if done else agree.tries):
            time.sleep(agree.apart)
            again = self.send(index)
            said = [checks.value_at(checks.body_of(a), agree.key) for a in (answer, again)]
            answer = again
            if said[0] == said[1]:
                break
        return answer

    def send(self, index: int) -> trail.Entry:
        method, url, headers, body, principal = self.request(index)
        client = self.sender.client(principal)
        holder: list[trail.Entry] = []
        with running_test.following(holder):
            try:
                client.request(method, url, headers=headers, content=body)
            except (NotOwned, Stopped, Overdue) as refused:
                raise unreplayed.NotReplayed(f"exchange {index}: {refused}") from None
            except httpx.LocalProtocolError as exc:  # the HTTP client would not send it
                raise unreplayed.unsendable(index, exc) from None
            except (AnswerFault, httpx.HTTPError) as exc:  # the entry keeps the fault
                if not holder:
                    raise unreplayed.NotReplayed(f"exchange {index}: {exc}") from None
        return _keep(holder)

    def stream(self, index: int) -> None:
        recorded = self.recorded.entries[index].exchange.stream
        method, url, headers, body, principal = self.request(index)
        client = self.sender.client(principal)
        cut = recorded.cut if recorded is not None else None
        max_events = recorded.events if recorded is not None and cut == "max_events" else None
        stopped_by_test = cut == "the test stopped reading"
        deadline = self.sender.safety.policy.deadline if stopped_by_test else self.process_timeout
        holder: list[trail.Entry] = []
        refused: list[BaseException] = []

        def read() -> None:
            # the entry keeps what came, or the fault; a stream that got no answer says why
            with running_test.following(holder):
                try:
                    read_stream(
                        client,
                        method,
                        url,
                        deadline=deadline,
                        max_events=max_events,
                        headers=headers,
                        content=body,
                    )
                except (AnswerFault, httpx.HTTPError, NotOwned, Stopped, Overdue) as exc:
                    refused.append(exc)
            if holder:
                self.got[index] = holder[0]

        context = contextvars.copy_context()
        thread = threading.Thread(target=context.run, args=(read,), daemon=True)
        thread.start()
        while not holder and thread.is_alive():
            time.sleep(0.005)
        if refused and isinstance(refused[0], httpx.LocalProtocolError):
            raise unreplayed.unsendable(index, refused[0])
        if not holder and refused:
            raise unreplayed.NotReplayed(f"exchange {index}: {refused[0]}")
        if holder:
            self.got[index] = holder[0]
        later = range(index + 1, len(self.recorded.entries))
        if any(index in self.recorded.during(number) for number in later):
            self.readers[index] = (thread, holder[0] if holder else None)
        else:
            thread.join(deadline + 5)

    # --- the request, with the new values where the old answers' were -------------------------

    def request(self, index: int) -> tuple[str, str, dict[str, str], bytes | None, str]:
        recorded = self.recorded.entries[index]
        request = recorded.exchange
        url = httpx.URL(self.rebase(request.url))
        headers = {
            name: value
            for name, value in request.request_headers.items()
            if name.lower() not in DROPPED_HEADERS
        }
        body = request.request_body
        principal, authorization = self.credential(recorded.credential or "")
        if authorization is not None:
            headers["Authorization"] = authorization
        for given in recorded.provenance:
            number, at = given.entry, given.at
            value = self.value(number, at)
            if value is None:
                sending = f"{request.method} {url.path}"
                raise unreplayed.value_not_given(
                    index, sending, given.slot, (number, at), self.got.get(number)
                )
            url, headers, body = places.put(given.slot, value, url, headers, body)
            old = places.place_value(self.recorded.entries[number].exchange, at)
            if old and old != value and len(old) >= places.SHORTEST:
                self.renamed[old] = value
        url, body = self.renaming(url, body)
        prefix = self.recorded.finding.prefix
        if prefix and body is not None:
            body = body.replace(prefix.encode(), self.sender.safety.ledger.run_prefix.encode())
        outgoing = trail.Entry(request.method, str(url), headers, body)
        unreplayed.refuse_old(index, outgoing, self.made_before, self.sender.safety.guard.seen)
        return request.method, str(url), headers, body, principal

    def renaming(self, url: httpx.URL, body: bytes | None) -> tuple[httpx.URL, bytes | None]:
        """Every value an old answer gave, as the new answer gives it, wherever else it is
        written (a list of ids in a query, an id inside a string)."""
        text = str(url)
        for old, new in self.renamed.items():
            text = text.replace(old, new)
            body = body.replace(old.encode(), new.encode()) if body is not None else None
        return httpx.URL(text), body

    def check(self, check: checks.Check) -> checks.Check:
        """A check with the new answers' values where it names the old ones."""
        text = json.dumps(check.as_json())
        prefix = self.recorded.finding.prefix
        now = self.sender.safety.ledger.run_prefix
        for old, new in {**self.renamed, **({prefix: now} if prefix else {})}.items():
            text = text.replace(json.dumps(old)[1:-1], json.dumps(new)[1:-1])
        return checks.from_words(json.loads(text))

    def rebase(self, url: str) -> str:
        old = self.recorded.finding.target.rstrip("/")
        if old and url.startswith(old):
            return self.sender.target.base_url.rstrip("/") + url[len(old) :]
        parsed = httpx.URL(url)
        return self.sender.target.base_url.rstrip("/") + parsed.raw_path.decode("ascii")

    def credential(self, kind: str) -> tuple[str, str | None]:
        """The principal whose client sends it, and its Authorization header (None: none)."""
        if kind in ("main", "alt"):
            principal = MAIN if kind == "main" else ALT
            token = self.sender.tokens.get(principal)
            if not token:
                alt = f"an exchange was sent with the {kind} token: give --{kind}-token"
                raise unreplayed.NotReplayed(alt if kind == "alt" else "an exchange needs --token")
            return principal, f"Bearer {token}"
        made_up = {
            "none": None,
            "empty-bearer": "Bearer ",
            "basic": "Basic " + base64.b64encode(b"conformance:not-a-password").decode(),
            "bearer": "Bearer conformance-not-a-token",
            "?": "Bearer conformance-not-a-token",
        }
        return MAIN, made_up.get(kind, "Bearer conformance-not-a-token")  # secret: provenance

    def value(self, number: int, at: str) -> str | None:
        entry = self.got.get(number)
        if entry is None:
            return None
        return places.place_value(entry, at)


def _keep(holder: list[trail.Entry]) -> trail.Entry:
    return holder[-1]


def _loop_of(entry: trail.Entry) -> str | None:
    return entry.poll.loop if entry.poll is not None else None
