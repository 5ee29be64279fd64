"""The kill-rate table: the suite against every mutant, which it must catch by requirement ID, and
every conformant variant, which it must pass.

    python -m assistant_conformance.proof.killtable [--jobs N] [--workers] [--repeat N] [NAME]

Each case gets its own reference server (`--mutant NAME` / `--variant NAME`) and its own pytest
process pointed at it with `--base-url`, several at a time. A mutant is **killed** when the
requirements reported failed or warned are exactly the registry's IDs (a MUST failed, a SHOULD
warned) and none errs; it **survived** when one of its IDs is not reported, and is **inexact** when
they are, but with others, with errors, or with a requirement it keeps (`kept`) not passing. A
variant **passed** when the whole suite, run against it at a shallower property depth
(VARIANT_DEPTH: every test and requirement, fewer generated cases), gives no failure, no error and
no warning but on the SHOULDs it names (`warns`), as the reference gets none. With `--repeat N`
each variant's suite runs N times against its one server with the default workers, and passes
only when every run's verdicts are the same too (report/repeat.py). Writes killtable.md and
killtable.json to the report directory; exits 0 only when every mutant is killed and every
variant passed (docs/proof.md).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from assistant_conformance.contract.catalogue import load
from assistant_conformance.proof.connectors import reference_serving
from assistant_conformance.proof.killreport import (
    MUTANT,
    VARIANT,
    Case,
    CaseOutcome,
    table_text,
    totals,
    write_killtable,
)
from assistant_conformance.proof.mutants import MUTANTS, PROPERTY_LAYER, selection
from assistant_conformance.proof.mutants._base import Bound, Mutant
from assistant_conformance.proof.suiterun import SuiteOptions, run_suite
from assistant_conformance.proof.variants import VARIANTS
from assistant_conformance.reference.connectors import ConnectError, Endpoint
from assistant_conformance.report import closed_pipe
from assistant_conformance.report.model import PASS
from assistant_conformance.report.repeat import Repeats, verdicts_of

BAD = ("fail", "warn", "error")
WHOLE_SUITE: tuple[str, ...] = ()  # no selection: testpaths, i.e. every test
# Variants differ from the reference in spelling, not in what a deeper search would find: a few
# generated cases per operation cover the surface they change, at a third of the default's cost.
VARIANT_DEPTH = ("--examples=3",)
RUN_TIMEOUT = 900.0  # seconds for one case (server start, suite run, report)
# A case is a few tests, its jobs run side by side already: workers would only cost start-ups.
# `--workers` runs each case as a user would, the suite choosing its workers (a timing-robustness
# check of every verdict: a spread run must catch each mutant by the same requirements).
ONE_PROCESS = {"ASSISTANT_API_CONCURRENCY": "1"}
DEFAULT_WORKERS = {"ASSISTANT_API_CONCURRENCY": ""}  # unset: the suite's default


def first_paragraph(cls: type) -> str:
    return " ".join((cls.__doc__ or "").split("\n\n")[0].split())


def mutant_case(name: str, cls: type[Mutant], expected: tuple[str, ...]) -> Case:
    summary = first_paragraph(cls)
    return Case(name, MUTANT, expected, selection(name), summary, bound=cls.bound, kept=cls.kept)


def cases(names: Iterable[str] = (), kinds: Iterable[str] = (MUTANT, VARIANT)) -> list[Case]:
    """The cases to run: every mutant and every variant (or those named)."""
    every = [mutant_case(name, cls, expected) for name, (cls, expected) in MUTANTS.items()]
    every += [
        Case(
            name,
            VARIANT,
            (),
            (*VARIANT_DEPTH, *getattr(cls, "pytest_args", ())),
            first_paragraph(cls),
            getattr(cls, "warnings_allowed", False),
            warns=getattr(cls, "warns", ()),
            timed=getattr(cls, "timed", False),
        )
        for name, cls in VARIANTS.items()
    ]
    wanted, kinds = set(names), set(kinds)
    unknown = wanted - {c.name for c in every}
    if unknown:
        raise ValueError(f"no mutant or variant named {', '.join(sorted(unknown))}")
    return [c for c in every if c.kind in kinds and (not wanted or c.name in wanted)]


def plugins_off(args: tuple[str, ...], spread: bool = False) -> list[str]:
    """Plugins a run does without (each costs start-up time, and only conformance.json is read):
    langsmith's, allure's, anyio's and platformdirs' always, xdist's unless the run uses it, and
    schemathesis' and hypothesis' when the selection leaves out the property layer."""
    off = ["langsmith_plugin", "allure_pytest", "anyio", "platformdirs"]
    off += [] if "-n" in args or spread else ["xdist", "xdist.looponfail"]
    paths = [a for a in args if a == "tests" or a.startswith("tests/")]
    ignored = {a.removeprefix("--ignore=") for a in args if a.startswith("--ignore=")}
    layer = any(p == "tests" or p.startswith("tests/property") for p in paths)
    if paths and not (layer and not set(PROPERTY_LAYER) <= ignored):
        off += ["schemathesis", "hypothesispytest"]
    return [arg for name in off for arg in ("-p", f"no:{name}")]


def run_case(
    case: Case, workdir: Path, timeout: float = RUN_TIMEOUT, spread: bool = False, runs: int = 1
) -> CaseOutcome:
    """One server, `runs` suite runs against it in turn (`spread`: with the default workers, else
    in one process); the verdicts of their conformance.json, and those that differed."""
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        server = reference_serving(case.kind, case.name).start(workdir)
    except ConnectError as exc:
        return CaseOutcome(case, {}, time.monotonic() - started, None, f"server: {exc}")
    outcomes: list[CaseOutcome] = []
    try:
        for run in range(1, runs + 1):
            where = workdir / str(run) if runs > 1 else workdir
            where.mkdir(parents=True, exist_ok=True)
            outcomes.append(one_run(case, where, server, timeout, spread))
    finally:
        server.stop()
    outcome = outcomes[0]
    outcome.seconds = time.monotonic() - started
    for later in outcomes[1:]:  # a finding or a problem of any run is the case's
        outcome.observed = {**later.observed, **outcome.observed}
        outcome.problem = outcome.problem or later.problem
        outcome.kept.update({rid: v for rid, v in later.kept.items() if v != PASS})
    if runs > 1:
        repeats = Repeats(
            server.base_url, [verdicts_of(o.report) if o.report else None for o in outcomes]
        )
        outcome.differing = repeats.differing()
    if case.bound is not None and not outcome.problem:
        outcome.problem = beyond(case.bound, outcome.seconds, outcome.peak_mib, outcome.exit_status)
    return outcome


def one_run(
    case: Case, workdir: Path, server: Endpoint, timeout: float, spread: bool
) -> CaseOutcome:
    """One suite run of `case` against `server`, reporting into `workdir`."""
    options = SuiteOptions(
        workdir / "reports",
        (*case.pytest_args, *plugins_off(case.pytest_args, spread)),
        log=workdir / "pytest.log",
        timeout=timeout,
        env=DEFAULT_WORKERS if spread else ONE_PROCESS,
    )
    run = run_suite(server, options)
    observed: dict[str, str] = {}
    kept: dict[str, str] = {}
    level, peak = "", None
    if run.document is not None:
        verdicts = run.document.verdicts()
        observed = {rid: v for rid, v in verdicts.items() if v in BAD}
        kept = {rid: verdicts.get(rid, "absent") for rid in case.kept}
        level = run.document.certification.level
        peak = run.document.peak_memory_mib
    return CaseOutcome(
        case,
        observed,
        0.0,
        run.returncode,
        run.problem,
        run.tail,
        level=level,
        peak_mib=peak,
        kept=kept,
        report=run.report_dir / "conformance.json",
    )


def beyond(bound: Bound, seconds: float, peak: float | None, status: int | None) -> str:
    """How a hostile mutant's run broke its bound ("" if it did not)."""
    broken = []
    if seconds > bound.seconds:
        broken.append(f"took {seconds:.0f} s, bound {bound.seconds:g} s")
    if peak is not None and peak > bound.peak_mib:
        broken.append(f"peak memory {peak:g} MiB, bound {bound.peak_mib:g} MiB")
    if status != bound.exit:
        broken.append(f"exit {status}, bound {bound.exit}")
    return "; ".join(broken)


def judge_outcomes(outcomes: list[CaseOutcome]) -> None:
    """Set each outcome's result: a mutant's by its IDs, a variant's by having no finding."""
    for outcome in outcomes:
        seen, kind = outcome.observed, outcome.case.kind
        if kind == MUTANT:
            wanted = outcome.case.wanted()
            if outcome.problem or any(seen.get(r) != v for r, v in wanted.items()):
                outcome.result = "survived"
            else:
                kept = all(v == PASS for v in outcome.kept.values())
                outcome.result = "killed" if seen == wanted and kept else "inexact"
            continue
        if outcome.case.lenient:  # SHOULD warnings only, and every part of the contract met
            catalogue = load()
            only_should = all(
                v == "warn" and catalogue[r].level == "SHOULD" for r, v in seen.items()
            )
            good = not outcome.problem and only_should and outcome.level == "full"
            good = good and not outcome.differing
            outcome.result = "passed" if good else "failed"
            continue
        allowed = {rid: "warn" for rid in outcome.case.warns}  # the SHOULDs it breaks, if any
        own = all(allowed.get(rid) == v for rid, v in seen.items())
        bad = outcome.problem or not own or outcome.differing
        outcome.result = "failed" if bad else "passed"


def rank(case: Case) -> int:
    """Longest first, so the pool ends together: spread-out whole-suite runs (the slowest), whole-
    suite runs, then the property layer's mutants, then the rest."""
    if case.kind != MUTANT:
        return 0 if "-n" in case.pytest_args else 1
    return 2 if any(p in PROPERTY_LAYER for p in case.pytest_args) else 3


def run_cases(
    selected: list[Case],
    workdir: Path,
    jobs: int,
    timeout: float = RUN_TIMEOUT,
    spread: bool = False,
    repeat: int = 1,
    spread_timed: bool = False,
) -> list[CaseOutcome]:
    """Every case, `jobs` at a time, longest first; judged. A variant runs `repeat` times against
    its server, spread when repeated (`spread_timed`: a timed one always)."""
    order = sorted(selected, key=rank)

    def run(case: Case) -> CaseOutcome:
        runs = repeat if case.kind == VARIANT else 1
        spread_it = spread or runs > 1 or (spread_timed and case.timed)
        return run_case(case, workdir / case.name, timeout, spread_it, runs)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {c.name: pool.submit(run, c) for c in order}
        outcomes = [futures[c.name].result() for c in selected]
    judge_outcomes(outcomes)
    return outcomes


def default_jobs() -> int:
    return max(2, 2 * (os.cpu_count() or 1))  # runs wait on streams and timers: oversubscribe


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m assistant_conformance.proof.killtable",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("names", nargs="*", help="only these mutants or variants (default: all)")
    parser.add_argument("--jobs", type=int, default=default_jobs(), help="cases run at once")
    parser.add_argument("--report-dir", type=Path, default=Path("reports"))
    parser.add_argument("--timeout", type=float, default=RUN_TIMEOUT, help="seconds per case")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument(
        "--workers", action="store_true", help="each case with the suite's default workers"
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="each variant's runs against its server (spread)"
    )
    parser.add_argument(
        "--workdir", type=Path, help="keep each case's server, log and reports here (default: none)"
    )
    args = parser.parse_args(argv)
    try:
        selected = cases(args.names)
    except ValueError as exc:
        parser.error(str(exc))
    if args.list:
        for case in selected:
            ids = " ".join(case.expected or case.warns) or "-"
            print(f"{case.kind:9} {case.name:36} {ids:40} {case.summary}")
        return 0
    started = time.monotonic()
    if args.workdir:
        outcomes = run_cases(
            selected, args.workdir, args.jobs, args.timeout, args.workers, args.repeat
        )
    else:
        with tempfile.TemporaryDirectory(prefix="killtable-") as workdir:
            outcomes = run_cases(
                selected, Path(workdir), args.jobs, args.timeout, args.workers, args.repeat
            )
    wall = time.monotonic() - started
    write_killtable(outcomes, args.report_dir, wall, args.jobs)
    print(table_text(outcomes))
    done = totals(outcomes)
    print(f"\n{done['killed']}; {done['passed']}; {wall:.0f} s with {args.jobs} jobs")
    print(f"written: {args.report_dir / 'killtable.md'}, {args.report_dir / 'killtable.json'}")
    for outcome in outcomes:
        if not outcome.ok:
            print(f"\n--- {outcome.case.name}: {outcome.result}\n{outcome.log[-1500:]}")
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    closed_pipe.exit_quietly(main)
