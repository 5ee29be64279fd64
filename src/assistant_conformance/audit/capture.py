"""A HAR file's exchanges as the suite's trail holds them (suite/http/trail.py), so that they are
judged with the words a test and a replay judge by (suite/judging/checks.py), and what HAR adds to
them: whose credential each request carried, whether each body was kept whole, and, in the suite's
own exchanges (reports/exchanges/ID.har), the finding's declared check. The proxy builds one as it
records (audit/proxy.py).

A file that is not HAR 1.2 (report/schemas/har.schema.json), not JSON or cut short is refused in
one line (NotAHar). Credentials are never kept beyond the process: each one found is registered
with the redaction of the run (report/redact.py), so no report shows it.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from assistant_conformance.report import redact
from assistant_conformance.suite.evidence import places
from assistant_conformance.suite.http import trail

NO_CREDENTIAL, INVALID_CREDENTIAL, BEARER_CREDENTIAL = "none", "invalid", "bearer"
# The suite's own `_credential` kinds (suite/evidence/har.py): the run's tokens, and those made up
# to be refused (an unknown token, Basic, an empty bearer).
RUN_TOKENS = frozenset({"main", "alt"})
MADE_UP = frozenset({"bearer", "basic", "empty-bearer", "?"})
INFLATED_LIMIT = 4 * trail.BODY_LIMIT  # a compressed body is read back up to this much


class NotAHar(ValueError):
    """A file the audit cannot read as HAR 1.2; the message is one line."""


@dataclass(frozen=True)
class Credential:
    kind: str  # none, invalid (not a bearer token at all), bearer
    identity: str | None = None  # tells two bearer credentials apart; never printed
    what: str = ""  # for failure text


@dataclass
class Capture:
    """The exchanges of one file (or of one proxy session), in order."""

    name: str  # the file, as findings point at it
    entries: list[trail.Entry] = field(default_factory=list)
    credentials: list[Credential] = field(default_factory=list)
    whole: list[bool] = field(default_factory=list)  # its response body was kept whole
    finding: dict[str, Any] | None = None  # log._finding of the suite's own HARs
    _refusals: dict[str, list[int]] = field(default_factory=dict)  # identity -> its 401s

    def add(self, entry: trail.Entry, credential: Credential, whole: bool = True) -> int:
        self.entries.append(entry)
        self.credentials.append(credential)
        self.whole.append(whole)
        index = len(self.entries) - 1
        identity = credential.identity
        if entry.status == 401 and identity is not None and identity not in RUN_TOKENS:
            self._refusals.setdefault(identity, []).append(index)
        return index

    def end(self, index: int) -> datetime:
        """When the exchange's answer was whole (or given up)."""
        entry = self.entries[index]
        return entry.started + timedelta(seconds=entry.seconds)

    def after(self, earlier: int, later: int) -> bool:
        """Whether `later` was sent once `earlier` had its answer (a millisecond's slack: HAR
        times are in milliseconds)."""
        slack = timedelta(milliseconds=1)
        return earlier < later and self.entries[later].started + slack >= self.end(earlier)

    def refused_before(self, index: int) -> int | None:
        """An exchange answered 401 to the same bearer credential before this one was sent (the
        suite's own tokens, `main` and `alt`, are the run's: valid, whatever one answer said)."""
        identity = self.credentials[index].identity
        for refused in self._refusals.get(identity or "", []):
            if self.after(refused, index):
                return refused
        return None

    def valid_credential(self, index: int) -> bool:
        """A bearer credential the server did not refuse before this request."""
        return (
            self.credentials[index].kind == BEARER_CREDENTIAL and self.refused_before(index) is None
        )


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


# --- reading a file -------------------------------------------------------------------------------


@cache
def har_schema() -> dict[str, Any]:
    text = resources.files("assistant_conformance.report").joinpath("schemas/har.schema.json")
    return json.loads(text.read_text(encoding="utf-8"))


def load_har(path: Path) -> Capture:
    """A HAR file's exchanges; NotAHar (one line) for what cannot be read as HAR 1.2."""
    try:
        text = path.read_bytes().decode("utf-8").removeprefix("\ufeff")
    except OSError as exc:
        raise NotAHar(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise NotAHar(f"{path}: not a HAR file: not UTF-8 text (byte {exc.start})") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotAHar(
            f"{path}: not a HAR file: not JSON, or cut short ({exc.msg} at line {exc.lineno}, "
            f"column {exc.colno})"
        ) from None
    wrong = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(har_schema()).iter_errors(document)
    )
    if wrong is not None:
        where = "/".join(str(p) for p in wrong.absolute_path) or "the top"
        raise NotAHar(f"{path}: not a HAR 1.2 file: at {where}: {wrong.message[:200]}")
    log = document["log"]
    capture = Capture(str(path), finding=log.get("_finding"))
    for raw in log["entries"]:
        capture.add(*entry_of(raw))
    return capture


def entry_of(raw: dict[str, Any]) -> tuple[trail.Entry, Credential, bool]:
    """A HAR entry as a trail entry, whose credential it carried, and whether its answer's body
    was kept whole (a browser may keep none, the proxy keeps the first BODY_LIMIT bytes)."""
    request, response = raw["request"], raw["response"]
    entry = places.recorded_answer(raw)
    entry.status = response["status"] or None
    entry.request_headers = {h["name"]: h["value"] for h in request["headers"]
                             if not h["name"].startswith(":")}  # fmt: skip
    entry.response_headers = {h["name"]: h["value"] for h in response["headers"]
                              if not h["name"].startswith(":")}  # fmt: skip
    try:
        entry.request_body = places.body_bytes(request.get("postData"))
    except (binascii.Error, ValueError):
        entry.request_body = None
    entry.started = _moment(raw["startedDateTime"])
    entry.seconds = max(float(raw["time"]), 0.0) / 1000
    entry.fault = str(raw.get("_fault") or "")
    body, whole = _body(response["content"], entry.response_headers)
    entry.response_body = bytearray(body)
    if entry.stream is None and _is_stream(entry.response_headers):
        entry.stream = {"events": 0, "cut": "", "closed_by_server": None}  # unknown: not said
    whole = whole and not raw.get("_truncated")
    declared = raw.get("_principal") or raw.get("_credential")
    return entry, credential_of(entry.request_headers, declared), whole


def _moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return datetime.now(UTC)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _is_stream(headers: dict[str, str]) -> bool:
    content_type = {k.lower(): v for k, v in headers.items()}.get("content-type", "")
    return "text/event-stream" in content_type.lower()


def _body(content: dict[str, Any], headers: dict[str, str]) -> tuple[bytes, bool]:
    """The decoded body HAR keeps, and whether it is whole (its size says how long it was)."""
    text = content.get("text")
    if text is None:
        return b"", content.get("size", 0) <= 0
    try:
        body = base64.b64decode(text) if content.get("encoding") == "base64" else text.encode()
    except (binascii.Error, ValueError):
        return b"", False
    body, inflated = inflate(body, headers)
    return body, inflated and len(body) >= content.get("size", 0)


def inflate(body: bytes, headers: dict[str, str]) -> tuple[bytes, bool]:
    """A body some tools keep as it was sent (gzip or deflate) as it reads; False when it could
    not be read whole within INFLATED_LIMIT. HAR's own bodies are decoded: left as they are."""
    encoding = {k.lower(): v for k, v in headers.items()}.get("content-encoding", "").lower()
    if "gzip" in encoding and body[:2] == b"\x1f\x8b":
        wbits = 16 + zlib.MAX_WBITS
    elif "deflate" in encoding and body[:1] == b"\x78":
        wbits = zlib.MAX_WBITS
    else:
        return body, True
    reader = zlib.decompressobj(wbits)
    try:
        out = reader.decompress(body, INFLATED_LIMIT)
    except zlib.error:
        return body, False
    return out, reader.eof and not reader.unconsumed_tail
