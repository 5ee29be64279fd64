"""`--shard I/N`: a deterministic share of the tests, balanced by the durations that ship with
the suite (`durations.json`, measured by `bench/shards.py --record` at the default depth and a deep
one). Every shard computes the same split from the same collection, so each test runs in exactly
one shard, and its cases depend only on the seed and the test: the same verdict wherever it runs.
The run keeps its shard's share in suite/run/concurrency.py.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import PurePosixPath

SPELLING = re.compile(r"^([1-9]\d*)/([1-9]\d*)$")
DURATIONS = "durations.json"


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """`I/N` with 1 <= I <= N; ValueError (one line) otherwise."""
        found = SPELLING.match(text.strip())
        if not found or int(found[1]) > int(found[2]):
            raise ValueError(f"--shard expects I/N with 1 <= I <= N (e.g. 2/4), got {text!r}")
        return cls(int(found[1]), int(found[2]))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def duration_key(nodeid: str) -> str:
    """A test's name wherever the suite is installed: its file's name and what follows."""
    path, _, rest = nodeid.partition("::")
    return f"{PurePosixPath(path.replace(chr(92), '/')).name}::{rest}"


@cache
def _measured() -> dict[str, dict[str, float]]:
    text = resources.files(__package__).joinpath(DURATIONS).read_text("utf-8")
    return {depth: dict(tests) for depth, tests in json.loads(text)["depths"].items()}


def durations(examples: int) -> dict[str, float]:
    """Each test's expected seconds at `examples` per operation: linear through the two measured
    depths (what grows with depth is the generated cases), never below the shallower."""
    measured = _measured()
    (low, at_low), (high, at_high) = sorted(((int(d), t) for d, t in measured.items()))[:2]
    scale = (examples - low) / (high - low)
    return {
        test: max(seconds, seconds + (at_high.get(test, seconds) - seconds) * scale)
        for test, seconds in at_low.items()
    }


def split(nodeids: list[str], count: int, examples: int) -> list[list[str]]:
    """The tests of each of `count` shards: longest first, each to the least loaded shard (ties to
    the lowest); a test not measured counts as the median one."""
    known = durations(examples)
    ordered = sorted(known.values()) or [1.0]
    usual = ordered[len(ordered) // 2]
    cost = {n: known.get(duration_key(n), usual) for n in nodeids}
    loads, shares = [0.0] * count, [[] for _ in range(count)]  # type: list[float], list[list[str]]
    for nodeid in sorted(nodeids, key=lambda n: (-cost[n], duration_key(n))):
        lightest = min(range(count), key=lambda i: (loads[i], i))
        loads[lightest] += cost[nodeid]
        shares[lightest].append(nodeid)
    return shares


def share(nodeids: list[str], shard: Shard, examples: int) -> set[str]:
    return set(split(nodeids, shard.count, examples)[shard.index - 1])
