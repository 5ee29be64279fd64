"""The exchanges of a HAR file (or of a proxy session) as the suite's trail holds them
(suite/http/trail.py), so that they are judged with the words a test and a replay judge by
(suite/judging/checks.py), and what HAR adds to them: whose credential each request carried,
whether each body was kept whole, and, in the suite's own exchanges (reports/exchanges/ID.har),
the finding's declared check. harfile.py reads a file into one; the proxy builds one as it records
(audit/session.py).

Whether a token was refused is known from the answers, never from the token: a 401 refuses it
where the token was refused on every request it carried before (one 401 on one route of a token
another route took is that route's answer, and an `insufficient_scope` 401 names the route, not
the token). Credentials are never kept beyond the process: each one found is registered with the
redaction of the run (report/redact.py), so no report shows it.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from assistant_conformance.report import redact
from assistant_conformance.suite.evidence.har import HarFinding
from assistant_conformance.suite.http import trail

NO_CREDENTIAL, INVALID_CREDENTIAL, BEARER_CREDENTIAL = "none", "invalid", "bearer"
# The suite's own `_credential` kinds (suite/evidence/har.py): the run's tokens, and those made up
# to be refused (an unknown token, Basic, an empty bearer).
RUN_TOKENS = frozenset({"main", "alt"})
MADE_UP = frozenset({"bearer", "basic", "empty-bearer", "?"})
SLACK = timedelta(milliseconds=1)  # HAR times are in milliseconds


@dataclass(frozen=True)
class Credential:
    kind: str  # none, invalid (not a bearer token at all), bearer
    identity: str | None = None  # tells two bearer credentials apart; never printed
    what: str = ""  # for failure text


@dataclass
class _Answers:
    """What one token's answers say of it: its 401s (in order, each with the earliest end among
    them so far), and the first request it was taken on (a 2xx or a 403: the server knew it)."""

    refused: list[int] = field(default_factory=list)
    soonest: list[tuple[datetime, int]] = field(default_factory=list)
    taken: int | None = None


@dataclass(frozen=True)
class Refusal:
    """A token refused before a request: its first 401 the request came after, and how many."""

    entry: int
    count: int


@dataclass
class Capture:
    """The exchanges of one file (or of one proxy session), in order."""

    name: str  # the file, as findings point at it
    entries: list[trail.Entry] = field(default_factory=list)
    credentials: list[Credential] = field(default_factory=list)
    whole: list[bool] = field(default_factory=list)  # its response body was kept whole
    finding: HarFinding | None = None  # log._finding of the suite's own HARs
    _tokens: dict[str, _Answers] = field(default_factory=dict)

    def add(self, entry: trail.Entry, credential: Credential, whole: bool = True) -> int:
        self.entries.append(entry)
        self.credentials.append(credential)
        self.whole.append(whole)
        index = len(self.entries) - 1
        identity = credential.identity
        if identity is None or identity in RUN_TOKENS or entry.status is None:
            return index
        answers = self._tokens.setdefault(identity, _Answers())
        if entry.status == 401 and not _names_the_route(entry):
            end = self.end(index)
            earlier = answers.soonest[-1] if answers.soonest else (end, index)
            answers.refused.append(index)
            answers.soonest.append(min(earlier, (end, index)))
        elif 200 <= entry.status < 300 or entry.status == 403:
            answers.taken = index if answers.taken is None else min(answers.taken, index)
        return index

    def end(self, index: int) -> datetime:
        """When the exchange's answer was whole (or given up)."""
        entry = self.entries[index]
        return entry.started + timedelta(seconds=entry.seconds)

    def after(self, earlier: int, later: int) -> bool:
        """Whether `later` was sent once `earlier` had its answer (a millisecond's slack: HAR
        times are in milliseconds)."""
        return earlier < later and self.entries[later].started + SLACK >= self.end(earlier)

    def refused_before(self, index: int) -> Refusal | None:
        """The token of this request refused (401) on every request it carried before this one
        was sent, at least once (the suite's own tokens, `main` and `alt`, are the run's: valid,
        whatever one answer said)."""
        answers = self._tokens.get(self.credentials[index].identity or "")
        if answers is None or (answers.taken is not None and answers.taken < index):
            return None
        count = bisect_left(answers.refused, index)
        if not count:
            return None
        end, first = answers.soonest[count - 1]
        if self.entries[index].started + SLACK < end:
            return None  # each 401 before it was still on its way when it was sent
        return Refusal(first, count)

    def valid_credential(self, index: int) -> bool:
        """A bearer credential the server did not refuse before this request."""
        return (
            self.credentials[index].kind == BEARER_CREDENTIAL and self.refused_before(index) is None
        )


def _names_the_route(entry: trail.Entry) -> bool:
    """A 401 whose challenge says the token lacks the scope of this route (RFC 6750 §3.1)."""
    challenge = {k.lower(): v for k, v in entry.response_headers.items()}.get("www-authenticate")
    return "insufficient_scope" in (challenge or "").lower()


def credential_of(headers: dict[str, str], declared: str | None = None) -> Credential:
    """Whose credential a request carried: the suite's own word for it where the file has one
    (`_principal` of the proxy's HARs, `_credential` of the suite's), else its Authorization."""
    if declared is not None and (made := _declared(declared)) is not None:
        return made
    sent = {k.lower(): v for k, v in headers.items()}.get("authorization")
    if sent is None:
        return Credential(NO_CREDENTIAL, None, "no Authorization header")
    if sent.strip() == redact.MASK:  # a file redacted as the suite writes them: whose, unknown
        return Credential(BEARER_CREDENTIAL, None, "a bearer credential (redacted in the file)")
    scheme, _, value = sent.strip().partition(" ")
    if scheme.lower() != "bearer":
        return Credential(INVALID_CREDENTIAL, None, f"a {scheme or 'bare'} credential, not Bearer")
    if not value.strip():
        return Credential(INVALID_CREDENTIAL, None, "an empty bearer credential")
    redact.register(value.strip())
    return Credential(BEARER_CREDENTIAL, value.strip(), "a bearer token")


def _declared(word: str) -> Credential | None:
    if word == NO_CREDENTIAL:
        return Credential(NO_CREDENTIAL, None, "no Authorization header")
    if word in RUN_TOKENS or word.startswith("credential-"):
        return Credential(BEARER_CREDENTIAL, word, f"bearer token {word}")
    if word in MADE_UP or word.startswith(INVALID_CREDENTIAL):
        return Credential(INVALID_CREDENTIAL, None, f"a credential made to be refused ({word})")
    return None  # `secret` and the like: the header, if the file kept it, says more
