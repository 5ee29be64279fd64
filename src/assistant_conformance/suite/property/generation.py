"""Schemathesis set-up: the document loaded once, and the seed and depth of every generated test.

Deterministic: each operation's test is seeded from --seed and its label (schemathesis derives
it from the schema's seed, as the suite did before); --examples N sets the fuzzed cases per
operation (and, in the runner, N // 10 coverage cases per scenario and field). Both are the
schema's public configuration, set by `configure` when the plugin configures the run, before the
tests are collected and built.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import hypothesis
import schemathesis

from assistant_conformance.contract.files import OPENAPI_PATH, read_yaml

NO_POOL = {"responses": False}
MAX_STREAM_EVENTS = 10  # a stream is also cut at the request timeout, in total


@cache
def schema() -> Any:
    """spec/openapi.yaml, loaded once per process; `configure` sets the run's seed and depth."""
    config = schemathesis.Config.from_dict(
        {
            "generation": {"mode": "all", "allow-x00": False, "database": "none"},
            # Identifiers come from links only, never from other answers (no extra data sources):
            # a DELETE must never reach a resource the suite did not create.
            "phases": {
                "coverage": {"unexpected-methods": [], "extra-data-sources": NO_POOL},
                "fuzzing": {"extra-data-sources": NO_POOL},
                "stateful": {"inference": {"algorithms": []}},  # the document's links only
            },
            "checks": {
                "negative_data_rejection": {"expected-statuses": ["4xx", "5xx"]},
                "positive_data_acceptance": {
                    "expected-statuses": ["2xx", "401", "403", "404", "409", "429", "5xx"]
                },
            },
            "suppress-health-check": ["all"],
            "max-stream-events": MAX_STREAM_EVENTS,
            "warnings": False,
        }
    )
    # From the document the suite already parsed (a copy: schemathesis may change what it holds).
    return schemathesis.openapi.from_dict(copy.deepcopy(read_yaml(OPENAPI_PATH)), config=config)


def configure(seed: int, examples: int) -> None:
    """The run's seed and depth, for every test built after this (the whole run's)."""
    loaded = schema()
    loaded.config.seed = seed
    loaded.config.generation.update(max_examples=examples)


def hypothesis_settings(examples: int, **extra: Any) -> hypothesis.settings:
    """Settings of a state machine's run (its steps are not generated tests of the schema)."""
    return hypothesis.settings(
        max_examples=examples,
        database=None,
        deadline=None,
        derandomize=False,
        suppress_health_check=list(hypothesis.HealthCheck),
        **extra,
    )
