"""Thread usage (interface 4.4): rows over a range holding a finished run; start and end required.

The format of `start` and `end` is not shown by the contract. The suite sends ISO 8601 first and,
when the target answers that with a 4xx, the deployed servers' UTC hour `yyyy-MM-dd HH`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest

from assistant_conformance.suite.flows import is_client_error, json_of, runs
from assistant_conformance.suite.flows.control import finished_run
from assistant_conformance.suite.judging import checks, findings

FORMATS = ("%Y-%m-%dT%H:00:00Z", "%Y-%m-%d %H")  # ISO 8601, then the deployed hour format


def usage_url(thread_id: str) -> str:
    return f"{runs.THREADS}/{thread_id}/usage"


def bounds(fmt: str) -> dict[str, str]:
    """A range of whole UTC hours from the hour before now to the hour after."""
    hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    return {
        "start": (hour - timedelta(hours=1)).strftime(fmt),
        "end": (hour + timedelta(hours=1)).strftime(fmt),
    }


def read_usage(api, thread_id: str) -> tuple[httpx.Response, dict[str, str]]:
    """The usage answer in the first format the target accepts (else the last answer)."""
    for fmt in FORMATS:
        params = bounds(fmt)
        response = api.get(usage_url(thread_id), params=params)
        if not is_client_error(response):
            break
    return response, params


def thread_with_a_finished_run(api, agent, ledger, suite_settings) -> str:
    """A thread with a run known to be over, made the first way the run control found working."""
    thread_id = runs.create_thread(api, ledger)
    run_id = finished_run(agent, thread_id)
    runs.wait_terminal(api, thread_id, run_id, suite_settings.process_timeout)
    return thread_id


@pytest.mark.req("THR-STATUS", "USAGE-STATUS", "USAGE-ROWS")
def test_usage_over_a_finished_run_answers_token_rows(api, agent, ledger, suite_settings):
    thread_id = thread_with_a_finished_run(api, agent, ledger, suite_settings)
    response, params = read_usage(api, thread_id)
    findings.require_success("USAGE-STATUS", response, 200)
    rows = checks.list_of(json_of(response))
    counted = [
        r
        for r in rows or []
        if isinstance(r, dict)
        and isinstance(r.get("currency"), str)
        and isinstance(r.get("tokenUsed"), int | float)
        and not isinstance(r.get("tokenUsed"), bool)
    ]
    findings.expect(
        "USAGE-ROWS",
        bool(counted) and sum(r["tokenUsed"] for r in counted) > 0,
        f"rows {{currency, tokenUsed}} counting its tokens ({params['start']} to {params['end']})",
        response,
        response,
    )


@pytest.mark.req("THR-STATUS", "USAGE-STATUS", "USAGE-RANGE-REQUIRED")
def test_usage_rejects_a_missing_start_or_end(api, ledger):
    thread_id = runs.create_thread(api, ledger)
    control, params = read_usage(api, thread_id)
    # The full request is the control: a 4xx below is about the missing bound only if it passed.
    findings.expect_status("USAGE-STATUS", control, 200)
    for missing in ("start", "end"):
        partial = {k: v for k, v in params.items() if k != missing}
        got = api.get(usage_url(thread_id), params=partial)
        findings.expect_rejected("USAGE-RANGE-REQUIRED", got, f"usage without {missing}", control)
    got = api.get(usage_url(thread_id))
    findings.expect_rejected("USAGE-RANGE-REQUIRED", got, "usage without start and end", control)
