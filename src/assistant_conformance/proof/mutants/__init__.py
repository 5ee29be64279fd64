"""Deliberately wrong variants of the reference server, for the project's own tests.

Each mutant is a small ASGI middleware around the reference app that breaks exactly one
requirement (named in its docstring). `assistant-reference --mutant NAME` serves one.
MUTANTS maps a name to (middleware class, requirement IDs the suite must then report failed
or, for SHOULD requirements, warned).
"""

from __future__ import annotations

from starlette.types import ASGIApp

from assistant_conformance.proof.mutants import (
    absent,
    flows,
    hostile,
    inputs,
    layer,
    semantics,
    statuses,
    streams,
    truth,
)
from assistant_conformance.proof.mutants._base import EventFrames, Mutant, read_body

__all__ = ["MUTANTS", "PROPERTY_LAYER", "EventFrames", "read_body", "selection", "with_mutant"]

MUTANTS: dict[str, tuple[type[Mutant], tuple[str, ...]]] = {
    **layer.REGISTRY,
    **flows.REGISTRY,
    **statuses.REGISTRY,
    **streams.REGISTRY,
    **semantics.REGISTRY,
    **inputs.REGISTRY,
    **hostile.REGISTRY,
    **absent.REGISTRY,
    **truth.REGISTRY,
}


def with_mutant(app: ASGIApp, name: str) -> ASGIApp:
    """The reference app with mutant `name` around it."""
    try:
        middleware = MUTANTS[name][0]
    except KeyError:
        raise ValueError(f"unknown mutant {name!r}; known: {', '.join(sorted(MUTANTS))}") from None
    return middleware(app)


PROPERTY_LAYER = ("tests/property/test_property.py", "tests/property/test_stateful.py")


def without_credential(label: str) -> tuple[str, ...]:
    """The auth checks that send operation `label` no credential (a placeholder id, a real one)."""
    tests = ("test_refused_without_valid_credential", "test_refused_on_an_existing_resource")
    return tuple(f"tests/scenario/test_auth.py::{test}[{label}-no-header]" for test in tests)


KNOWLEDGE_MODULES = (
    "tests/scenario/test_knowledge.py",
    "tests/scenario/test_knowledge_prefixes.py",
)
SCENARIO_MODULES = ("tests/scenario",)
SELECTIONS: dict[str, tuple[str, ...]] = {
    # a stream left open is waited out for the request timeout: a short one
    "cancelled-stream-stays-open": (
        *SCENARIO_MODULES,
        "-k",
        "RUN-CANCEL-ENDS-STREAM",
        "--request-timeout",
        "3",
    ),
    # the property layer's mutants: the operations they touch and the state machine of their area
    # (selftests/suite/property/test_property_layer.py runs every state machine)
    "create-thread-200": (*PROPERTY_LAYER, "-k", "createThread or (state_machine and threads)"),
    "search-threads-no-auth": (
        *PROPERTY_LAYER,
        "-k",
        "searchThreads or (state_machine and threads)",
    ),
    "kb-permission-any-string": (
        *PROPERTY_LAYER,
        "-k",
        "CreateKnowledgebase or UpdateKnowledgebase or (state_machine and knowledge)",
    ),
    "status-ids-optional": (
        *PROPERTY_LAYER,
        "-k",
        "GetDocumentStatus or (state_machine and knowledge)",
    ),
    # the 500 on a knowledge base of the run (a generated id names none): the state machine's
    # and the scenario's `bulk []`
    "empty-bulk-500": (
        *PROPERTY_LAYER,
        "tests/scenario/test_knowledge.py",
        "-k",
        "BulkCreateDocuments or (state_machine and knowledge) or bulk_takes_an_array_only",
    ),
    "deleted-thread-readable": (
        *PROPERTY_LAYER,
        "-k",
        "deleteThread or getThread or (state_machine and threads)",
    ),
    "conversation-search-hangs": (
        *PROPERTY_LAYER,
        without_credential("POST /api/ai/conversations/search")[0],
        "-k",
        "searchConversations or (state_machine and conversations) or no-header",
        "--request-timeout",
        "2",
    ),
    # the data scenario modules' mutants
    "status-answers-other-documents": KNOWLEDGE_MODULES,
    "process-never-starts": (*KNOWLEDGE_MODULES, "--process-timeout", "1"),
    "knowledges-prefix-diverges": KNOWLEDGE_MODULES,
    "kb-description-truncated": KNOWLEDGE_MODULES,
    "messages-ignore-limit": ("tests/scenario/test_conversations.py",),
    "messages-ignore-offset": ("tests/scenario/test_conversations.py",),
    "conversation-patch-not-persisted": ("tests/scenario/test_conversations.py",),
    "chatkit-secret-never-works": ("tests/scenario/test_files.py",),
    "chatkit-secret-never-expires": ("tests/scenario/test_files.py",),
    # flows appended last: the one module or operation they change
    "message-created-without-id": ("tests/scenario/test_conversations.py",),
    "count-as-text": ("tests/property/test_property.py", "-k", "countAssistants"),
    "thread-read-with-nan": ("tests/scenario/test_threads.py",),
    # hostile answers, with default options: the one test that reaches the operation, and the
    # auth checks that send it no credential
    "answer-drips": (
        "tests/scenario/test_threads.py::test_history_grows_with_each_write_newest_first",
        *without_credential("POST /api/ai/threads/{thread_id}/history"),
    ),
    "answer-never-ends": (
        "tests/scenario/test_threads.py::test_state_written_is_the_state_read",
        *without_credential("GET /api/ai/threads/{thread_id}/state"),
    ),
    "answer-cut-short": (
        "tests/scenario/test_runs.py::test_run_list_pages_by_limit_and_offset",
        *without_credential("GET /api/ai/threads/{thread_id}/runs/{run_id}"),
    ),
    # a lacking operation: every test that sends it (the run goes on: the rest as the reference)
    "thread-search-missing": (
        "tests/scenario/test_threads.py",
        "tests/scenario/test_auth.py",
        "tests/scenario/test_robustness.py",
        "tests/property/test_property.py",
        "tests/scenario/test_files.py",
        "-k",
        "test_threads or threads/search or searchThreads or chatkit",
    ),
    # one run path broken: every requirement a run serves (truth.RUN_SERVED), not only its own
    "wait-500-after-run": (
        *SCENARIO_MODULES,
        "-k",
        " or ".join((*truth.RUN_SERVED, "ROBUST-NO-5XX")),
    ),
    "wait-200-text-plain": (
        *SCENARIO_MODULES,
        "-k",
        " or ".join((*truth.RUN_SERVED, "ROBUST-JSON-CONTENT-TYPE")),
    ),
    # the verdict on MSG-STATUS is the whole area's: its scenarios and the property layer's (seed
    # 1: its state machines pass another message operation before their first valid search)
    "message-search-2xx-error-status-kept": (
        "tests/scenario/test_conversations.py",
        *PROPERTY_LAYER,
        "-k",
        "test_conversations or Messages or (state_machine and conversations)",
        "--seed=1",
    ),
}


def selection(name: str) -> tuple[str, ...]:
    """The pytest arguments that run the part of the suite mutant `name` must be caught by."""
    if name in SELECTIONS:
        return SELECTIONS[name]
    return (*SCENARIO_MODULES, "-k", " or ".join(MUTANTS[name][1]))
