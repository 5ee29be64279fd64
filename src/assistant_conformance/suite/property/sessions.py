"""The property layer's sessions through the door (suite/door.py): the run's own, and the one
schemathesis makes for its auth probes."""

from __future__ import annotations

import requests
import schemathesis.transport.requests as schemathesis_requests

from assistant_conformance.suite import door, transport
from assistant_conformance.suite.settings import SuiteSettings

_PROBE_SESSION = schemathesis_requests.SameHostRedirectsSession


def through_the_door(session: requests.Session, settings: SuiteSettings) -> None:
    """Mount the door's adapter on `session`, and on the session schemathesis' auth probes
    (ignored_auth) make for themselves when they drop the run's
    (schemathesis.transport.requests.SameHostRedirectsSession): the probes get the policy's
    headers, TLS, rate limit and throttling retries, and the door's bounds."""
    adapter = door.BoundedAdapter(
        settings.request_timeout, settings.max_response_size, transport.current()
    )
    session.mount("http://", adapter)
    session.mount("https://", adapter)

    class DoorSession(_PROBE_SESSION):
        def __init__(self) -> None:
            super().__init__()
            self.mount("http://", adapter)
            self.mount("https://", adapter)

    schemathesis_requests.SameHostRedirectsSession = DoorSession  # type: ignore[misc]
