"""Each piece of schemathesis' internals in suite/property/compat.py is still needed and still
works with the pinned version: a test per piece says what the version does without it and with it.
When one of these fails after an upgrade, the compat module's comment says what the piece is for.
"""

from __future__ import annotations

import inspect
import itertools
from collections import Counter
from collections.abc import Iterator

import httpx
import hypothesis.configuration as hypothesis_configuration
import hypothesis.internal.conjecture.providers as providers
import pytest
import requests
import schemathesis.pytest.plugin as schemathesis_pytest
import schemathesis.specs.openapi.adapter.responses as schemathesis_responses
import schemathesis.specs.openapi.checks as schemathesis_checks
import schemathesis.specs.openapi.coverage._schema as coverage_schema
import schemathesis.specs.openapi.stateful as stateful
import schemathesis.transport.requests as schemathesis_requests
from requests.adapters import HTTPAdapter
from schemathesis.checks import not_a_server_error, run_checks
from schemathesis.core.transport import Response
from schemathesis.generation.hypothesis import builder
from schemathesis.specs.openapi._auth_retry import build_retry_transport_kwargs

from assistant_conformance.suite.property import compat
from assistant_conformance.suite.property.generation import schema
from assistant_conformance.suite.property.scope import area_operations

PATCHED = (
    (builder, "add_coverage", compat.EAGER_COVERAGE),
    (schemathesis_requests, "SameHostRedirectsSession", compat.PROBE_SESSION),
    (stateful, "is_likely_root_transition", compat.ROOT_TRANSITION),
    (providers, "_get_local_constants", compat.LOCAL_CONSTANTS),
    (coverage_schema, "_invalid_enum_candidates", compat.ALL_ENUM_CANDIDATES),
    (schemathesis_responses, "expand_status_code", compat.STATUS_CODES_OF_KEY),
    (schemathesis_checks, "expand_status_code", compat.STATUS_CODES_OF_KEY),
)


@pytest.fixture
def patched() -> Iterator[None]:
    """The patches as the plugin applies them; what was in place before is put back after."""
    before = [getattr(module, name) for module, name, _ in PATCHED]
    compat.install(HTTPAdapter())
    yield
    for (module, name, _), value in zip(PATCHED, before, strict=True):
        setattr(module, name, value)


@pytest.fixture
def unpatched() -> Iterator[None]:
    before = [getattr(module, name) for module, name, _ in PATCHED]
    for module, name, original in PATCHED:
        setattr(module, name, original)
    yield
    for (module, name, _), value in zip(PATCHED, before, strict=True):
        setattr(module, name, value)


def built_test() -> object:
    """A generated test of one operation, built as collection builds it."""
    from schemathesis.generation.feedback import FeedbackSources
    from schemathesis.pytest._test_builder import build_operation_test

    operation = schema()["/api/ai/threads"]["POST"]

    def test(case: object) -> None:
        pass

    return build_operation_test(
        config=schema().config, operation=operation, test_func=test, given_kwargs={},
        feedback=FeedbackSources(),
    )  # fmt: skip


def explicit(test: object) -> int:
    return len(getattr(test, "hypothesis_explicit_examples", []))


def test_1_coverage_cases_are_made_at_collection_without_the_deferral(unpatched) -> None:
    assert explicit(built_test()) > 10  # the cost the deferral moves off collection


def test_1_the_deferral_makes_the_cases_the_runner_sends_when_the_test_runs(unpatched) -> None:
    """The same cases as schemathesis' own add_coverage, but only as many per scenario and field
    as the runner sends (the same number for every key that had more)."""
    eager = per_key(built_test())
    compat.install(HTTPAdapter())
    test = built_test()
    assert explicit(test) == 0 and compat.api_operation_of(test) is not None
    compat.ensure_coverage(test)
    compat.ensure_coverage(test)  # once
    deferred = per_key(test)
    limit = max(deferred.values())
    assert sum(eager.values()) > sum(deferred.values()) > 0
    assert deferred == {key: min(count, limit) for key, count in eager.items()}


def per_key(test: object) -> Counter[str | None]:
    examples = getattr(test, "hypothesis_explicit_examples", [])
    return Counter(compat.coverage_key(example.kwargs["case"]) for example in examples)


def test_2_auth_probes_drop_the_runs_session() -> None:
    assert "session" not in build_retry_transport_kwargs({"session": requests.Session()}, [])


def test_2_their_own_session_gets_the_runs_adapter(patched, reference_server) -> None:
    sent: list[str] = []

    class Recording(HTTPAdapter):
        def send(self, request, *args, **kwargs):  # type: ignore[no-untyped-def, override]
            sent.append(f"{request.method} {request.path_url}")
            return super().send(request, *args, **kwargs)

    compat.install(Recording())
    case = schema()["/api/ai/threads/search"]["POST"].Case(body={})
    response = case.call(base_url=reference_server.base_url)  # no session: a new one is made
    assert response.status_code == 401 and sent == ["POST /api/ai/threads/search"]


def root_labels() -> frozenset[str]:
    ops = area_operations(("AI/v1", "AI/Knowledges"))
    return schema().include(operation_id=ops).as_state_machine()._root_labels


def test_3_without_it_no_knowledge_base_create_starts_a_scenario(unpatched) -> None:
    assert not {"POST /api/ai/v1/kb", "POST /api/ai/knowledges"} & root_labels()


def test_3_with_it_the_creates_from_nothing_start_them(patched) -> None:
    assert root_labels() == {"POST /api/ai/v1/kb", "POST /api/ai/knowledges"}


def test_4_a_check_context_built_as_validate_response_builds_it() -> None:
    case = schema()["/api/ai/threads/search"]["POST"].Case(body={})
    request = requests.Request("POST", "http://t.test/api/ai/threads/search").prepare()
    raw = httpx.Response(500, content=b"{}", headers={"content-type": "application/json"})
    response = Response(500, {"content-type": ["application/json"]}, raw.content, request, 0.1,
                        "1.1")  # fmt: skip
    ctx = compat.check_context(case, {"headers": {}}, recorder=None)
    failed: list[str] = []
    run_checks(case=case, response=response, ctx=ctx, checks=[not_a_server_error],
               on_failure=lambda name, _, failure: failed.append(name))  # fmt: skip
    assert failed == ["not_a_server_error"]


def test_4_the_checks_configuration_is_merged_once_per_operation_and_phase() -> None:
    """The same configuration schemathesis merges for the case, each time; merged once."""
    loaded = schema()
    for label in ("POST /api/ai/threads/search", "GET /api/ai/knowledges/{id}/status"):
        method, path = label.split(" ")
        case = loaded[path][method].Case()
        for phase in (None, "coverage", "fuzzing", "stateful"):
            fresh = loaded.config.checks_config_for(operation=case.operation, phase=phase)
            first = compat.checks_config(case, phase)
            assert first == fresh
            assert compat.checks_config(case, phase) is first


def test_5_an_inconsistent_replay_is_told_apart() -> None:
    assert compat.is_inconsistent_replay(AssertionError("any other failure")) is False


def test_6_schemathesis_reports_a_generated_test_by_its_operation_label() -> None:
    """Its report hooks read the item's operation_label: the suite's items set none."""
    assert "operation_label" in inspect.getsource(schemathesis_pytest)


def test_7_hypothesis_draws_literals_of_the_suites_own_modules_without_it(unpatched) -> None:
    """In a checkout (an editable install) the suite's modules are local: their literals are
    among the constants Hypothesis mixes into its draws."""
    import assistant_conformance.suite.judging.schemathesis_charges  # noqa: F401  (a local module, with literals)

    assert "ROBUST-BAD-INPUT-4XX" in providers._get_local_constants().set_for_type("string")


def test_7_with_it_no_local_constant_is_drawn(patched) -> None:
    assert not providers._get_local_constants().set_for_type("string")


def test_8_schemathesis_draws_every_invalid_enum_candidate_at_once(unpatched) -> None:
    compat.ALL_ENUM_CANDIDATES.cache_clear()
    assert len(coverage_schema._invalid_enum_candidates()) > 2 * compat.ENUM_CANDIDATES


def test_8_with_it_the_same_candidates_come_in_the_same_order(patched) -> None:
    compat.ALL_ENUM_CANDIDATES.cache_clear()
    candidates = compat.InvalidEnumCandidates()
    first = list(itertools.islice(candidates, compat.ENUM_CANDIDATES))
    assert compat.ALL_ENUM_CANDIDATES.cache_info().currsize == 0  # the whole list not drawn
    assert list(candidates) == list(compat.ALL_ENUM_CANDIDATES())
    assert first == list(compat.ALL_ENUM_CANDIDATES())[: compat.ENUM_CANDIDATES]


def test_9_the_controller_builds_the_codec_table_each_worker_would_build(monkeypatch, tmp_path):
    """A storage folder without the table (a fresh machine): every process that draws a string
    would build it; built once, it is the file Hypothesis reads, and nothing is built again."""
    monkeypatch.setattr(hypothesis_configuration, "__hypothesis_home_directory", tmp_path)
    assert compat.codec_table_missing()
    building = compat.build_codec_table()
    assert building is not None
    building.join(timeout=300)
    assert not building.is_alive() and not compat.codec_table_missing()
    assert compat.build_codec_table() is None


def response_keys() -> list[str]:
    """Every response key of the document, and a pattern and a code of each form."""
    loaded = schema()
    keys = {key for op in loaded.get_all_operations() for key in op.ok().responses.status_codes}
    return [*sorted(keys | {"2XX", "4xx", "5XX", "default", "20X", "x", "2000"}), 404]


def test_10_status_code_keys_are_expanded_again_for_every_answer_without_it(unpatched) -> None:
    assert schemathesis_checks.expand_status_code("2XX") is not (
        schemathesis_checks.expand_status_code("2XX")
    )
    assert schemathesis_responses.expand_status_code is compat.STATUS_CODES_OF_KEY


def test_10_with_it_each_key_gives_the_same_codes_in_a_list_of_its_own(patched) -> None:
    for key in response_keys():
        codes = schemathesis_responses.expand_status_code(key)
        assert codes == compat.STATUS_CODES_OF_KEY(key) and isinstance(codes, list)
        assert schemathesis_checks.expand_status_code(key) is not codes  # a caller's own list
    assert compat._codes_of_key.cache_info().hits > 0


def test_10_with_it_the_checks_find_the_same_responses(patched) -> None:
    loaded = schema()
    for op in (found.ok() for found in loaded.get_all_operations()):
        for status in (200, 201, 204, 301, 400, 401, 404, 422, 429, 500, 503):
            with_it = op.responses.find_by_status_code(status)
            schemathesis_responses.expand_status_code = compat.STATUS_CODES_OF_KEY
            try:
                without = op.responses.find_by_status_code(status)
            finally:
                schemathesis_responses.expand_status_code = compat.expand_status_code
            assert with_it is without
