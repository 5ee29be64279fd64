"""What the doors saw, handed to the module that judges it (suite/judging/door_charges.py).

The doors (the transport policy, the bounded door, the guard, the event-stream reader) bound,
count and record; they judge nothing and name no requirement. What they see that may be a
finding reaches the judge in one of two ways:
- raised: an AnswerFault, when no answer was received within the run's bounds (too slow, too
  large, incomplete): the request cannot go on;
- recorded: an Observation of the test that is running (running.py: `seen`), when the answer came
  and tells something every answer of its kind must keep, whichever test got it: a JSON body that is
  not strict JSON, a 2xx JSON body declared as something else, a 401 with or without a Bearer
  challenge. Outside a test (a fixture's set-up, the clean-up) nothing collects them.

`breaking_input` marks the requests of a block as sent to break the document on purpose, so that
a fault of their answers is judged as the answer to such input.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from assistant_conformance.suite.http.exchange import Exchange

# Kinds of fault (no answer within the bounds) and of observation.
SLOW, LARGE, CUT, SILENT = "slow", "large", "cut", "silent"
NOT_STRICT_JSON = "not strict JSON"
JSON_UNDECLARED = "JSON not declared"  # a 2xx JSON object or array under another Content-Type
CHALLENGED, NOT_CHALLENGED = "401 with a challenge", "401 without a challenge"


@dataclass(frozen=True)
class Observation:
    kind: str
    what: str  # one readable line, naming the operation
    evidence: Exchange | None
    key: str = ""  # tells two observations of the same kind apart (e.g. the problem)
    entry: Any = None  # the exchange it was seen in (suite/http/trail.py), for its replay


class AnswerFault(Exception):
    """The target's answer broke a bound of the door; `what` is one readable line."""

    def __init__(self, kind: str, what: str, evidence: Exchange) -> None:
        super().__init__(what)
        self.kind = kind
        self.what = what
        self.evidence = evidence
        self.breaking: str | None = None  # the requirement named by breaking_input, if any

    @property
    def no_answer_yet(self) -> bool:
        """Nothing at all came back (a drip or a cut answer at least sent its status)."""
        return self.kind == SILENT or self.evidence.status is None


@contextmanager
def breaking_input(requirement: str) -> Iterator[None]:
    """Input that breaks the document is being sent: a fault of its answer is judged as the
    answer to such input (charged to `requirement`), not to one that follows the document."""
    try:
        yield
    except AnswerFault as fault:
        fault.breaking = fault.breaking or requirement
        raise
