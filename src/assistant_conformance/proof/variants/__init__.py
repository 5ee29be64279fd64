"""Conformant variants of the reference server: each changes it only in a way the contract allows.

The suite must pass every one of them as it passes the reference itself (no failure, warning or
error the reference does not get): a suite that fails a variant relies on something the contract
does not promise (a field list, a line ending, numeric event ids, speed, an identity encoding, the
format of identifiers). Each variant is a small ASGI middleware around the reference app;
`assistant-reference --variant NAME` serves one. VARIANTS maps a name to its class.
"""

from __future__ import annotations

from starlette.types import ASGIApp

from assistant_conformance.proof.mutants import EventFrames
from assistant_conformance.proof.variants._base import Variant
from assistant_conformance.proof.variants.dialects import (
    IdleReadsVary,
    InputTextOnly,
    NamespacesInObjects,
    StrictRunOptions,
)
from assistant_conformance.proof.variants.identifiers import OpaqueIdentifiers, opaque_ids, own_ids
from assistant_conformance.proof.variants.knowledge import (
    DeletedKbStatusEmpty,
    KbReferencesToNothing500,
)
from assistant_conformance.proof.variants.lenient import NoValidation
from assistant_conformance.proof.variants.neighbours import (
    BusyNeighbour,
    ChatkitFree,
    EveryThreadRuns,
)
from assistant_conformance.proof.variants.queued import (
    CancelSettlesLate,
    IdlessOpeningFrame,
    SlowWaitUnderLoad,
    StatusLagsStreamEnd,
)
from assistant_conformance.proof.variants.references import KbNameRequired, KbReferencesChecked
from assistant_conformance.proof.variants.spelling import (
    ExtraFields,
    Gzip,
    Latency150ms,
    OpaqueEventIds,
    SseDialect,
    Throttling,
)
from assistant_conformance.proof.variants.threads import IdsOnContinueOnly, StateWriteNeedsRun

__all__ = ["VARIANTS", "SseDialect", "opaque_ids", "own_ids", "with_variant"]

VARIANTS: dict[str, type[Variant] | type[EventFrames]] = {
    "extra-fields": ExtraFields,
    "sse-dialect": SseDialect,
    "opaque-event-ids": OpaqueEventIds,
    "latency-150ms": Latency150ms,
    "gzip": Gzip,
    "opaque-identifiers": OpaqueIdentifiers,
    "no-validation": NoValidation,
    "throttling": Throttling,
    "namespaces-in-objects": NamespacesInObjects,
    "status-lags-stream-end": StatusLagsStreamEnd,
    "input-text-only": InputTextOnly,
    "strict-run-options": StrictRunOptions,
    "idle-reads-vary": IdleReadsVary,
    "idless-opening-frame": IdlessOpeningFrame,
    "kb-references-checked": KbReferencesChecked,
    "kb-name-required": KbNameRequired,
    "kb-references-to-nothing-500": KbReferencesToNothing500,
    "state-write-needs-a-run": StateWriteNeedsRun,
    "ids-on-continue-only": IdsOnContinueOnly,
    "deleted-kb-status-empty": DeletedKbStatusEmpty,
    "every-thread-runs": EveryThreadRuns,
    "busy-neighbour": BusyNeighbour,
    "cancel-settles-late": CancelSettlesLate,
    "chatkit-free": ChatkitFree,
    "slow-wait-under-load": SlowWaitUnderLoad,
}


def with_variant(app: ASGIApp, name: str) -> ASGIApp:
    """The reference app with variant `name` around it."""
    try:
        return VARIANTS[name](app)
    except KeyError:
        raise ValueError(
            f"unknown variant {name!r}; known: {', '.join(sorted(VARIANTS))}"
        ) from None
