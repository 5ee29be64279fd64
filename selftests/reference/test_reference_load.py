"""The reference server under load (bench/load.py, in a short bounded form): concurrent clients
through mixed operations get no 5xx and every acknowledged write reads back; killed with SIGKILL
mid-load and restarted on the same database, it has lost no acknowledged write and no run event a
client received."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

KINDS = {"thread", "conversation", "message", "knowledge base", "documents", "store item"}


@pytest.fixture(scope="module")
def load() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "bench" / "load.py"
    spec = importlib.util.spec_from_file_location("bench_load", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_load_no_5xx_and_every_acknowledged_write_reads_back(load: Any, tmp_path: Path) -> None:
    result = load.run(clients=16, requests=400, time_limit=15, workdir=tmp_path)
    assert result["ok"], load.summary(result)
    assert result["server_errors"] == 0 and not result["transport_errors"]
    assert result["requests"] == 400  # the bound, reached (not the time limit)
    assert KINDS | {"run events"} <= set(result["acknowledged"])
    assert result["read_back"]["checked"] == result["acknowledged"]
    assert result["runs_cut"] == 0  # every stream was read to its end, and replays the same
    assert result["latency_ms"]["p99"] > 0 and result["requests_per_second"] > 0


def test_kill_mid_load_loses_nothing_acknowledged(load: Any, tmp_path: Path) -> None:
    result = load.run(
        clients=16, requests=100_000, time_limit=15, crash_after=1.5, token_delay_ms=20,
        workdir=tmp_path,
    )  # fmt: skip
    assert result["crash"]["killed_after_seconds"] is not None  # killed mid-load, not after it
    assert result["transport_errors"]  # requests were in flight when it died
    assert result["ok"], load.summary(result)
    assert set(result["acknowledged"]) >= KINDS and result["run_events_acknowledged"] > 0
    assert result["read_back"]["checked"] == result["acknowledged"]
