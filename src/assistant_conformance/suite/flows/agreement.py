"""RUN-STREAM-AGREES: the run read after its stream ended agrees with what the stream told."""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx

from assistant_conformance.suite.flows import AGREE_APART, in_order, json_of, settled
from assistant_conformance.suite.flows.runs import UNTIL_RUN_ENDED, run_status, runs_url
from assistant_conformance.suite.http.sse import SseEvent
from assistant_conformance.suite.judging import findings
from assistant_conformance.suite.judging.checks import TERMINAL_RUN

# A queue-backed server may publish a stream's end a moment before it stores the run's status:
# the run read after the end is read again until terminal, for at most this long.
SETTLE = 1.0


@dataclass
class Agreements:
    """RUN-STREAM-AGREES over every run a test read a stream of to its end: the run read after
    the end (terminal within SETTLE, then until its status stays) is terminal, errs exactly when
    the stream told of an error, and is the run streamed. A race shows as some reads
    disagreeing: the finding says how many."""

    api: httpx.Client
    thread_id: str
    seen: list[tuple[str, httpx.Response]] = field(default_factory=list)  # (what was wrong, read)

    def sample(self, run_id: str, events: list[SseEvent]) -> httpx.Response:
        """Read the run after its stream's end until its status stays (two reads agree,
        AGREE_APART apart) and note whether it agrees; answer the last read."""
        read, statuses, stayed = settled(
            lambda: self.api.get(runs_url(self.thread_id, run_id)),
            UNTIL_RUN_ENDED,
            "status",
            SETTLE,
        )
        wrong = disagreement(read, self.thread_id, run_id, events)
        if not stayed and not wrong:
            wrong = f"the status never read the same twice ({in_order(statuses)})"
        elif wrong and len(set(statuses)) > 1:
            wrong += f" (statuses read: {in_order(statuses)})"
        self.seen.append((wrong, read))
        return read

    def judge(self) -> None:
        if not self.seen:
            return
        wrong = [(why, read) for why, read in self.seen if why]
        first = f"; first: {wrong[0][0]}" if wrong else ""
        findings.expect(
            "RUN-STREAM-AGREES",
            not wrong,
            f"each run read after its stream ended (terminal within {SETTLE:g} s, read again "
            f"{AGREE_APART:g} s apart until its status stays) agrees with the stream",
            f"{len(self.seen) - len(wrong)} of {len(self.seen)} reads after the end agreed{first}",
            wrong[0][1] if wrong else None,
        )


def disagreement(read: httpx.Response, thread_id: str, run_id: str, events: list[SseEvent]) -> str:
    """How the run read after its stream ended disagrees with what the stream told ("" if not)."""
    body = json_of(read)
    status = run_status(read)
    if status not in TERMINAL_RUN:
        return (
            f"status {status!r} (HTTP {read.status_code}), not terminal, {SETTLE:g} s after the end"
        )
    said_error = any(e.event == "error" for e in events)
    if said_error == (status == "success"):
        told = "an error event" if said_error else "no error event"
        return f"status {status} after a stream with {told}"
    ids = {k: body.get(k) for k in ("run_id", "thread_id")} if isinstance(body, dict) else {}
    if ids != {"run_id": run_id, "thread_id": thread_id}:
        return f"{ids}, not run {run_id} of thread {thread_id} as streamed"
    return ""
