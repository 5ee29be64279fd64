"""Reports: every file written from one result model, the JSON valid against its shipped schema,
a self-contained HTML page, JUnit and Allure labelled by requirement, documented exit codes, and
no token in anything the run writes."""

from __future__ import annotations

import copy
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any

import httpx
import jsonschema
import pytest
from tiny_suite import ALT_TOKEN, TOKEN, Run, run_tiny_suite

from assistant_conformance.contract.catalogue import load
from assistant_conformance.reference import embedded
from assistant_conformance.report import document, htmlpage, model, verdicts
from assistant_conformance.report.conformance_json import (
    Document,
    TransportRecord,
    load_document,
    report_schema,
)
from assistant_conformance.report.model import Finding
from assistant_conformance.suite.run import capabilities

REPORT_FILES = ("conformance.json", "conformance.md", "conformance.html", "junit.xml")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[embedded.RunningServer]:
    running = embedded.start([TOKEN, ALT_TOKEN], tmp_path_factory.mktemp("ref") / "ref.db")
    yield running
    running.stop()


@pytest.fixture(scope="module")
def passing(server: embedded.RunningServer, tmp_path_factory: pytest.TempPathFactory) -> Run:
    return run_tiny_suite(tmp_path_factory.mktemp("passing"), server.base_url)


@pytest.fixture(scope="module")
def failing(server: embedded.RunningServer, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """A failed MUST (THR-STATUS), a warned SHOULD (AUTH-401), a skip, chat-kit declared off."""
    workdir = tmp_path_factory.mktemp("failing")
    return run_tiny_suite(
        workdir, server.base_url, "--unsupported", "chatkit", must_status=418, should_status=403
    )


def test_conformant_run_exits_0_with_every_report(passing: Run) -> None:
    assert passing.returncode == 0, passing.output
    for name in REPORT_FILES:
        assert (passing.report_dir / name).is_file(), name
    assert any((passing.report_dir / "allure-results").glob("*-result.json"))
    doc = passing.json()
    assert doc["result"] == {"exit_status": 0, "outcome": "conformant", "problems": []}
    # Thread search kept THR-STATUS; its eight other operations were not exercised: no pass.
    thr = next(r for r in doc["requirements"] if r["id"] == "THR-STATUS")
    assert (thr["verdict"], thr["reason"][:54]) == (
        "skip",
        "not exercised on 8 of the 9 operations it names: POST ",
    )
    assert passing.verdicts()["CHATKIT-STATUS"] == "pass"
    assert doc["capabilities"]["chatkit"] == {
        "status": "supported",
        "how": "probed",
        "evidence": ["POST /api/ai/v1/chatkit/sessions -> 201"],
    }
    assert "result: conformant (exit 0)" in passing.output


def test_violation_exits_1_with_fail_warn_skip_and_unsupported(failing: Run) -> None:
    assert failing.returncode == 1, failing.output
    verdicts = failing.verdicts()
    assert verdicts["THR-STATUS"] == "fail"
    assert verdicts["AUTH-401"] == "warn"
    assert verdicts["AUTH-MISSING-REJECTED"] == "pass"
    assert verdicts["ROBUST-UNKNOWN-ID-404"] == "skip"
    assert verdicts["CHATKIT-STATUS"] == verdicts["CHATKIT-SECRET"] == "unsupported"
    assert verdicts["ASST-STATUS"] == "untested"
    doc = failing.json()
    assert doc["result"]["problems"] == ["THR-STATUS (MUST) fails"]
    assert doc["certification"]["parts"]["chatkit"] == "unsupported"
    assert doc["certification"]["level"] == "none"  # core fails
    skipped = next(r for r in doc["requirements"] if r["id"] == "ROBUST-UNKNOWN-ID-404")
    assert skipped["reason"] == "not applicable to this target"


@pytest.mark.parametrize("run_name", ["passing", "failing"])
def test_json_validates_against_the_shipped_schema(
    run_name: str, request: pytest.FixtureRequest
) -> None:
    run: Run = request.getfixturevalue(run_name)
    jsonschema.Draft202012Validator(
        report_schema(), format_checker=jsonschema.FormatChecker()
    ).validate(run.json())


@pytest.mark.parametrize("run_name", ["passing", "failing"])
def test_json_reads_back_into_the_model_unchanged(
    run_name: str, request: pytest.FixtureRequest
) -> None:
    run: Run = request.getfixturevalue(run_name)
    path = run.report_dir / "conformance.json"
    read = load_document(path)
    assert read.verdicts() == run.verdicts()
    assert json.dumps(read.as_json(), indent=2, ensure_ascii=False) + "\n" == path.read_text()


def test_json_identifies_the_run_and_carries_evidence(
    failing: Run, server: embedded.RunningServer
) -> None:
    doc = failing.json()
    assert doc["target"] == server.base_url
    assert re.fullmatch(r"[0-9a-f]{64}", doc["spec"]["openapi_sha256"])
    assert doc["options"]["unsupported"] == ["chatkit"]
    assert len(doc["requirements"]) == len(load().requirements)
    (finding,) = next(r for r in doc["requirements"] if r["id"] == "THR-STATUS")["findings"]
    assert finding["expected"] == "HTTP 418"
    assert finding["actual"].startswith("HTTP 200")
    assert finding["evidence"]["request"]["headers"]["authorization"] == "[REDACTED]"
    assert finding["evidence"]["curl"].startswith("curl -sS -X POST ")


def test_markdown_lists_what_fails_and_warns(failing: Run) -> None:
    text = (failing.report_dir / "conformance.md").read_text()
    assert text.startswith("## ❌ API conformance: not conformant (exit 1)")
    assert re.search(r"\| `THR-STATUS` \| MUST \| fail \| [^|]* \| HTTP 418 \| HTTP 200", text)
    assert re.search(r"\| `AUTH-401` \| SHOULD \| warn \| [^|]* \| HTTP 403 \| HTTP 401", text)
    assert "AUTH-MISSING-REJECTED" not in text


@pytest.mark.parametrize("run_name", ["passing", "failing"])
def test_html_shows_every_requirement_and_loads_nothing(
    run_name: str, request: pytest.FixtureRequest
) -> None:
    run: Run = request.getfixturevalue(run_name)
    page = (run.report_dir / "conformance.html").read_text()
    rows = dict(
        re.findall(r'<tr class="req [^"]*" id="req-([A-Z0-9-]+)" data-verdict="(\w+)"', page)
    )
    assert rows == run.verdicts()
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    assert "@import" not in page and "<script" not in page and "<link" not in page
    assert "url(" not in page


def test_html_shows_expected_actual_and_curl_of_a_failure(failing: Run) -> None:
    page = (failing.report_dir / "conformance.html").read_text()
    row = page[page.index('id="req-THR-STATUS"') :].split('<tr class="req ', 1)[0]
    assert "<dt>Expected</dt><dd>HTTP 418</dd>" in row
    assert "<dt>Actual</dt><dd>HTTP 200" in row
    assert "<dt>Reproduce</dt><dd><pre>curl -sS -X POST" in row


MARKUP = """<script>alert(1)</script><img src=x onerror=alert(2)><a href="//x.invalid">'&amp;"""


def tainted(value: Any) -> Any:
    """`value` with MARKUP after every non-empty string in it: what a hostile target answers."""
    if isinstance(value, str):
        return value + MARKUP if value else value
    if isinstance(value, dict):
        return {k: tainted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [tainted(v) for v in value]
    return value


class Elements(HTMLParser):
    """A page's elements (each tag with its attributes' names) and its text, as a browser reads
    them."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[str]]] = []
        self.text: list[str] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, sorted(name for name, _ in attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


NAMED = ("requirement", "verdict")  # a finding's fields the suite names, not the target


def test_what_a_target_answered_never_becomes_markup(failing: Run) -> None:
    """Markup in every value a target or its findings gave (the target's URL, answers, reasons,
    evidence, curl, HAR names) is shown as text: the page has not one element or attribute more."""
    doc = failing.json()
    answered = copy.deepcopy(doc)
    answered["target"] = tainted(doc["target"])
    answered["result"]["problems"] = tainted(doc["result"]["problems"])
    for status in answered["capabilities"].values():
        status["evidence"] = tainted(status["evidence"])
    for r in answered["requirements"]:
        r["reason"] = tainted(r["reason"])
        r["findings"] = [{**tainted(f), **{k: f[k] for k in NAMED}} for f in r["findings"]]
    clean = Elements(htmlpage.to_html(Document.model_validate(doc)))
    shown = Elements(htmlpage.to_html(Document.model_validate(answered)))
    assert shown.tags == clean.tags
    (finding,) = next(r for r in answered["requirements"] if r["id"] == "THR-STATUS")["findings"]
    for value in (finding["expected"], finding["actual"], finding["evidence"]["curl"]):
        assert value in shown.text
    assert answered["result"]["problems"][0] in shown.text


def test_junit_labels_tests_with_requirements(failing: Run) -> None:
    tree = ET.parse(failing.report_dir / "junit.xml")
    cases = {c.get("name"): c for c in tree.iter("testcase")}
    case = cases["test_thread_search_status"]
    props = {(p.get("name"), p.get("value")) for p in case.iter("property")}
    assert ("requirement", "THR-STATUS") in props
    failure = case.find("failure")
    assert failure is not None and "[THR-STATUS] MUST" in (failure.get("message") or "")
    assert cases["test_chatkit_session"].find("skipped") is not None


def test_allure_labels_severity_link_and_attachment(failing: Run) -> None:
    results = [
        json.loads(p.read_text())
        for p in (failing.report_dir / "allure-results").glob("*-result.json")
    ]
    failed = next(r for r in results if r["name"] == "test_thread_search_status")
    labels = {(label["name"], label["value"]) for label in failed["labels"]}
    assert {("requirement", "THR-STATUS"), ("severity", "critical")} <= labels
    assert ("feature", "Threads") in labels
    assert failed["status"] == "failed"
    assert failed["links"][0]["url"] == "spec/interface.md#44-threads-and-runs"
    (attachment,) = failed["attachments"]
    evidence = json.loads(
        (failing.report_dir / "allure-results" / attachment["source"]).read_text()
    )
    assert evidence["response"]["status"] == 200


def test_terminal_summary_reads_like_h2spec(failing: Run) -> None:
    assert "  x THR-STATUS  MUST fail" in failing.output
    assert "       Expected: HTTP 418" in failing.output
    assert "  ! AUTH-401  SHOULD warn" in failing.output
    assert "result: not conformant (exit 1)" in failing.output


@pytest.mark.parametrize("run_name", ["passing", "failing"])
def test_no_token_in_any_file_written(run_name: str, request: pytest.FixtureRequest) -> None:
    run: Run = request.getfixturevalue(run_name)
    files = [p for p in run.report_dir.rglob("*") if p.is_file()]
    assert len(files) > len(REPORT_FILES)
    for path in files:
        content = path.read_bytes()
        assert TOKEN.encode() not in content, path
        assert ALT_TOKEN.encode() not in content, path
    assert TOKEN not in run.output and ALT_TOKEN not in run.output


# --- capability groups and certification level (no server needed) -----------------------------


def _probe_against(missing_prefixes: tuple[str, ...]) -> dict:
    def answer(request: httpx.Request) -> httpx.Response:
        missing = request.url.path.startswith(missing_prefixes)
        return httpx.Response(404 if missing else 400)

    with httpx.Client(base_url="http://target", transport=httpx.MockTransport(answer)) as client:
        return capabilities.probe_groups(client, skip=("chatkit",))


def test_group_whose_entry_operations_all_answer_404_is_detected_unsupported() -> None:
    found = _probe_against(("/api/ai/store/", "/api/ai/v1/file"))
    assert found["store"].status == found["files"].status == "unsupported"
    assert found["store"].how == "detected"
    assert found["store"].evidence == [
        "POST /api/ai/store/items/search -> 404",
        "POST /api/ai/store/namespaces -> 404",
    ]
    assert found["conversations"].status == "supported"  # a 400 proves the route exists
    assert "chatkit" not in found  # declared: not probed


def test_group_with_one_live_operation_is_supported() -> None:
    found = _probe_against(("/api/ai/store/items",))
    assert found["store"].status == "supported"


def kept(rid: str) -> list[Finding]:
    """A pass of `rid` on every operation it names."""
    return [Finding(rid, model.PASS, operation=op) for op in load().operations.get(rid, ("",))]


def _all_passing(*unsupported: str) -> model.Run:
    tests = [
        model.TestResult(f"t::{rid}", [rid], "passed", kept(rid)) for rid in load().requirements
    ]
    caps = {g: capabilities.GroupStatus("unsupported", "detected") for g in unsupported}
    return verdicts.build(load(), tests, info={}, capabilities=caps, baseline={})


def test_certification_level_names_the_groups_reached() -> None:
    assert _all_passing().certification.level == "full"
    run = _all_passing("store", "chatkit")
    assert run.certification.level == "core + files, contexts, conversations"
    assert run.requirements["STORE-STATUS"].verdict == "unsupported"
    assert run.requirements["STORE-STATUS"].reason == "capability group store detected unsupported"
    assert run.gate.exit_status == 0


def test_a_failing_core_requirement_leaves_no_level() -> None:
    run = verdicts.build(
        load(),
        [model.TestResult("t", ["THR-STATUS"], "passed", [Finding("THR-STATUS", "fail")])]
        + [
            model.TestResult(f"t::{r}", [r], "passed", [Finding(r, model.PASS)])
            for r in load().requirements
        ],
        info={},
        capabilities={},
        baseline={},
    )
    assert run.certification.level == "none"
    assert run.certification.notes["core"] == "failing: THR-STATUS"


def test_a_broken_test_is_a_harness_error_not_a_violation() -> None:
    broken = model.TestResult("t::x", ["THR-STATUS"], "failed", [], "call: KeyError: 'id'")
    run = verdicts.build(load(), [broken], info={}, capabilities={}, baseline={})
    assert run.requirements["THR-STATUS"].verdict == "error"
    assert run.gate.exit_status == 3
    assert run.gate.problems == ["THR-STATUS: t::x: call: KeyError: 'id'"]


def test_the_header_says_the_bound_of_runs_in_flight_and_any_run_over_it() -> None:
    way = {"tls": "verified", "headers": [], "rate_limit": None,
           "throttled": {"requests": 0, "seconds": 0}, "runs_at_once": 2}  # fmt: skip
    within = document.transport_line(_reached({**way, "most_runs_in_flight": 2}))
    assert within == "transport: runs in flight at most 2 at once across workers (most 2)"
    over = {**way, "most_runs_in_flight": 3, "runs_over_bound": 1}
    line = document.transport_line(_reached(over, workers=2)) or ""
    assert "(most 3; 1 started over it after waiting their longest for a place)" in line


def _reached(way: dict[str, object], workers: int = 1) -> Document:
    """A document with only its transport (and workers) given."""
    return Document.model_construct(transport=TransportRecord.model_validate(way), workers=workers)
