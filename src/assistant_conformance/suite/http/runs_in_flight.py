"""The suite's runs in flight on its target, bounded across the processes of a run: a request that
makes a run takes a place (`take_place`) and gives it back once its run is known to have ended;
a run left running is followed outside any test (RunLoad, RunPlace)."""

from __future__ import annotations

import contextvars
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from assistant_conformance.suite.config.run_folder import SharedCounts
from assistant_conformance.suite.http.observe import SILENT, SLOW, AnswerFault

RUNS_AT_ONCE = 2  # runs of the suite in flight on one target at once, across its processes
RUN_PLACE_WAIT = 60.0  # seconds a request waits for a place at most
FOLLOW_EVERY = 0.2  # seconds between two reads of a run followed
LOAD_FILE = "runs.json"
RUNS, MOST, OVER, LONGEST = "in flight", "most", "over the bound", "longest run ms"
HOLDING = frozenset({"pending", "running"})  # a run's statuses while it holds the target
# The operations that make a run, and the one that waits for its end.
RUN_WAIT = "POST /api/ai/threads/{thread_id}/runs/wait"
RUN_MAKERS = frozenset(f"POST /api/ai/threads/{{thread_id}}/runs{tail}" for tail in ("", "/stream"))
RUN_MAKERS |= {RUN_WAIT}
THREAD_RUNS = re.compile(r"^(?P<runs>.*/threads/[^/]+/runs)")
RUN_IN = re.compile(rb'"run_id"\s*:\s*"([^"/?#]+)"')  # a run's id in a body or a stream's data
RUN_NAMED = re.compile(r"/runs/([^/?#]+)")  # a run's id in a URL
# GET of a URL with the given headers, outside any test: the answer's status and JSON value.
Read = Callable[[str, Mapping[str, str]], tuple[int, Any]]


@dataclass
class RunLoad:
    """The suite's runs in flight on its target, counted by every process (config/run_folder.py) and
    bounded (a run queue is not endless; a wait behind the suite's runs answers when they have
    run). A request that makes a run takes a place, waiting while RUNS_AT_ONCE are out (at most
    RUN_PLACE_WAIT s, then counted over the bound), and gives it back once its run is known to
    have ended (a wait answered, a stream read to its end), not when its test does; a run left
    running is followed by GET of its status outside any test, judging nothing, for at most
    --process-timeout."""

    counts: SharedCounts
    at_once: int = RUNS_AT_ONCE
    follow_for: float = 30.0  # seconds a run left running is followed at most (--process-timeout)
    patience: float = RUN_PLACE_WAIT  # seconds a request waits for a place at most
    wait: float = 0.05  # seconds between two looks at the places
    stopped: bool = False  # the run is over: its followers stop, their counts are gone

    def take(self) -> int:
        """A place for a run about to be made; the suite's runs in flight with it, it included."""

        def place(counts: dict[str, int]) -> int | None:
            if counts.get(RUNS, 0) >= self.at_once and time.monotonic() < until:
                return None
            counts[RUNS] = counts.get(RUNS, 0) + 1
            counts[MOST] = max(counts.get(MOST, 0), counts[RUNS])
            if counts[RUNS] > self.at_once:
                counts[OVER] = counts.get(OVER, 0) + 1
            return counts[RUNS]

        until = time.monotonic() + self.patience
        while (taken := self.counts.change(place)) is None:
            time.sleep(self.wait)
        return taken

    def give(self, held: float | None = None) -> None:
        """A run's place back; `held`: the seconds a run known to have ended held it."""
        if self.stopped:
            return

        def back(counts: dict[str, int]) -> None:
            counts[RUNS] = max(0, counts.get(RUNS, 0) - 1)
            if held is not None:
                counts[LONGEST] = max(counts.get(LONGEST, 0), round(held * 1000))

        self.counts.change(back)

    def in_flight(self) -> int:  # the suite's runs in flight now
        return self.counts.get(RUNS)

    def longest_run(self) -> float:
        """The longest a run of the suite held its place before it was seen to end, seconds."""
        return self.counts.get(LONGEST) / 1000

    def summary(self) -> dict[str, int]:
        """For the report: the most runs in flight at once, and those that went over the bound."""
        return {"most": self.counts.get(MOST), "over": self.counts.get(OVER)}

    def end(self) -> dict[str, int]:
        """The run is over: its followers stop (their counts are gone); the summary."""
        self.stopped = True
        return self.summary()

    def follow(self, place: RunPlace, url: str) -> None:
        """Give `place` back once the run at `url` (or its thread's runs) no longer runs: in a
        thread of an empty context, said so (no test's scope: nothing it reads is recorded)."""
        empty = contextvars.Context()
        threading.Thread(target=empty.run, args=(self._follow, place, url), daemon=True).start()

    def _follow(self, place: RunPlace, url: str) -> None:
        until, ended = time.monotonic() + self.follow_for, False
        while place.read is not None and time.monotonic() < until and not self.stopped:
            try:  # a new thread: no test's scope, nothing recorded or judged
                status, value = place.read(url, place.headers)
            except BaseException:  # no answer: its end cannot be seen
                break
            if not still_runs(status, value):
                ended = 200 <= status < 300 or status == 404
                break
            time.sleep(FOLLOW_EVERY)
        place.give(ended)


def still_runs(status: int, value: Any) -> bool:
    """Whether a 2xx answer about a run (or a thread's runs) says one still runs."""
    listed = value if isinstance(value, list) else [value]
    holding = any(isinstance(run, dict) and run.get("status") in HOLDING for run in listed)
    return 200 <= status < 300 and holding


@dataclass
class RunPlace:
    """A request's place among the suite's runs in flight (none for one that makes no run): given
    back once, when its run is known to have ended (see RunLoad)."""

    runs: RunLoad | None
    operation: str = ""
    url: str = ""  # the request that made the run
    headers: Mapping[str, str] = field(default_factory=dict)  # its credential, for a follower
    read: Read | None = None
    with_it: int = 0  # the suite's runs in flight when it was taken, this one included
    taken: float = field(default_factory=time.monotonic)
    _given: bool = False
    _followed: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def ahead(self) -> int:
        """The suite's runs in flight before this one, at most the bound's others."""
        return min(max(0, self.with_it - 1), (self.runs.at_once - 1) if self.runs else 0)

    @property
    def longest_run(self) -> float:
        return self.runs.longest_run() if self.runs is not None else 0.0

    def give(self, ended: bool = False) -> None:
        """The place back (once); `ended`: the run was seen to end (its time measured)."""
        with self._lock:
            if self.runs is None or self._given:
                return
            self._given = True
        self.runs.give(time.monotonic() - self.taken if ended else None)

    def answered(self, status: int, headers: Mapping[str, str], body: bytes | None) -> None:
        """A whole answer: no run made (not 2xx), a run ended (a wait's), or one left running."""
        if not 200 <= status < 300 or self.operation == RUN_WAIT:
            self.give(ended=200 <= status < 300)
        else:
            self.left_running(headers, body or b"")

    def closed(self, by_server: bool, headers: Mapping[str, str], body: bytes | None) -> None:
        """A stream's end: the run's, where the server closed it; else its run is followed."""
        if by_server:
            self.give(ended=True)
        else:
            self.left_running(headers, body or b"")

    def left_running(self, headers: Mapping[str, str] | None = None, body: bytes = b"") -> None:
        """Its run may still run (no answer, a stream left, a background run): followed, by its
        id where the answer names it (Content-Location, a `run_id`), else by its thread's runs."""
        with self._lock:
            if self.runs is None or self._given or self._followed:
                return
            self._followed = True
        runs = THREAD_RUNS.match(self.url)
        if runs is None:  # (not a run's path: nothing to follow)
            return self.give()
        where = {k.lower(): v for k, v in (headers or {}).items()}
        named = RUN_NAMED.search(where.get("content-location", where.get("location", "")))
        found = named[1] if named else None
        if found is None and body and (match := RUN_IN.search(body[:65536])):
            found = match.group(1).decode("utf-8", "replace")
        by_id = f"{runs['runs']}/{found}" if found not in (None, "stream", "wait") else ""
        self.runs.follow(self, by_id or f"{runs['runs']}?limit=1000&offset=0")

    def delayed(self, fault: AnswerFault, waits_for_run: bool) -> AnswerFault:
        """A wait for a run's end that ran out of its deadline while other runs of the suite were
        in flight: the suite's own load may explain it (the fault says so; it is not judged)."""
        if not waits_for_run or fault.kind not in (SLOW, SILENT) or self.runs is None:
            return fault
        others = max(self.with_it, self.runs.in_flight()) - 1
        if others > 0:
            fault.loaded = (
                f"{others} other run(s) of the suite were in flight on the target while it waited "
                f"(at most {self.runs.at_once} at once; {self.ahead} ahead of it, which its "
                "deadline covered): its answer waited behind the suite's own load"
            )
        return fault


def take_place(
    runs: RunLoad | None, operation: str, url: str, headers: Mapping[str, str], read: Read
) -> RunPlace:
    """A place for the run a request of `operation` to `url` makes, if it makes one (waits for
    it: see RunLoad); `headers` and `read` let a follower read its run's status."""
    if runs is None or operation not in RUN_MAKERS:
        return RunPlace(None)
    credential = {k: v for k, v in headers.items() if k.lower() == "authorization"}
    return RunPlace(runs, operation, url, credential, read, with_it=runs.take())
