"""Files, context files and chat-kit sessions (interface 4.2)."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

import httpx
import pytest

from assistant_conformance.contract.resources import LIFETIME, SHORT_LIFETIME
from assistant_conformance.report import redact
from assistant_conformance.suite.flows import SHAPE, identifier, is_success, json_of
from assistant_conformance.suite.http.policy import Policy
from assistant_conformance.suite.http.target import Target, probe
from assistant_conformance.suite.judging import findings
from assistant_conformance.suite.safety.ledger import Ledger
from assistant_conformance.suite.safety.removal import kind_of

CONTEXT_FILE = "/api/ai/contexts/file"
CHATKIT = "/api/ai/v1/chatkit/sessions"
SESSION = kind_of(CHATKIT)  # made and never removed: the run's budget counts them (ledger)
STILL_LIVING = 30.0  # seconds a session made earlier in the run must still live to be used
EXPIRY_GRACE = 3.0  # seconds past the expiry within which the secret must stop working
LONGEST_WAIT = 10.0  # seconds the expiry check waits for a secret to expire, at most


def upload(api: httpx.Client, path: str, ledger: Ledger) -> httpx.Response:
    content = f"{ledger.run_prefix}: scenario upload, café ☕\n".encode()
    return api.post(path, files={"file": (f"{ledger.run_prefix}.txt", content, "text/plain")})


@pytest.mark.req("FILE-STATUS", SHAPE)
def test_file_upload_answers_201(api: httpx.Client, ledger: Ledger) -> None:
    response = upload(api, "/api/ai/v1/file", ledger)
    findings.require_success("FILE-STATUS", response, 201)
    # The contract has no file delete; where the context-file delete removes it, the ledger does.
    ledger.track("DELETE", f"{CONTEXT_FILE}/{identifier(response)}")


@pytest.mark.req("CTX-STATUS", "CTX-DELETE-GONE", SHAPE)
def test_context_file_is_deleted_once(api: httpx.Client, ledger: Ledger) -> None:
    created = upload(api, CONTEXT_FILE, ledger)
    findings.require_success("CTX-STATUS", created, 201)
    file_id = identifier(created)
    ledger.track("DELETE", f"{CONTEXT_FILE}/{file_id}")
    findings.require_success("CTX-STATUS", api.delete(f"{CONTEXT_FILE}/{file_id}"), 200)
    again = api.delete(f"{CONTEXT_FILE}/{file_id}")
    findings.expect(
        "CTX-DELETE-GONE", not is_success(again), "a second delete: not 2xx", again, again
    )


def expiry_of(body: dict[str, Any], created: float) -> float | None:
    """When the secret expires, in local epoch seconds: from expires_after, else expires_at."""
    after = body.get("expires_after")
    if isinstance(after, int | float) and not isinstance(after, bool):
        return created + after
    at = body.get("expires_at")
    if isinstance(at, int | float) and not isinstance(at, bool):
        return at / 1000 if at > 1e11 else float(at)  # milliseconds or seconds since the epoch
    if isinstance(at, str):
        try:
            return datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def read_with(policy: Policy, target: Target, secret: str) -> httpx.Response:
    """A read any principal may make, with the secret: the one the pre-flight found answered."""
    return probe(target, policy, secret)


def new_session(api: httpx.Client, expires_after: int) -> tuple[str, float | None]:
    """Create a chat-kit session (201); answer its secret (redacted from now on) and expiry."""
    created_at = time.time()
    response = api.post(CHATKIT, json={"expires_after": expires_after})
    body = json_of(response)
    secret = body.get("client_secret") if isinstance(body, dict) else None
    if isinstance(secret, str):
        redact.register(secret)  # before anything records this response as evidence
    findings.require_success("CHATKIT-STATUS", response, 201)
    findings.require(
        SHAPE,
        isinstance(secret, str) and secret != "",
        "a string client_secret",
        response,
        response,
    )
    assert isinstance(secret, str) and isinstance(body, dict)
    expires = expiry_of(body, created_at)
    findings.expect(
        "CHATKIT-SECRET",
        expires is not None,
        "the secret's expiry (expires_at or expires_after)",
        body,
        response,
    )
    return secret, expires


@pytest.mark.req("CHATKIT-STATUS", "CHATKIT-SECRET", SHAPE)
def test_chatkit_secret_authenticates(
    api: httpx.Client, policy: Policy, target: Target, ledger: Ledger
) -> None:
    # Any live session of the run will do (the interface has no delete: none is made in vain),
    # unless the place the run keeps for CHATKIT-STATUS waits for this check's own valid create.
    kept = "CHATKIT-STATUS" in ledger.budget.waiting(SESSION)
    made = None if kept else ledger.budget.live(SESSION, STILL_LIVING)
    if made is not None and isinstance(made.answer.get("client_secret"), str):
        secret = made.answer["client_secret"]
    else:
        secret, _ = new_session(api, LIFETIME)
    read = read_with(policy, target, secret)
    what = " ".join(target.first_read[:2])
    findings.expect("CHATKIT-SECRET", is_success(read), f"{what} with the secret: 2xx", read, read)


def expiring_session(api: httpx.Client, ledger: Ledger) -> tuple[str, float | None]:
    """A session of the run that has expired or soon will (the capability probe's, asked to live
    SHORT_LIFETIME), else one made now to live that long: its secret and expiry."""
    made = ledger.budget.soonest(SESSION)
    if made is not None and isinstance(secret := made.answer.get("client_secret"), str):
        expires = made.expires_by()
        if expires is not None and expires - time.time() <= LONGEST_WAIT:
            return secret, expires
    return new_session(api, SHORT_LIFETIME)


@pytest.mark.req("CHATKIT-STATUS", "CHATKIT-SECRET", SHAPE)
@pytest.mark.after_probe
def test_chatkit_secret_stops_working_once_expired(
    api: httpx.Client, policy: Policy, target: Target, ledger: Ledger
) -> None:
    secret, expires = expiring_session(api, ledger)
    if expires is None or expires - time.time() > LONGEST_WAIT:
        pytest.skip("the target gave the session a longer life than asked: expiry not waited for")
    time.sleep(max(0.0, expires - time.time()))
    deadline = expires + EXPIRY_GRACE
    later = read_with(policy, target, secret)
    while is_success(later) and time.time() < deadline:
        time.sleep(0.2)
        later = read_with(policy, target, secret)
    findings.expect(
        "CHATKIT-SECRET",
        400 <= later.status_code < 500,
        f"the secret rejected (4xx) within {EXPIRY_GRACE:g} s of its expiry",
        later,
        later,
    )
