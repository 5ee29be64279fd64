"""Every client of the target, made here and nowhere else, from the run's one policy (policy.py).

Whichever layer sends a request (the scenario flows, the credential cases, the pre-flight and
the probes, the capability probes, the property layer and schemathesis' own probes, the clean-up,
the sweep, a replay), it goes out through the policy (extra headers, TLS, rate limit, throttling
waited out, a dropped connection sent again) and its answer comes back through the door
(answer_bounds.py: deadline, size cap, a whole message), onto the running test's trail:

    httpx.Client -> [the run's guard] -> answer_bounds.BoundedTransport
                 -> policy.PolicyTransport -> wire
    requests.Session -> [the run's guard] -> policy.PolicyAdapter (its door) -> wire

- `client(policy, base_url, token)`: an httpx client, `token` its bearer credential;
- `session(policy)`: a requests session (schemathesis sends with requests): the property layer's;
- `adapter(policy)`: requests' adapter alone, for the sessions schemathesis makes for its own
  probes (property/compat.py);
- `around`: what the run's safety puts between a client and the door for one principal (owned
  data only, the ledger: suite/safety/guard.py's `Guarding`); clients without it are the
  pre-flight's, the probes', the clean-up's and the credential cases'.
"""

from __future__ import annotations

from typing import Protocol

import httpx
import requests
from requests.adapters import HTTPAdapter

from assistant_conformance.suite.http.answer_bounds import BoundedTransport
from assistant_conformance.suite.http.policy import Policy, PolicyAdapter, PolicyTransport


class Around(Protocol):
    """What wraps the door for one principal (the run's guard and ledger), in both stacks."""

    def transport(self, inner: httpx.BaseTransport) -> httpx.BaseTransport: ...

    def adapter(self, inner: HTTPAdapter) -> HTTPAdapter: ...


def transport(policy: Policy) -> httpx.BaseTransport:
    """httpx's stack: the door around the policy around the connection."""
    inner = PolicyTransport(policy, httpx.HTTPTransport(verify=policy.verify))
    return BoundedTransport(inner, policy.deadline, policy.cap, late=policy.late, runs=policy.runs)


def client(
    policy: Policy,
    base_url: str,
    token: str | None = None,
    *,
    around: Around | None = None,
    timeout: float | None = None,
) -> httpx.Client:
    """An httpx client of the target at `base_url`, `token` its bearer credential (none: no
    Authorization header); `timeout` for the wait on a stream's status (default: the policy's)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    door = transport(policy)
    return httpx.Client(
        base_url=base_url,
        headers=headers,
        timeout=policy.deadline if timeout is None else timeout,
        transport=around.transport(door) if around is not None else door,
    )


def adapter(policy: Policy) -> HTTPAdapter:
    """requests' stack: the policy and its door in one adapter."""
    return PolicyAdapter(policy)


def session(policy: Policy, *, around: Around | None = None) -> requests.Session:
    """A requests session of the target (schemathesis' cases are sent with it)."""
    made = requests.Session()
    # As the httpx clients (their transport is ours): no proxy or .netrc credential from the
    # environment, which requests would otherwise look up again for every request.
    made.trust_env = False
    door = adapter(policy)
    mounted = around.adapter(door) if around is not None else door
    made.mount("http://", mounted)
    made.mount("https://", mounted)
    return made
