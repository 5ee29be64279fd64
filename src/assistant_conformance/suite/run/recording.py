"""One test, from its set-up to its report's verdict (`TestRecording`, a plugin object registered
at configure): the exchanges its fixtures made (a finding's start), its record opened around its
call (what it finds, what the doors observe, the operations its exchanges show absent), its HAR
kept, and the report's outcome decided from its findings (run/outcomes.py).
"""

from __future__ import annotations

from collections.abc import Generator

import pytest

from assistant_conformance.suite.evidence import har
from assistant_conformance.suite.http import running_test, trail
from assistant_conformance.suite.http.observe import AnswerFault
from assistant_conformance.suite.judging import answer_charges, findings
from assistant_conformance.suite.judging.findings import TestRecord
from assistant_conformance.suite.run import outcomes, stats
from assistant_conformance.suite.run.outcomes import requirement_ids
from assistant_conformance.suite.run.state import (
    RECORD_KEY,
    measurements,
    run_setup,
    target_found,
)


class TestRecording:
    """Each test's record, its evidence and its outcome."""

    __test__ = False  # a plugin, not a test class

    def __init__(self) -> None:
        self.origins: list[trail.Entry] = []  # fixtures' exchanges (a finding's start)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self) -> Generator[None, None, None]:
        """What fixtures exchange is kept: a finding of a later test may use what they made."""
        with running_test.following(self.origins):
            try:
                return (yield)
            finally:
                del self.origins[: -har.ORIGINS_KEPT]

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        settings = run_setup(item.config).settings
        ids = frozenset(requirement_ids(item))
        record = TestRecord(ids, settings.strict_conformance, item.nodeid)
        item.stash[RECORD_KEY] = record
        with findings.recording(record):
            try:
                return (yield)
            except AnswerFault as fault:  # the target's fault, not the suite's: a finding
                raise findings.Blocked(answer_charges.charge_fault(fault)) from None
            finally:
                self.finish(item.config, record)

    def finish(self, config: pytest.Config, record: TestRecord) -> None:
        """The test's judgements held until its end, what the doors observed and the operations
        its exchanges show absent charged; its exchanges kept as HAR."""
        setup, found = run_setup(config), target_found(config)
        try:
            record.finish()  # judgements held until the test's end (the property layer's)
        finally:
            answer_charges.charge_observations(record)  # what the doors observed during the test
            if setup.active:  # the operations its exchanges show absent (suite/http/absent.py)
                guard = found.safety.guard if found.safety else None
                probed = {a.operation for a in found.lacking}
                lacking = answer_charges.charge_absent(record, guard.seen if guard else (), probed)
                measurements(config).add(stats.ABSENT, *(a.as_dict() for a in lacking))
            ledger = found.safety.ledger if found.safety else None
            target = ledger.target if ledger else setup.settings.base_url or ""
            prefix = ledger.run_prefix if ledger else ""
            har.keep(record, self.origins, har.HarRun.of(setup.settings, target, prefix))

    @pytest.hookimpl(wrapper=True, trylast=True)  # inside pytest's skipping, allure's and junit's
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        outcomes.redact_report(report, call)  # an exception, captured output: before it is shown
        record = item.stash.get(RECORD_KEY, None) if call.when == "call" else None
        caps = target_found(item.config).capabilities
        extra = {"capabilities": {g: s.as_dict() for g, s in caps.items()}} if caps else {}
        outcomes.decide_outcome(
            report,
            call,
            requirement_ids(item),
            record.findings if record else [],
            run_setup(item.config).baseline,
            extra,
        )
        return report
