"""The kill-rate table, made once per session for selftests/proof/test_mutants.py and
test_variants.py: every mutant and variant in one pool (the long variant runs first, the short
mutant runs fill in around them), written to reports/killtable.md and killtable.json as the command
writes it. A timed variant's suite (its room is in timing: queues, lags, other traffic) runs with
the default workers, the others' in one process, once each: CI's time. Every variant three times
with the default workers, its verdicts the same in each, is
`python -m assistant_conformance.proof.killtable --workers --repeat 3` (docs/proof.md)."""

from __future__ import annotations

import tempfile
import time
from functools import cache
from pathlib import Path

from assistant_conformance.proof import killreport, killtable

REPORT_DIR = Path(__file__).resolve().parents[2] / "reports"  # the checkout's, as the command


@cache
def outcomes() -> dict[str, killtable.CaseOutcome]:
    workdir = Path(tempfile.mkdtemp(prefix="killtable-"))
    jobs, started = killtable.default_jobs(), time.monotonic()
    every = killtable.cases()
    done = killtable.run_cases(every, workdir, jobs, spread_timed=True)
    killreport.write_killtable(done, REPORT_DIR, time.monotonic() - started, jobs)
    print(f"\n{killreport.table_text(done)}\n(table in {REPORT_DIR / 'killtable.md'})")
    return {o.case.name: o for o in done}
