"""What a replay (suite/evidence/replay.py) cannot send again as it was, and why: it is said, never
judged.

A write the guard refuses (a resource the replay does not own), a value an earlier answer gave
that the new answer does not give, an identifier of something the reported run created (its
ledger, in the report folder) in an exchange the finding did not keep, an exchange that got no
answer at all, a credential not given, a request the HTTP client will not send as it was (an
empty bearer, `Bearer `: an illegal header value to it). The replay stops at the first; a check
that reads only earlier exchanges is judged, any other is `not replayed: <why>` (NotReplayed).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from urllib.parse import unquote

import httpx

from assistant_conformance.suite.evidence import places
from assistant_conformance.suite.evidence.har import Recorded
from assistant_conformance.suite.http import trail
from assistant_conformance.suite.judging import checks
from assistant_conformance.suite.safety.ledger import LEDGER_DIR, read_ledger
from assistant_conformance.suite.safety.removal import kind_of


class NotReplayed(Exception):
    """The exchanges could not be sent again as they were: a credential missing, a write the guard
    refuses, a value or a resource of the reported run the replay cannot make its own."""


def made_by_run(recorded: Recorded) -> dict[str, str]:
    """What the reported run created, by identifier (its kind): its ledger, in the report folder
    beside the exchanges. Empty when the folder kept no ledger."""
    prefix = recorded.finding.prefix
    path = Path(recorded.path).parent.parent / LEDGER_DIR / f"{prefix}.jsonl"
    if not prefix or not path.is_file():
        return {}
    made = {}
    for record in read_ledger(path):
        where = (record.get("delete") or {}).get("path") or ""
        if record.get("event") == "created" and where:
            made[unquote(where.rstrip("/").rsplit("/", 1)[-1])] = kind_of(where)
    return {made_id: kind for made_id, kind in made.items() if len(made_id) >= places.SHORTEST}


def refuse_old(
    index: int, sending: trail.Entry, made_before: Mapping[str, str], seen: Collection[str]
) -> None:
    """A request naming what the reported run created, where no exchange the finding kept made
    it (it was made before them), would reach nothing of the replay's: not sent. A value the
    target has answered the replay (`seen`) is the replay's too (a target may give it again)."""
    for slot, value in places.slots(sending):
        if value in made_before and value not in seen:
            raise NotReplayed(
                f"exchange {index} ({sending.method} {httpx.URL(sending.url).path}): its "
                f"{slot} names the {made_before[value]} {value} the reported run made "
                "before the exchanges this finding kept; the replay cannot make its own"
            )


def unsendable(index: int, exc: Exception) -> NotReplayed:
    """Request `index` cannot be sent as it was: the HTTP client refuses it (`exc`)."""
    return NotReplayed(
        f"exchange {index} cannot be sent as it was: the HTTP client refuses it ({exc})"
    )


def value_not_given(
    index: int, sending: str, slot: str, origin: tuple[int, str], answer: trail.Entry | None
) -> NotReplayed:
    """Request `index` (`sending`: its method and path) takes the value of its `slot` from an
    earlier answer (`origin`: its exchange and place) that the new answer does not give."""
    if answer is None or answer.status is None:
        status = f"no answer: {answer.fault}" if answer is not None and answer.fault else "none"
    else:
        status = f"HTTP {answer.status}"
    return NotReplayed(
        f"exchange {index} ({sending}): its {slot} came from exchange {origin[0]}'s answer "
        f"({origin[1]}), which the new answer ({status}) does not give"
    )


def judgeable(check: checks.Check, stopped: tuple[int, str] | None, got: Collection[int]) -> None:
    """A check is judged only on exchanges sent as they were (NotReplayed: why not)."""
    read_entries = check.reads()
    if stopped is not None and any(i >= stopped[0] for i in read_entries):
        raise NotReplayed(stopped[1])
    unsent = [i for i in read_entries if i not in got]
    if unsent:
        raise NotReplayed(f"exchange {unsent[0]} got no answer to judge")
