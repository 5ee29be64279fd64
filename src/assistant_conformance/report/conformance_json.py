"""conformance.json as one typed model: the document is written from it (`Document.of_run`), read
back into it (`load_document`), and its JSON Schema (schemas/conformance.schema.json, shipped with
the package) is generated from it (`json_schema`; `write_schema_file` writes it into the source
after a change to the model).

Pydantic models rather than frozen dataclasses: pydantic generates the JSON Schema from the same
annotations that validate a document read back, so the shape is written once (pydantic is already
installed with FastAPI). The models are frozen and forbid keys they do not name. A key a writer
leaves out stays out: a document is dumped with only the fields it was given (`exclude_unset`),
so `audit`, `cleanup` or `shards` appear where the run has them and nowhere else. What the run
computes (report/model.py: Run, Finding, RequirementResult) stays the mutable working model the
verdicts are decided on; this is its shape on disk.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    ValidationError,
    model_validator,
)
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import core_schema

from assistant_conformance.contract.catalogue import load
from assistant_conformance.report import redact
from assistant_conformance.report.exchange_record import Count, ExchangeRecord, Part
from assistant_conformance.report.model import VERDICTS

if TYPE_CHECKING:
    from assistant_conformance.report.model import Run

REPORT_FORMAT = "assistant-conformance-report/1"
SCHEMA_FILE = "schemas/conformance.schema.json"
GROUPS = load().groups
PARTS = ("met", "not met", "incomplete", "unsupported")
INVOCATIONS = (
    "pytest",
    "assistant-conformance run",
    "assistant-conformance merge",
    "assistant-conformance audit",
    "assistant-conformance proxy",
)
FAILED = ("fail", "warn")  # the verdicts a listed finding has (passing findings are not listed)


class DocumentError(ValueError):
    """A file that is not a conformance.json this suite can read; the message is one line."""


class OneOf:
    """Of a string: one of `values` (a `str` to the code, an enum to the schema)."""

    def __init__(self, *values: str) -> None:
        self.values = values

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> Any:
        return core_schema.literal_schema(list(self.values))


class JsonNumber:
    """Of a number: kept as written (0 stays 0, 10.0 stays 10.0), at least `minimum`."""

    def __init__(self, minimum: int | None = None) -> None:
        self.minimum = minimum

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> Any:
        whole = core_schema.int_schema(ge=self.minimum)
        return core_schema.union_schema([whole, core_schema.float_schema(ge=self.minimum)])

    def __get_pydantic_json_schema__(self, schema: Any, handler: GetJsonSchemaHandler) -> Any:
        said: dict[str, Any] = {"type": "number"}
        return said if self.minimum is None else {**said, "minimum": self.minimum}


Seconds = Annotated[float, JsonNumber(0)]
Sha256 = Annotated[str, Field(pattern="^[0-9a-f]{64}$")]
RequirementId = Annotated[str, Field(pattern="^[A-Z]+(-[A-Z0-9]+)+$")]
SectionKey = Annotated[str, Field(pattern="^[A-Z]+$")]
Group = Annotated[str, OneOf(*GROUPS)]
VerdictName = Annotated[str, OneOf(*VERDICTS)]
Moment = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
Day = Annotated[str, Field(json_schema_extra={"format": "date"})]
Counts = Annotated[
    dict[VerdictName, Annotated[int, Field(ge=1)]], Field(description="requirements per verdict")
]


class Spec(Part):
    openapi_sha256: Sha256 = Field(description="SHA-256 of spec/openapi.yaml")
    requirements_sha256: Sha256 = Field(description="SHA-256 of spec/requirements.yaml")


class OptionsRecord(Part):
    """The options of the run; tokens are never included."""

    base_url: str | None
    alt_token_given: bool = False
    strict_conformance: bool
    examples: Annotated[int, Field(ge=1)]
    seed: int
    request_timeout: Seconds
    process_timeout: Seconds
    report_dir: str
    baseline: str | None
    unsupported: list[Group]
    base_path: str | None = Field(None, description="an audit's: the API's base path in the URLs")


class AgentRecord(Part):
    assistant_id: str | None
    name: str
    how: str
    input_shape: str
    control: str = Field(
        description="what each way of making a run (runs/wait, runs/stream, a background run "
        "then its join) answered the control run"
    )
    options: list[str] = Field(
        [],
        description="the run options (LangGraph's) the target took, sent by the checks "
        "that need them",
    )
    refused_options: dict[str, str] = Field(
        {},
        description="run options the target refused, with how: the checks that need one go "
        "on without it",
    )
    numbering: str = Field("", description="how the target numbers a stream's events")
    problem: str


class RunsRecord(Part):
    """The agent every run used, the runs started and what they cost."""

    agent: AgentRecord | None
    started: Count
    statuses: dict[str, int]
    total_seconds: Seconds
    longest_seconds: Annotated[float, JsonNumber()] | None


class ThrottledRecord(Part):
    requests: Count
    seconds: Seconds


class TransportRecord(Part):
    """How the target was reached: TLS, extra header names (never values), the rate limit, and
    the requests the target throttled (429, or 503 with Retry-After), waited out and not judged as
    findings, and the requests sent again after a connection closed before an answer."""

    tls: str
    headers: list[str]
    rate_limit: Annotated[float, JsonNumber()] | None
    runs_at_once: int = Field(
        1,
        ge=1,
        description="the most runs the suite keeps in flight on the target at once, "
        "across its workers: a run holds its place until it is seen to end",
    )
    throttled: ThrottledRecord
    resent_after_close: Count = Field(
        0,
        description="requests sent once more on a new connection after the connection closed "
        "before any answer (the keep-alive race, RFC 9112 §9.3.1)",
    )
    requests: Count = Field(
        0,
        description="requests sent to the target by the run's clients (every attempt; the "
        "run's processes together)",
    )
    most_runs_in_flight: Count = Field(
        0, description="the most runs the suite had in flight at once in this run"
    )
    runs_over_bound: Count = Field(
        0,
        description="runs the suite started over the bound, after waiting its longest for a place",
    )


class Period(Part):
    from_: Moment = Field(alias="from")
    to: Moment


class AuditRecord(Part):
    """For `audit` and `proxy`: the exchanges judged (no request was sent by the suite), the period
    they cover, and why the untested requirements are untested. A finding's evidence names its
    file (`har`) and its entry index (`entry`)."""

    files: list[str] = Field(description="the HAR files (the proxy's recording)")
    exchanges: Count
    judged: Count = Field(description="to a documented operation, with an answer")
    off_document: Count = Field(description="to no documented operation: counted, not judged")
    unanswered: Count = Field(
        description="to a documented operation, without an answer: not judged"
    )
    unread: Count = Field(
        0,
        description="to a documented operation, answered, carrying a body nested too deep to "
        "read: not judged",
    )
    period: Period | None = Field(
        None, description="when the first exchange started and the last one ended (null: none)"
    )
    not_judgeable: Count = Field(
        0,
        description="untested requirements no exchange can show, whoever sent it (each "
        "reason starts `not judgeable from traffic: `)",
    )
    not_exercised: Count = Field(
        0, description="untested requirements these exchanges did not exercise (others may)"
    )
    unrecorded: Count = Field(
        0, description="the proxy's: passed on past its recording cap, not recorded"
    )


class LeftGroup(Part):
    kind: str
    count: Annotated[int, Field(ge=1)]
    reason: str
    removable: bool = Field(description="a delete exists and failed: --sweep tries again")
    expires_by: Moment | None
    examples: list[str]


class CleanupRecord(Part):
    """What the end of the run removed, or kept (--no-cleanup), and what stays on the target: each
    kind with why (no delete in the interface, a delete that failed, a create whose answer named
    nothing or that got no answer) and, where the target said, the latest time it expires by."""

    runs: list[str] = Field(description="the run prefixes (one per pytest-xdist worker)")
    ledgers: list[str]
    removed: Count
    kept: Count
    left: list[LeftGroup]


class AbsentOperation(Part):
    operation: Annotated[str, Field(pattern="^(GET|PUT|POST|DELETE|PATCH) /")] = Field(
        description="METHOD /path/{template}"
    )
    requirement: str = Field(description="its status requirement (x-requirements status)")
    reason: str = Field(description="what the target answered")
    how: Annotated[str, OneOf("pre-flight", "observed")] = Field(
        description="found by the pre-flight's reads, or in a test's exchanges"
    )


class GateRecord(Part):
    exit_status: int = Field(
        description="0 conformant, 1 a violation (a failed requirement or a stale baseline "
        "entry), 3 a harness error; 2 interrupted"
    )
    outcome: Annotated[
        str,
        OneOf(
            "conformant",
            "conformant except known failures",
            "not conformant",
            "harness error",
            "interrupted",
        ),
    ]
    problems: list[str] = Field(
        description="why the gate failed; when it passed, the known failures it accepted"
    )


class CertificationRecord(Part):
    level: Annotated[str, Field(pattern=r"^(none|full|core( \+ [a-z]+(, [a-z]+)*)?)$")] = Field(
        description="none, core, 'core + <groups>', or full"
    )
    parts: dict[str, Annotated[str, OneOf(*PARTS)]] = Field(
        json_schema_extra={"required": ["core", *GROUPS]}
    )
    notes: dict[str, str]

    @model_validator(mode="after")
    def _every_part(self) -> CertificationRecord:
        if missing := [p for p in ("core", *GROUPS) if p not in self.parts]:
            raise ValueError(f"parts lacks {', '.join(missing)}")
        return self


class GroupRecord(Part):
    status: Annotated[str, OneOf("supported", "unsupported", "not probed")]
    how: Annotated[str, OneOf("", "declared", "detected", "probed")]
    evidence: list[str] = Field(description='what showed it: "POST /api/ai/v1/file -> 404"')


class BaselineRecord(Part):
    requirement: RequirementId
    reason: str
    expires: Day | None
    status: Annotated[str, OneOf("applied", "stale", "not exercised")]
    note: str


class BaselineUse(Part):
    file: str | None
    entries: list[BaselineRecord]


class SectionRecord(Part):
    key: SectionKey
    title: str
    totals: Counts


class FindingRecord(Part):
    requirement: RequirementId
    verdict: Annotated[str, OneOf(*FAILED)]
    expected: str
    actual: str
    evidence: ExchangeRecord | None
    id: str = Field(
        "",
        description="stable finding ID: the same requirement, operation and check at the "
        "same seed give the same ID ('' for a finding that kept no exchanges)",
    )
    har: str = Field(
        "",
        description="the exchanges that led to the finding, HAR 1.2, relative to the report "
        "folder (exchanges/ID.har; '' when none)",
    )
    operation: str = Field(
        "",
        description="the operation (METHOD /path template) of the request it judged ('' "
        "where it judged none)",
    )
    also_at: list[str] = Field(
        [],
        description="where the same failure (the same requirement, operation, expectation "
        "and answer, identifiers and numbers aside) was seen again: each repeat's exchange "
        "(`file, entry N` in an audit), HAR or ID (in a run)",
    )


class RequirementRecord(Part):
    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        json_schema_extra={
            "allOf": [
                {
                    "if": {"properties": {"verdict": {"enum": list(FAILED)}}},
                    "then": {"properties": {"findings": {"minItems": 1}}},
                }
            ]
        },
    )

    id: RequirementId
    section: SectionKey
    level: Annotated[str, OneOf("MUST", "SHOULD")]
    source: str
    statement: str
    verdict: VerdictName
    reason: str = Field(description="why skipped, errored, known or unsupported")
    tests: list[str] = Field(description="pytest node IDs")
    findings: list[FindingRecord] = Field(
        description="every distinct failure (passing findings are not listed); the same failure "
        "seen again is counted on it, with where (`also_at`)"
    )
    repeats: Count = Field(
        0,
        description="sightings of the listed findings beyond the first of each (each "
        "finding's `also_at` says where)",
    )

    @model_validator(mode="after")
    def _failed_with_findings(self) -> RequirementRecord:
        if self.verdict in FAILED and not self.findings:
            raise ValueError(f"{self.id}: verdict {self.verdict} without a finding")
        return self


class Document(Part):
    """One conformance run: what was run against what, the gate's outcome, and a verdict with
    evidence for every requirement of spec/requirements.yaml. Every string is redacted: no
    credential appears."""

    format: Literal["assistant-conformance-report/1"]
    suite_version: Annotated[str, Field(min_length=1)]
    suite_sha256: Sha256 = Field("", description="SHA-256 of the suite's own checks")
    spec: Spec
    target: str = Field(description="base URL of the target, or 'embedded reference server'")
    seed: int
    started: Moment
    duration_seconds: Seconds
    peak_memory_mib: Seconds | None = Field(
        None,
        description="The suite process's peak resident memory (null where the OS does not "
        "report it).",
    )
    options: OptionsRecord
    runs: RunsRecord | None = None
    transport: TransportRecord | None = None
    workers: int = Field(
        1, ge=1, description="pytest-xdist workers the run was spread over (1: none)."
    )
    invocation: Annotated[str, OneOf(*INVOCATIONS)] = Field(
        "pytest",
        description="how the run was started: `pytest` in a checkout, "
        "`assistant-conformance run` from the installed package (the rerun line follows it), "
        "`assistant-conformance merge` of a run's shards, or the judging of traffic the suite "
        "did not send: `assistant-conformance audit` of HAR files, `assistant-conformance proxy` "
        "of live traffic (see audit)",
    )
    shards: int = Field(
        1,
        ge=1,
        description="the number of shards (`--shard I/N` runs) this report was merged "
        "from; absent for a run in one piece",
    )
    audit: AuditRecord | None = None
    cleanup: CleanupRecord | None = None
    absent_operations: list[AbsentOperation] = Field(
        [],
        description="Operations the target does not implement (suite/http/absent.py), each "
        "once, in the document's order: a finding on its status requirement. Those of a "
        "capability group unsupported as a whole are not listed (see capabilities).",
    )
    result: GateRecord
    certification: CertificationRecord
    capabilities: dict[Group, GroupRecord] = Field(json_schema_extra={"required": list(GROUPS)})
    baseline: BaselineUse
    totals: Counts
    sections: list[SectionRecord]
    requirements: Annotated[list[RequirementRecord], Field(min_length=1)]
    unattributed_failures: list[str] = Field(
        description="failed tests that name no requirement (counted as harness errors)"
    )

    @model_validator(mode="after")
    def _every_group(self) -> Document:
        if missing := [g for g in GROUPS if g not in self.capabilities]:
            raise ValueError(f"capabilities lacks {', '.join(missing)}")
        return self

    @classmethod
    def of_run(cls, run: Run) -> Document:
        """The run's document, every string redacted (report/redact.py)."""
        by_section = run.by_section()
        written = {
            "format": REPORT_FORMAT,
            **run.info,
            "result": asdict(run.gate),
            "certification": asdict(run.certification),
            "capabilities": {name: asdict(status) for name, status in run.capabilities.items()},
            "baseline": {
                "file": run.info["options"].get("baseline"),
                "entries": [asdict(b) for b in run.baseline],
            },
            "totals": run.totals(),
            "sections": [
                {"key": key, "title": run.sections.get(key, key), "totals": counted(results)}
                for key, results in by_section.items()
            ],
            "requirements": [
                {**asdict(r), "findings": [f.as_json() for f in r.findings]}
                for results in by_section.values()
                for r in results
            ],
            "unattributed_failures": run.unattributed,
        }
        return cls.model_validate(redact.redacted(written))

    def as_json(self) -> dict[str, Any]:
        """The document as JSON data, with the keys it was given, in the model's order."""
        return self.model_dump(mode="json", exclude_unset=True, by_alias=True)

    def verdicts(self) -> dict[str, str]:
        """Requirement ID -> verdict."""
        return {r.id: r.verdict for r in self.requirements}


def counted(results: list[Any]) -> dict[str, int]:
    """Results (each with a `verdict`) per verdict, in the order first met."""
    counts: dict[str, int] = {}
    for result in results:
        counts[result.verdict] = counts.get(result.verdict, 0) + 1
    return counts


def load_document(path: Path) -> Document:
    """The conformance.json at `path`; DocumentError (one line) for a file that is not one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DocumentError(f"{path}: cannot read it ({type(exc).__name__})") from None
    except ValueError:
        raise DocumentError(f"{path}: not JSON") from None
    said = data.get("format") if isinstance(data, dict) else None
    if said != REPORT_FORMAT:
        raise DocumentError(f"{path}: not an {REPORT_FORMAT} document (format {said!r})")
    try:
        return Document.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"])) or "the document"
        said = " ".join(first["msg"].split())  # on one line
        raise DocumentError(
            f"{path}: not a valid {REPORT_FORMAT} document: {where}: {said} "
            f"({exc.error_count()} in all)"
        ) from None


class _NoFieldTitles(GenerateJsonSchema):
    """Titles for the models (the $defs' names), none for each field: a field's name says it."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def json_schema(model: type[Document] = Document) -> dict[str, Any]:
    """The JSON Schema of conformance.json, generated from Document (or a model grown from it)."""
    generated = model.model_json_schema(schema_generator=_NoFieldTitles)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://assistant-conformance.invalid/schemas/conformance.schema.json",
        "title": "assistant-conformance report (conformance.json)",
        **{k: v for k, v in generated.items() if k != "title"},
    }


def schema_text(model: type[Document] = Document) -> str:
    """The schema file's text, as written to the package (schemas/conformance.schema.json)."""
    return json.dumps(json_schema(model), indent=2, ensure_ascii=False) + "\n"


def report_schema() -> dict[str, Any]:
    """The JSON Schema of conformance.json, as shipped in the package."""
    shipped = resources.files("assistant_conformance.report").joinpath(SCHEMA_FILE)
    return json.loads(shipped.read_text(encoding="utf-8"))


def write_schema_file() -> Path:
    """Write the generated schema into the package's source (after a change to the model)."""
    path = Path(__file__).parent / SCHEMA_FILE
    path.write_text(schema_text(), encoding="utf-8")
    return path
