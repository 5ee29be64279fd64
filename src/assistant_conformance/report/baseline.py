"""The baseline: known failures a CI gate accepts for now, each with a reason and maybe an expiry.

    # conformance-baseline.yaml
    RUN-JOIN-RESUME:
      reason: resumption lands in release 2.4
      expires: 2026-03-31
    AUTH-401: 403 is answered instead (ticket API-112)

A listed requirement that fails is reported `known` and does not fail the gate. An entry that no
longer holds fails the run as stale: the requirement now passes (remove the entry) or the entry
has expired (fix it or extend it). An entry naming an unknown requirement is a usage error.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import yaml

from assistant_conformance.contract.catalogue import Catalogue


class BaselineError(ValueError):
    """The baseline file cannot be used; the message is one readable line (a usage error)."""


@dataclass(frozen=True)
class BaselineEntry:
    requirement: str
    reason: str
    expires: dt.date | None = None

    def expired(self, today: dt.date) -> bool:
        return self.expires is not None and self.expires < today


def load_baseline(path: Path, catalogue: Catalogue) -> dict[str, BaselineEntry]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise BaselineError(f"--baseline {path}: cannot read it ({type(exc).__name__})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise BaselineError(f"--baseline {path}: expected a mapping of requirement ID -> reason")
    entries = {}
    for rid, value in data.items():
        if str(rid) not in catalogue:
            raise BaselineError(f"--baseline {path}: unknown requirement ID {rid!r}")
        entries[str(rid)] = _entry(path, str(rid), value)
    return entries


def _entry(path: Path, rid: str, value: object) -> BaselineEntry:
    if isinstance(value, str):
        return BaselineEntry(rid, value)
    if not isinstance(value, dict) or not str(value.get("reason") or "").strip():
        raise BaselineError(f"--baseline {path}: {rid} needs a reason")
    unknown = set(value) - {"reason", "expires"}
    if unknown:
        raise BaselineError(f"--baseline {path}: {rid} has unknown key {sorted(unknown)[0]!r}")
    expires = value.get("expires")
    if isinstance(expires, str):
        try:
            expires = dt.date.fromisoformat(expires)
        except ValueError:
            raise BaselineError(
                f"--baseline {path}: {rid} expires must be YYYY-MM-DD, got {expires!r}"
            ) from None
    if isinstance(expires, dt.datetime):
        expires = expires.date()
    if expires is not None and not isinstance(expires, dt.date):
        raise BaselineError(f"--baseline {path}: {rid} expires must be YYYY-MM-DD")
    return BaselineEntry(rid, str(value["reason"]), expires)
