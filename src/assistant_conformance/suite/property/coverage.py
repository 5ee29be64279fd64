"""Coverage cases made when an operation's test runs, not when it is collected.

Schemathesis builds every operation's coverage cases (about 1,700 here) as explicit Hypothesis
examples while pytest collects, in every process: under pytest-xdist each worker paid for all 49
operations (about 1.1 s of CPU) before any test could start, though it runs a few of them. Its
builder's `add_coverage` is deferred: the same call, with the same arguments, is made by `ensure`
just before the operation's test runs (the `runner` fixture of tests/test_property.py), when
Hypothesis has yet to read the test's explicit examples. Depends on schemathesis' internal
`generation.hypothesis.builder.add_coverage` (pinned <5).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schemathesis.generation.hypothesis import builder

_eager = builder.add_coverage
_deferred: dict[str, Callable[[], Any]] = {}  # operation label -> the call that adds its cases


def _defer(test: Callable, operation: Any, *args: Any, **kwargs: Any) -> Callable:
    _deferred[operation.label] = lambda: _eager(test, operation, *args, **kwargs)
    return test


def defer() -> None:
    """From now on, schemathesis' tests get their coverage cases from `ensure`."""
    builder.add_coverage = _defer


def ensure(test: Callable) -> None:
    """Add the coverage cases of the operation `test` tests to it (once)."""
    operation = builder.ApiOperationMark.get(test)
    if operation is not None and (add := _deferred.pop(operation.label, None)) is not None:
        add()
