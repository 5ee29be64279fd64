"""Which requirement a schemathesis check failure is a finding against: the table to scan.

For a check that fails on an operation, the first row naming both wins (`for_check`); scope.py
refines the rejection checks first (which rule of the document a negative case broke) and falls
back on this table. `*` names every operation. Operation names are the operationIds of
spec/openapi.yaml.
"""

from __future__ import annotations

from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi import checks as st

ALL = ("*",)

# status_code_conformance: the success status the document states, per operation.
STATUS: dict[str, tuple[str, ...]] = {
    "KB-V1-STATUS": (
        "v1CreateKnowledgebase", "v1UpdateKnowledgebase", "v1DeleteKnowledgebase",
        "v1BulkCreateDocuments", "v1ProcessDocuments", "v1GetDocumentStatus",
    ),
    "KB-KNOWLEDGES-STATUS": (
        "knowledgesCreateKnowledgebase", "knowledgesUpdateKnowledgebase",
        "knowledgesDeleteKnowledgebase", "knowledgesBulkCreateDocuments",
        "knowledgesProcessDocuments", "knowledgesGetDocumentStatus",
    ),
    "FILE-STATUS": ("v1CreateFile",),
    "CTX-STATUS": ("createContextFile", "deleteContextFile"),
    "CHATKIT-STATUS": ("v1CreateChatkitSession",),
    "ASST-STATUS": ("searchAssistants", "countAssistants", "getAssistant"),
    "THR-STATUS": (
        "createThread", "searchThreads", "getThread", "patchThread", "deleteThread",
        "getThreadState", "updateThreadState", "getThreadHistory", "copyThread",
    ),
    "RUN-STATUS": (
        "listRuns", "createRun", "streamRun", "waitRun", "joinRunStream", "getRun", "cancelRun",
    ),
    "USAGE-STATUS": ("getThreadUsage",),
    "CONV-STATUS": (
        "createConversation", "searchConversations", "getConversation", "patchConversation",
        "deleteConversation",
    ),
    "MSG-STATUS": (
        "listMessages", "createMessage", "searchMessages", "getMessage", "listFeedbacks",
        "deleteFeedback",
    ),
    "STORE-STATUS": ("searchStoreItems", "listStoreNamespaces"),
}  # fmt: skip

# Every other check: (check, operations, requirement), first match wins.
ROWS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("ignored_auth", ALL, "AUTH-MISSING-REJECTED"),
    ("missing_required_header", ALL, "AUTH-MISSING-REJECTED"),
    ("positive_data_acceptance", (
        "v1CreateKnowledgebase", "knowledgesCreateKnowledgebase", "v1UpdateKnowledgebase",
        "knowledgesUpdateKnowledgebase",
    ), "KB-VALID-ACCEPTED"),
    ("use_after_free", (
        "v1DeleteKnowledgebase", "knowledgesDeleteKnowledgebase", "v1UpdateKnowledgebase",
        "knowledgesUpdateKnowledgebase", "v1BulkCreateDocuments", "knowledgesBulkCreateDocuments",
        "v1ProcessDocuments", "knowledgesProcessDocuments", "v1GetDocumentStatus",
        "knowledgesGetDocumentStatus",
    ), "KB-DELETE-GONE"),
    ("use_after_free", ("deleteContextFile",), "CTX-DELETE-GONE"),
    ("ensure_resource_availability", (
        "createThread", "copyThread", "getThread",
    ), "THR-GET-CREATED"),
    ("use_after_free", (
        "deleteThread", "getThread", "patchThread", "getThreadState", "updateThreadState",
        "getThreadHistory", "copyThread", "listRuns", "createRun", "streamRun", "waitRun",
        "getRun", "joinRunStream", "cancelRun", "getThreadUsage",
    ), "THR-DELETE-GONE"),
    ("content_type_conformance", ("streamRun", "joinRunStream"), "RUN-STREAM-CONTENT-TYPE"),
    ("ensure_resource_availability", ("createRun", "getRun", "listRuns"), "RUN-GET-CREATED"),
    ("use_after_free", (
        "deleteConversation", "getConversation", "patchConversation", "listMessages",
        "createMessage", "searchMessages", "getMessage",
    ), "CONV-DELETE-GONE"),
    ("ensure_resource_availability", (
        "createMessage", "getMessage", "listMessages",
    ), "MSG-GET-CREATED"),
    ("not_a_server_error", ALL, "ROBUST-NO-5XX"),
    ("negative_data_rejection", ALL, "ROBUST-BAD-INPUT-4XX"),
    ("missing_required_header", ALL, "ROBUST-BAD-INPUT-4XX"),
    ("content_type_conformance", ALL, "ROBUST-JSON-CONTENT-TYPE"),
    ("response_schema_conformance", ALL, "ROBUST-RESPONSE-SHAPE"),
)  # fmt: skip

# Refinements of the rejection checks (scope.py): which rule of the document a case broke.
ROBUST = "ROBUST-BAD-INPUT-4XX"
KB_KEYWORDS = {"enum": "KB-ALLOWED-VALUES", "format": "KB-UUID-FORMAT", "type": "KB-FIELD-TYPES"}
BODY_SHAPE = {"kb": "KB-FIELD-TYPES", "bulk": "KB-BULK-ARRAY", "process": "KB-PROCESS-STRINGS"}
POSITIVE = {"kb": "KB-VALID-ACCEPTED", "bulk": "KB-BULK-ARRAY", "process": "KB-PROCESS-STRINGS"}
REQUIRED_QUERY = {
    "v1GetDocumentStatus": "KB-STATUS-IDS-REQUIRED",
    "knowledgesGetDocumentStatus": "KB-STATUS-IDS-REQUIRED",
    "listRuns": "RUN-PAGING-REQUIRED",
    "listMessages": "MSG-PAGING-REQUIRED",
    "getThreadUsage": "USAGE-RANGE-REQUIRED",
}
AUTH = ("AUTH-MISSING-REJECTED", "AUTH-INVALID-REJECTED", "AUTH-401")

# The checks the layer runs, in order: every step; stateful steps only; last (it sends probes, so
# a probe without answer loses no other failure).
CHECKS = (
    not_a_server_error,
    st.status_code_conformance,
    st.content_type_conformance,
    st.response_schema_conformance,
    st.negative_data_rejection,
    st.positive_data_acceptance,
    st.missing_required_header,
)
STATEFUL_ONLY = (st.use_after_free, st.ensure_resource_availability)
LAST = (st.ignored_auth,)

# What each check expects, for the failure text.
EXPECTED = {
    "not_a_server_error": "no 5xx answer",
    "status_code_conformance": "the documented success status, or a 4xx for input refused",
    "content_type_conformance": "the Content-Type the document declares for this answer",
    "response_schema_conformance": "a body with the identifiers the suite's OpenAPI document names",
    "negative_data_rejection": "a 4xx for input that breaks what the document declares",
    "positive_data_acceptance": "a 2xx (or 404 for an unknown id) for a body the document allows",
    "missing_required_header": "a 401 for a request without Authorization",
    "ignored_auth": "a 401/403 for the same request without (or with an invalid) credential",
    "use_after_free": "404 for a resource deleted before",
    "ensure_resource_availability": "the resource just created can be used",
}


def rows() -> tuple[tuple[str, tuple[str, ...], str], ...]:
    status = tuple(("status_code_conformance", ops, rid) for rid, ops in STATUS.items())
    return status + ROWS


def for_check(check: str, operation_id: str) -> str | None:
    """The requirement a failure of `check` on `operation_id` is charged to by the table."""
    for name, operations, requirement in rows():
        if name == check and (operations == ALL or operation_id in operations):
            return requirement
    return None


def covered(checks: set[str], operation_id: str) -> set[str]:
    """Every requirement the table charges a failure of one of `checks` on the operation to."""
    return {
        requirement
        for name, operations, requirement in rows()
        if name in checks and (operations == ALL or operation_id in operations)
    }
