"""One client stack: every request the suite sends gets its client from suite/http/clients.py, built
from the run's one policy, and passes the guard and the ledger only through what clients.py puts
around it (suite/safety/guarded.py).

No other module of the suite room, of its checks (tests/) or of the command (cli/) makes an httpx
or requests client, nor a piece of the stack (a connection transport, the door, the policy's
transport or adapter); none outside the safety room calls the guard or the ledger around a
request by hand (`remember`, `refusal`, `intend`, `intend_path`, a ledger's `created`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "assistant_conformance"
CLIENTS = PACKAGE / "suite" / "http" / "clients.py"
SAFETY = PACKAGE / "suite" / "safety"
CHECKED = [
    *sorted((PACKAGE / "suite").rglob("*.py")),
    *sorted((PACKAGE / "cli").rglob("*.py")),
    *sorted((ROOT / "tests").rglob("*.py")),
]
MAKERS = {
    ("httpx", "Client"), ("httpx", "AsyncClient"), ("httpx", "HTTPTransport"),
    ("httpx", "AsyncHTTPTransport"), ("requests", "Session"), ("requests", "session"),
}  # fmt: skip
STACK = frozenset({"BoundedTransport", "PolicyTransport", "PolicyAdapter", "HTTPAdapter"})
BY_HAND = frozenset({"remember", "refusal", "intend", "intend_path"})


def _called(func: ast.expr, aliases: dict[str, tuple[str, str]]) -> str | None:
    """What a call makes: `httpx.Client`, a piece of the stack, or None."""
    owner = (
        func.value.id
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
        else ""
    )
    if isinstance(func, ast.Attribute) and (owner, func.attr) in MAKERS:
        return f"{owner}.{func.attr}"
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name in aliases:
        return ".".join(aliases[name])
    return name if name in STACK else None


def clients_made(source: str) -> list[str]:
    """Each client (or piece of the stack) `source` makes, as `line N: what`."""
    tree = ast.parse(source)
    aliases = {
        alias.asname or alias.name: (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module in ("httpx", "requests")
        for alias in node.names
        if (node.module, alias.name) in MAKERS
    }
    return [
        f"line {node.lineno}: {what}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and (what := _called(node.func, aliases))
    ]


def guarded_by_hand(source: str) -> list[str]:
    """Each call of the guard or the ledger around a request in `source`, as `line N: what`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        method, receiver = node.func.attr, ast.unparse(node.func.value)
        if method in BY_HAND or (method == "created" and "ledger" in receiver.lower()):
            found.append(f"line {node.lineno}: {receiver}.{method}")
    return found


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("path", CHECKED, ids=rel)
def test_clients_are_made_in_one_module(path: Path) -> None:
    if path == CLIENTS:
        return
    made = clients_made(path.read_text(encoding="utf-8"))
    assert made == [], f"{rel(path)} makes a client of its own: get it from {rel(CLIENTS)}"


@pytest.mark.parametrize("path", CHECKED, ids=rel)
def test_the_guard_is_called_only_by_the_clients_stack(path: Path) -> None:
    if SAFETY in path.parents:
        return
    called = guarded_by_hand(path.read_text(encoding="utf-8"))
    assert called == [], f"{rel(path)} calls the guard or the ledger around a request by hand"


def test_clients_made_elsewhere_are_seen() -> None:
    """Not vacuous: each way a client was made beside the one module, and the guard by hand."""
    made = clients_made(
        "import httpx, requests\nfrom httpx import Client as C\n"
        "a = httpx.Client(base_url='x')\nb = requests.Session()\nc = C()\n"
        "d = BoundedTransport(inner, 1, 2)\ne = door.PolicyAdapter(policy)\n"
    )
    assert [line.split(": ")[1] for line in made] == [
        "httpx.Client", "requests.Session", "httpx.Client", "BoundedTransport", "PolicyAdapter"
    ]  # fmt: skip
    by_hand = guarded_by_hand(
        "self.guard.remember(answer)\nself.ledger.created(intent, 201, body)\n"
        "runner.ledger.intend_path('POST', '/x', {})\ntrail.created(entry)\n"
    )
    assert by_hand == [
        "line 1: self.guard.remember", "line 2: self.ledger.created",
        "line 3: runner.ledger.intend_path",
    ]  # fmt: skip
