"""What the suite created on the target, so it can remove exactly that and nothing else.

Every resource a test creates is tracked with the request that deletes it. At the end of the
session the ledger deletes them newest first; a 404 means a test removed it already.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from . import redact


@dataclass
class Ledger:
    path: Path
    run_prefix: str = field(default_factory=lambda: f"conformance-{secrets.token_hex(4)}")
    entries: list[tuple[str, str]] = field(default_factory=list)  # (method, path)

    def track(self, method: str, path: str) -> None:
        """Record a created resource by the request that removes it."""
        self.entries.append((method, path))
        with self.path.open("a", encoding="utf-8") as file:
            file.write(json.dumps({"run": self.run_prefix, "method": method, "path": path}) + "\n")

    def clean_up(self, client: httpx.Client) -> list[str]:
        """Delete everything tracked, newest first; answer what could not be removed."""
        leftovers = []
        for method, path in reversed(self.entries):
            try:
                status = client.request(method, path).status_code
            except httpx.HTTPError as exc:
                leftovers.append(f"{method} {path}: {redact.text(type(exc).__name__)}")
                continue
            if not (200 <= status < 300 or status in (404, 410)):
                leftovers.append(f"{method} {path}: HTTP {status}")
        self.entries.clear()
        return leftovers
