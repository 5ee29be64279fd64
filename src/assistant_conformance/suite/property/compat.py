"""Every piece of schemathesis' internals the suite relies on, in one file (schemathesis is pinned
<5 in pyproject.toml). `install` applies the patches once, when the plugin configures the run;
selftests/suite/property/test_schemathesis_compat.py fails when the pinned version stops needing or
allowing one of them. Everything else the suite asks of schemathesis goes through its public API:
the seed and depth of generated tests are the schema's configuration (property/generation.py).

1. Coverage cases made when an operation's test runs, not when it is collected. Schemathesis
   builds every operation's coverage cases (about 1,700 here) as explicit Hypothesis examples
   while pytest collects, in every process: under pytest-xdist each worker paid for all 49
   operations (about 1.1 s of CPU) before any test could start, though it runs a few of them.
   Its builder's `add_coverage` is deferred: the same call, with the same arguments, is kept on
   the test and made by `ensure_coverage` just before the test runs. It attaches only the cases
   the runner sends (`coverage_key`: N // 10 per scenario and field at depth N, the first ones in
   the order Hypothesis runs them): the others, more than half at the default depth, each cost
   Hypothesis a run of the test that sent nothing.
2. Schemathesis' auth probes (`ignored_auth`) drop the run's session for a new
   `SameHostRedirectsSession` of their own: that class is given the run's adapter (the
   transport policy and the door), so the probes are bounded and throttled like every request.
3. State machines start at operations that create a resource from nothing (POST without path
   parameters): schemathesis' `is_likely_root_transition` drops the knowledge-base creates,
   reading workspaceId/integrationId as foreign keys of resources nothing produces.
4. Checks run one by one with a context built as `Case.validate_response` builds it
   (`check_context`: its `override` is the case's private `_override`), so that each failure
   comes back with its check's name.
5. `is_inconsistent_replay`, from schemathesis' engine: a replay Hypothesis calls flaky because
   a real server is external state (schemathesis' own engine goes on with the next seed).
6. The suite reports through its findings, not schemathesis' own writers: a generated test's
   item without its `operation_label` is left alone by schemathesis' report hooks (which would
   otherwise assert on a report that only findings failed).
7. Hypothesis, schemathesis' engine, mixes literals of the process's "local" modules (those
   outside site-packages) into 5% of its draws, parsing their sources (and caching them in
   ./.hypothesis/constants of the working folder). Which modules are local depends on how the
   suite was installed (a checkout's editable install is, a wheel is not) and on what else was
   imported: the same seed would send other cases (measured: a checkout run and a wheel run
   differed, and a fresh working folder cost 190 MB more). The suite draws none of them, so its
   cases depend on the seed and the test alone.
8. An invalid enum value of a coverage case is the first of a fixed, seeded list of candidates
   its caller has not used: schemathesis draws the whole list (1,375 values, a fifth of a second
   in every process) where a few are read. The same list is drawn as far as it is read (the
   first ENUM_CANDIDATES at once), so the same values come out.
9. Hypothesis draws the strings schemathesis asks for from the characters UTF-8 encodes, a table it
   builds from all 1.1 million code points (1.4 s of CPU) the first time a process needs it, and
   keeps in its storage folder (./.hypothesis, or the user's cache under `assistant-conformance
   run`). On a machine that has none (a CI runner, every run) each pytest-xdist worker built it,
   each paying the same CPU on the same cores. The controller of a spread run builds it once
   (`build_codec_table`, in a thread while the workers start); a worker that needs it before it is
   written builds it as before (Hypothesis writes the file atomically).
10. A response key's status codes ("2XX": 200 to 299) are expanded by schemathesis again for every
   answer, in `find_by_status_code` and `status_code_conformance` (a product of digit lists and an
   int() per code, some 12,000 times in a run at the default depth). The expansion depends on the
   key alone: each key is expanded once (`expand_status_code`, cached) and every caller gets a
   fresh list of the same codes, as before.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import threading
from collections.abc import Callable, Iterator
from typing import Any

import hypothesis
import hypothesis.internal.charmap as hypothesis_charmap
import hypothesis.internal.conjecture.providers as hypothesis_providers
import schemathesis.core.transport as schemathesis_transport
import schemathesis.specs.openapi.adapter.responses as schemathesis_responses
import schemathesis.specs.openapi.checks as schemathesis_checks
import schemathesis.specs.openapi.coverage._schema as coverage_schema
import schemathesis.specs.openapi.stateful as stateful
import schemathesis.transport.requests as schemathesis_requests
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict
from schemathesis.checks import CheckContext
from schemathesis.engine.errors import is_inconsistent_replay
from schemathesis.engine.run import PhaseName
from schemathesis.generation.case import Case
from schemathesis.generation.drivers import CoverageGenerator
from schemathesis.generation.hypothesis import builder, examples
from schemathesis.generation.meta import CoveragePhaseData

__all__ = [
    "api_operation_of",
    "build_codec_table",
    "check_context",
    "coverage_key",
    "coverage_per_key",
    "ensure_coverage",
    "install",
    "is_inconsistent_replay",
    "without_schemathesis_reports",
]

EAGER_COVERAGE = builder.add_coverage
PROBE_SESSION = schemathesis_requests.SameHostRedirectsSession
ROOT_TRANSITION = stateful.is_likely_root_transition
LOCAL_CONSTANTS = hypothesis_providers._get_local_constants
ALL_ENUM_CANDIDATES = coverage_schema._invalid_enum_candidates
STATUS_CODES_OF_KEY = schemathesis_transport.expand_status_code
DEFERRED = "_conformance_deferred_coverage"  # attribute of a test: the call that adds its cases


def _defer_coverage(test: Callable, operation: Any, *args: Any, **kwargs: Any) -> Callable:
    setattr(test, DEFERRED, lambda: _add_wanted_coverage(test, operation, *args, **kwargs))
    return test


def coverage_key(case: Case) -> str | None:
    """What the runner counts a coverage case under (operation, scenario, field, and whether a
    positive case says what it covers); None for a case of another phase."""
    meta = case.meta
    if meta is None or not isinstance(meta.phase.data, CoveragePhaseData):
        return None
    data = meta.phase.data
    described = meta.generation.mode.is_positive and data.description
    return f"{case.operation.label}|{data.scenario}|{data.parameter}|{data.location}|{described}"


def coverage_per_key(examples: int) -> int:
    """Coverage cases sent per key at depth `examples`."""
    return max(1, examples // 10)


def _add_wanted_coverage(
    test: Callable,
    operation: Any,
    generation_modes: Any,
    auth_storage: Any,
    override: Any,
    feedback: Any,
    generation_config: Any,
    hooks: Any = None,
) -> Callable:
    """Schemathesis' `add_coverage`, attaching only the cases the runner would send."""
    generator = CoverageGenerator(
        operation=operation,
        generation_modes=generation_modes,
        generation_config=generation_config,
        auth_storage=auth_storage,
        override=override,
        feedback=feedback,
        hooks=hooks,
    )
    cases = list(builder.content_type_probes_first(generator))
    limit = coverage_per_key(generation_config.max_examples or 0)
    seen: dict[str, int] = {}
    kept: set[int] = set()
    for index in reversed(range(len(cases))):  # Hypothesis runs the last attached first
        key = coverage_key(cases[index])
        seen[key or ""] = seen.get(key or "", 0) + 1
        if key is None or seen[key] <= limit:
            kept.add(index)
    for index, case in enumerate(cases):
        if index in kept:
            test = hypothesis.example(case=case)(test)
    unserializable = generator.controller.unserializable_media_types
    if unserializable:
        builder.UnserializablePayloadMark.set(test, sorted(unserializable))
    return test


def ensure_coverage(test: Callable) -> None:
    """Add the coverage cases of the operation `test` tests to it (once)."""
    add = getattr(test, DEFERRED, None)
    if add is not None:
        delattr(test, DEFERRED)
        add()


def _creates_from_nothing(operation: Any, *_: Any) -> bool:
    return bool(operation.method == "post" and not operation.path_parameters)


def _probe_session(adapter: HTTPAdapter) -> type[schemathesis_requests.SameHostRedirectsSession]:
    class DoorSession(PROBE_SESSION):
        def __init__(self) -> None:
            super().__init__()
            self.trust_env = False  # as the run's own session (http/clients.py)
            self.mount("http://", adapter)
            self.mount("https://", adapter)

    return DoorSession


def _no_local_constants() -> Any:
    return hypothesis_providers.Constants()


ENUM_CANDIDATES = 400  # drawn first: an operation uses at most a few dozen


class _Enough(Exception):
    """Raised by the candidates' filter to stop the draw once a block is drawn."""


class InvalidEnumCandidates:
    """Schemathesis' invalid enum candidates in their order, drawn as far as they are read."""

    def __init__(self) -> None:
        self._first: tuple[Any, ...] | None = None

    def __iter__(self) -> Iterator[Any]:
        if self._first is None:
            self._first = self._draw_first()
        yield from self._first
        yield from ALL_ENUM_CANDIDATES()[len(self._first) :]  # the whole list, as schemathesis

    @staticmethod
    def _draw_first() -> tuple[Any, ...]:
        """As schemathesis draws them (a filter rejecting each value of a seeded run), stopped
        after ENUM_CANDIDATES: a seeded run's values so far depend on nothing after them."""
        drawn: list[Any] = []

        def reject(value: Any) -> bool:
            drawn.append(value)
            if len(drawn) >= ENUM_CANDIDATES:
                raise _Enough
            return False

        with contextlib.suppress(_Enough):
            examples.generate_one(coverage_schema.INVALID_ENUM_STRATEGY.filter(reject))
        return tuple(drawn[:ENUM_CANDIDATES])


_ENUM_CANDIDATES = InvalidEnumCandidates()


@functools.lru_cache(maxsize=256)  # the document's response keys: a few dozen
def _codes_of_key(status_code: Any) -> tuple[int, ...]:
    return tuple(STATUS_CODES_OF_KEY(status_code))


def expand_status_code(status_code: Any) -> list[int]:
    """Schemathesis' `expand_status_code`, each key expanded once (see 10): a new list each call."""
    return list(_codes_of_key(status_code))


def install(adapter: HTTPAdapter) -> None:
    """Apply the patches (see the module docstring); `adapter`: the run's, for the probes."""
    builder.add_coverage = _defer_coverage
    coverage_schema._invalid_enum_candidates = lambda: _ENUM_CANDIDATES  # type: ignore[assignment]
    schemathesis_requests.SameHostRedirectsSession = _probe_session(adapter)  # type: ignore[misc]
    stateful.is_likely_root_transition = _creates_from_nothing  # type: ignore[assignment]
    hypothesis_providers._get_local_constants = _no_local_constants
    schemathesis_responses.expand_status_code = expand_status_code
    schemathesis_checks.expand_status_code = expand_status_code


CODEC = "utf-8"  # the codec of the strings Hypothesis draws for schemathesis


def codec_table_missing() -> bool:
    """Whether this machine's Hypothesis storage folder lacks the table of CODEC (see 9)."""
    return not hypothesis_charmap.charmap_file(f"codec-v2-{CODEC}").exists()


def build_codec_table() -> threading.Thread | None:
    """Start building the table of CODEC into the storage folder where it is missing (see 9): the
    thread doing it, None where there is nothing to build."""
    if not codec_table_missing():
        return None
    build = hypothesis_charmap.intervals_from_codec  # kept in memory too: built, and written
    context = contextvars.copy_context()  # the run's (house rule; nothing here reads it)
    thread = threading.Thread(
        target=context.run,
        args=(getattr(build, "__wrapped__", build), CODEC),
        name="hypothesis-codec-table",
        daemon=True,
    )
    thread.start()
    return thread


# Attribute of a schemathesis operation: its checks' configuration per phase, merged once
# ({phase: (the project's configuration it was merged from, the merged one)}).
CHECKS_CONFIG = "_conformance_checks_config"


def checks_config(case: Case, phase: str | None) -> Any:
    """The schema's `checks_config_for` the case's operation in `phase`, merged once per run: it
    depends on the operation and the phase alone (the suite sets the checks' configuration when
    it loads the document, generation.py, and never after; the checks only read it). Kept on the
    operation itself, not in this module (no run state at a module's top)."""
    operation = case.operation
    project = operation.schema.config
    kept: dict[str | None, tuple[Any, Any]] | None = getattr(operation, CHECKS_CONFIG, None)
    if kept is None:
        kept = {}
        setattr(operation, CHECKS_CONFIG, kept)
    found = kept.get(phase)
    if found is not None and found[0] is project:
        return found[1]
    merged = project.checks_config_for(operation=operation, phase=phase)
    kept[phase] = (project, merged)
    return merged


def check_context(case: Case, kwargs: dict[str, Any], recorder: Any) -> CheckContext:
    """The context `Case.validate_response` gives checks, for the run's transport `kwargs`."""
    phase = PhaseName.from_str(case.meta.phase.name.value) if case.meta is not None else None
    config = checks_config(case, phase.value if phase is not None else None)
    return CheckContext(
        override=case._override,
        auth=None,
        headers=CaseInsensitiveDict(kwargs["headers"]),
        config=config,
        transport_kwargs=kwargs,
        recorder=recorder,
        response_checks=None,
        phase=phase,
    )


def api_operation_of(test: Callable) -> Any:
    """The API operation a generated test tests (None for other functions)."""
    return builder.ApiOperationMark.get(test)


def without_schemathesis_reports(item: Any) -> None:
    """The generated test `item` is reported by the suite alone (see the module docstring, 6)."""
    item.operation_label = None
