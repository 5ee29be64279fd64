"""The exit statuses of every command of the project (the suite under pytest, the sweep, the
matrix, the kill table): one table, so that a CI step reads them the same way everywhere."""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    CONFORMANT = 0  # every MUST held (and every SHOULD, under --strict-conformance)
    VIOLATION = 1  # a requirement failed: a finding against the target
    INTERRUPTED = 2  # Ctrl-C (pytest's own)
    HARNESS = 3  # the suite could not judge: target unreachable, token refused, a removal failed
    USAGE = 4  # a bad option or input file (pytest's own usage error is 4 too)
    UNSTABLE = 6  # `run --repeat N`: runs against one target differed on a verdict (5: pytest's)
    CLOSED_PIPE = 141  # stdout's reader went away (`| head`): as a shell sees SIGPIPE end a writer
