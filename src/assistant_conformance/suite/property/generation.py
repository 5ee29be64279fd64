"""Schemathesis set-up: the document loaded once, and the seed and depth of every generated test.

Deterministic: the seed of every operation's test derives from --seed; --examples N sets the
fuzzed cases per operation (and, in the runner, N // 10 coverage cases per scenario and field).
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import hypothesis
import schemathesis
from schemathesis.generation import derive_operation_seed

from assistant_conformance.report.catalogue import OPENAPI_PATH, read_yaml
from assistant_conformance.suite.property import coverage

NO_POOL = {"responses": False}
MAX_STREAM_EVENTS = 10  # a stream is also cut at the request timeout, in total


@cache
def schema() -> Any:
    """spec/openapi.yaml, loaded once; the seed and depth are applied per test (see configure)."""
    config = schemathesis.Config.from_dict(
        {
            "generation": {"mode": "all", "allow-x00": False},
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
            "max-stream-events": MAX_STREAM_EVENTS,
            "warnings": False,
        }
    )
    coverage.defer()  # made per operation when its test runs (property/coverage.py)
    # From the document the suite already parsed (a copy: schemathesis may change what it holds).
    return schemathesis.openapi.from_dict(copy.deepcopy(read_yaml(OPENAPI_PATH)), config=config)


def hypothesis_settings(
    examples: int, base: hypothesis.settings | None = None, **extra: Any
) -> hypothesis.settings:
    return hypothesis.settings(
        base,
        max_examples=examples,
        database=None,
        deadline=None,
        derandomize=False,
        suppress_health_check=list(hypothesis.HealthCheck),
        **extra,
    )


def configure(test: Any, label: str, seed: int, examples: int) -> None:
    """Apply the suite's seed and depth to one operation's generated (hypothesis) test."""
    test._hypothesis_internal_use_seed = derive_operation_seed(seed, label)
    test._hypothesis_internal_use_settings = hypothesis_settings(
        examples, test._hypothesis_internal_use_settings
    )
