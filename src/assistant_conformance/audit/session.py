"""The proxy's session: what it recorded and judged, off the loop that serves its clients.

Each exchange, once over (or given up), is handed over a queue to one worker thread that adds it
to the capture, judges it (audit/rules.py: with what came before it, at a cost that does not grow
with them) and prints each finding not held: what the proxy adds to an exchange's latency holds
no judging. Past MAX_EXCHANGES exchanges are passed on but no longer recorded (counted).

`finish` records the exchanges still in flight (the proxy stopped before they ended: marked
`_in_flight`, not judged beyond what came), waits for the worker to judge all it was handed, and
writes the recording (recorded.har, redacted: `Authorization` masked, each token named
`credential-1`, `credential-2`, ... in `_principal`) and the reports.
"""

from __future__ import annotations

import contextvars
import gc
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path

from assistant_conformance.audit import outcome
from assistant_conformance.audit.capture import BEARER_CREDENTIAL, NO_CREDENTIAL, Capture
from assistant_conformance.audit.judge import finding_line
from assistant_conformance.audit.recorder import IN_FLIGHT, Recording
from assistant_conformance.audit.rules import Judging
from assistant_conformance.report import redact
from assistant_conformance.report.model import PASS, Run
from assistant_conformance.suite.evidence import har

HAR_FILE = "recorded.har"
MAX_EXCHANGES = 100_000
FROZEN_EVERY = 1_000  # exchanges recorded between two freezes of the collector (each is cheap)


class Session:
    def __init__(
        self,
        report_dir: Path,
        base_path: str | None,
        say: Callable[[str], None],
        secrets: redact.Secrets,
    ) -> None:
        self.report_dir, self.say, self.secrets = report_dir, say, secrets
        self.judging = Judging(Capture(str(report_dir / HAR_FILE)), base_path)
        self.marks: list[har.ProxyMarks] = []  # what the proxy says of each recorded exchange
        self.labels: dict[str, str] = {}
        self.unrecorded = 0
        self.handed = 0  # exchanges handed to the worker (the loop's count)
        self.in_flight: set[Recording] = set()
        self.started = time.monotonic()
        self._queue: queue.SimpleQueue[Recording | None] = queue.SimpleQueue()
        context = contextvars.copy_context()
        self._worker = threading.Thread(
            target=context.run, args=(self._work,), daemon=True, name="proxy-judging"
        )
        self._worker.start()

    # --- on the serving loop: cheap ---------------------------------------------------------

    def begin(self, recording: Recording) -> None:
        self.in_flight.add(recording)

    def hand_over(self, recording: Recording) -> None:
        """The exchange is over: to the worker (once), or counted past the cap."""
        self.in_flight.discard(recording)
        if self.handed >= MAX_EXCHANGES:
            self.unrecorded += 1
            return
        self.handed += 1
        self._queue.put(recording)

    # --- on the worker ----------------------------------------------------------------------

    def _work(self) -> None:
        with redact.scope(self.secrets):
            while (recording := self._queue.get()) is not None:
                self._record(recording)

    def _record(self, recording: Recording) -> None:
        """Recorded, then judged with what came before it."""
        entry, credential = recording.entry, recording.credential
        self.judging.capture.add(entry, credential, recording.whole)
        label = self._label(credential.kind, credential.identity)
        self.marks.append(recording.marks(label))
        if len(self.marks) % FROZEN_EVERY == 0:
            gc.freeze()  # what is recorded is kept to the end: no collection need walk it again
        try:
            found = self.judging.next()
        except Exception as exc:  # the traffic passes whatever its judging does
            self.say(redact.text(f"not judged: {entry.method} {entry.url}: {exc!r}"))
            return
        for finding in found:
            if finding.verdict != PASS:
                self.say(redact.text(finding_line(finding)))

    def _label(self, kind: str, identity: str | None) -> str:
        if kind != BEARER_CREDENTIAL or identity is None:
            return NO_CREDENTIAL if kind == NO_CREDENTIAL else "invalid"
        return self.labels.setdefault(identity, f"credential-{len(self.labels) + 1}")

    # --- the end ----------------------------------------------------------------------------

    def finish(self, deadline: float) -> Run:
        """Record what is still in flight, judge what was handed over, write the recording and the
        reports; the session's verdicts. Once the proxy serves no more."""
        for recording in list(self.in_flight):
            recording.finish(False, IN_FLIGHT)
            self.hand_over(recording)
        self._queue.put(None)
        self._worker.join()
        with redact.scope(self.secrets):
            self._write_har()
            run = outcome.run_of_findings(
                [self.judging],
                invocation="assistant-conformance proxy",
                report_dir=self.report_dir,
                started=self.started,
                deadline=deadline,
            )
            run.info["audit"]["unrecorded"] = self.unrecorded
            outcome.write_reports(run, self.report_dir)
        return run

    def _write_har(self) -> None:
        """One entry at a time, each on its line (suite/evidence/har.py)."""
        self.report_dir.mkdir(parents=True, exist_ok=True)
        capture = self.judging.capture
        marked = zip(capture.entries, self.marks, strict=True)
        har.write_recording(Path(capture.name), marked)
