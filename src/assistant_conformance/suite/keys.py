"""The keys of what the suite keeps on pytest's stashes: the run's state on the config, the
running test's record on its item (as schemathesis keeps its own in `pytest/_keys.py`)."""

from __future__ import annotations

import pytest

from assistant_conformance.suite.findings import TestRecord
from assistant_conformance.suite.state import RunState

RUN = pytest.StashKey[RunState]()
RECORD = pytest.StashKey[TestRecord]()


def run_state(config: pytest.Config) -> RunState:
    return config.stash[RUN]
