"""Runs (interface 3, 4.4 and 6): cancel, wait, the run list and its paging."""

from __future__ import annotations

import time

import pytest

from assistant_conformance.suite.flows import AGREE_APART, AGREE_TRIES, in_order, runs
from assistant_conformance.suite.http.sse import LiveStream
from assistant_conformance.suite.judging import checks, findings

CANCEL_WORDS = 200  # about 4 s on the reference (20 ms a token): long enough to cancel mid-run
WAIT_WORDS = 20  # a GET right after an early answer would still see the run running
PAGED_RUNS = 3
# A run that reads `success` after its cancel was answered is read again this many seconds later
# before it is judged: a queue-backed server may store the graph's end before the cancel's.
CANCEL_SETTLE = 2.0


@pytest.mark.req(
    "THR-STATUS",
    "RUN-STATUS",
    "RUN-STREAM-CONTENT-TYPE",
    "RUN-CANCEL",
    "RUN-CANCEL-ENDS-STREAM",
    "RUN-CANCEL-IDEMPOTENT",
)
def test_cancel_interrupts_a_running_run_and_ends_its_stream(api, agent, ledger, suite_settings):
    thread_id = runs.create_thread(api, ledger)
    live = LiveStream(
        api,
        "POST",
        runs.runs_url(thread_id, tail="/stream"),
        suite_settings.process_timeout,
        json_body=runs.run_body(agent, CANCEL_WORDS, runs.MANY_EVENTS),
    ).start()
    live.wait_for(3, suite_settings.request_timeout)
    runs.check_stream(live, 201)
    run_id = runs.find_run_id(api, thread_id, live.events, live.response_headers)
    before = api.get(runs.runs_url(thread_id, run_id))
    if runs.run_status(before) in checks.TERMINAL_RUN:
        raise findings.Blocked(
            f"not judged: the run ended ({runs.run_status(before)}) after {len(live.events)} "
            f"events, before it could be cancelled: name an agent whose runs last while it "
            f"streams one event per word of its input ({CANCEL_WORDS} words were sent)"
        )

    cancel = api.post(runs.runs_url(thread_id, run_id, "/cancel"))
    ended_first = live.closed_by_server  # the stream had ended by the time the cancel answered
    findings.expect_status("RUN-STATUS", cancel, 201)
    findings.require("RUN-CANCEL", runs.is_success(cancel), "cancel answers a 2xx", cancel, cancel)
    # A cancel that does nothing lets the stream run to its natural end (seconds later): the bound
    # is one request timeout, and the run must not succeed.
    ended = live.finish(suite_settings.request_timeout)
    findings.expect(
        "RUN-CANCEL-ENDS-STREAM",
        ended,
        f"the stream ends within {suite_settings.request_timeout:g} s of the cancel",
        f"still open after {len(live.events)} events ({live.error or 'no end'})",
        live.exchange,
        check=checks.StreamEndsCheck(entry=findings.index(live.entry)),
    )
    # A status is where the run's reads end: a queue-backed server may show the cancel a moment
    # after it answered it (read until two reads agree, AGREE_APART apart; a status contradicting
    # the cancel, again CANCEL_SETTLE later).
    after, statuses, stayed = runs.settled_status(
        api, thread_id, run_id, suite_settings.process_timeout
    )
    if runs.run_status(after) == "success":  # contradicts the cancel: read again, later
        time.sleep(CANCEL_SETTLE)
        after, later, stayed = runs.settled_status(
            api, thread_id, run_id, suite_settings.process_timeout
        )
        statuses += [f"({CANCEL_SETTLE:g} s later)", *later]
    status, read = runs.run_status(after), f"statuses read after the cancel: {in_order(statuses)}"
    if not stayed and status in checks.TERMINAL_RUN:  # not terminal in time: judged below
        raise findings.Blocked(f"not judged: the run's status never read the same twice; {read}")
    if status == "success" and (ended_first or runs.run_status(cancel) == "success"):
        how = "its stream had ended" if ended_first else "the cancel answered it success"
        raise findings.Blocked(
            f"not judged: the run finished before the cancel took effect ({how}); {read}"
        )
    cancelled = tuple(sorted(set(checks.TERMINAL_RUN) - {"success"}))
    findings.judge(
        "RUN-CANCEL",
        checks.FieldCheck(entry=findings.index(after), key="status", in_=cancelled),
        f"a terminal status other than success, where the reads end ({read})",
        after,
    )

    again = api.post(runs.runs_url(thread_id, run_id, "/cancel"))
    findings.expect(
        "RUN-CANCEL-IDEMPOTENT", again.status_code < 500, "no 5xx for a second cancel", again, again
    )
    final, statuses, _ = runs.settled_status(api, thread_id, run_id, AGREE_APART, status)
    findings.expect(
        "RUN-CANCEL-IDEMPOTENT",
        runs.run_status(final) == status,
        f"the run stays {status}",
        f"statuses read after the second cancel: {in_order(statuses)}",
        final,
    )


@pytest.mark.req("THR-STATUS", "RUN-STATUS", "RUN-WAIT-COMPLETES", "ROBUST-NO-5XX")
def test_wait_answers_only_after_the_run_is_terminal(api, agent, ledger, suite_settings):
    thread_id = runs.create_thread(api, ledger)
    response = api.post(
        runs.runs_url(thread_id, tail="/wait"),
        json=runs.run_body(agent, WAIT_WORDS),
        timeout=suite_settings.process_timeout,
    )
    findings.expect("ROBUST-NO-5XX", response.status_code < 500, "no 5xx", response, response)
    findings.require_success("RUN-STATUS", response, 201)
    run_id = runs.run_id_in([], dict(response.headers))
    if run_id:
        run = api.get(runs.runs_url(thread_id, run_id))
        findings.expect(
            "RUN-WAIT-COMPLETES",
            runs.run_status(run) in checks.TERMINAL_RUN,
            "a terminal status right after wait answered",
            runs.run_status(run),
            run,
        )
        return
    # No Content-Location: every run of the thread (there is only this one) must be terminal.
    listed = api.get(runs.runs_url(thread_id), params={"limit": 10, "offset": 0})
    listed_runs = runs.of_thread(checks.list_of(runs.json_of(listed)) or [], thread_id)
    statuses = [r.get("status") for r in listed_runs]
    findings.expect(
        "RUN-WAIT-COMPLETES",
        bool(statuses) and all(s in checks.TERMINAL_RUN for s in statuses),
        "the thread's run listed with a terminal status right after wait answered",
        statuses,
        listed,
    )


@pytest.mark.req("THR-STATUS", "RUN-STATUS", "RUN-GET-CREATED", "RUN-LIST-PAGING")
def test_run_list_pages_by_limit_and_offset(api, agent, ledger):
    thread_id = runs.create_thread(api, ledger)
    created = []
    for _ in range(PAGED_RUNS):
        response = api.post(runs.runs_url(thread_id), json=runs.run_body(agent, 1, runs.QUEUED))
        findings.require_success("RUN-STATUS", response, 201)
        body = runs.json_of(response)
        run_id = body.get("run_id") if isinstance(body, dict) else None
        findings.require(
            "RUN-GET-CREATED", isinstance(run_id, str), "the created run's run_id", body, response
        )
        created.append(run_id)
    for run_id in created:
        got = api.get(runs.runs_url(thread_id, run_id))
        findings.expect_status("RUN-STATUS", got, 200)
        findings.expect(
            "RUN-GET-CREATED",
            (runs.json_of(got) or {}).get("run_id") == run_id,
            f"GET answers run {run_id}",
            got,
            got,
        )
    everything, pages, singles = paged(api, thread_id)
    findings.expect(
        "RUN-GET-CREATED",
        set(created) <= set(everything),
        f"the list holds every created run {created}",
        everything,
    )
    # Judged against the whole list read around the pages, unchanged: a list may hold more than
    # this thread's runs (the document does not say), and other traffic may add to it.
    sizes = [len(everything[offset : offset + 2]) for offset in (0, 2, 4)]
    findings.expect(
        "RUN-LIST-PAGING",
        [len(p) for p in pages] == sizes,
        f"pages of {sizes} runs (limit 2, of a list of {len(everything)})",
        pages,
    )
    flat = [r for p in pages for r in p]
    findings.expect("RUN-LIST-PAGING", len(set(flat)) == len(flat), "no run on two pages", pages)
    findings.expect(
        "RUN-LIST-PAGING",
        set(flat) == set(everything[:6]),
        f"pages together hold the list's first 6 {everything[:6]}",
        pages,
    )
    findings.expect(
        "RUN-LIST-PAGING",
        [r for p in singles for r in p] == everything[:PAGED_RUNS],
        "limit 1 pages follow the full list's order",
        singles,
    )


def paged(api, thread_id: str) -> tuple[list[str], list[list[str]], list[list[str]]]:
    """The whole list, its pages of 2 and of 1, read while the list stays the same (read whole
    before and after the pages; again, AGREE_APART apart, AGREE_TRIES times at most, until so)."""
    for _ in range(AGREE_TRIES):
        everything = page(api, thread_id, 100, 0)
        pages = [page(api, thread_id, 2, offset) for offset in (0, 2, 4)]
        singles = [page(api, thread_id, 1, offset) for offset in range(PAGED_RUNS)]
        if page(api, thread_id, 100, 0) == everything:
            return everything, pages, singles
        time.sleep(AGREE_APART)
    raise findings.Blocked(
        f"not judged: the run list changed while it was paged, {AGREE_TRIES} times "
        f"{AGREE_APART:g} s apart (other traffic adds to it)"
    )


def page(api, thread_id: str, limit: int, offset: int) -> list[str]:
    response = api.get(runs.runs_url(thread_id), params={"limit": limit, "offset": offset})
    findings.expect_status("RUN-STATUS", response, 200)
    listed_runs = checks.list_of(runs.json_of(response))
    findings.require(
        "RUN-LIST-PAGING", listed_runs is not None, "a list of runs", response, response
    )
    return [r.get("run_id") for r in listed_runs or [] if isinstance(r, dict)]


@pytest.mark.req("THR-STATUS", "RUN-STATUS", "RUN-PAGING-REQUIRED")
def test_run_list_rejects_missing_or_non_numeric_paging(api, ledger):
    thread_id = runs.create_thread(api, ledger)
    # The same list with both parameters succeeds, so a 4xx below is about the parameter.
    valid = api.get(runs.runs_url(thread_id), params={"limit": 10, "offset": 0})
    findings.expect_status("RUN-STATUS", valid, 200)
    cases = {
        "no limit": {"offset": 0},
        "no offset": {"limit": 10},
        "neither": {},
        "limit not a number": {"limit": "ten", "offset": 0},
        "offset not a number": {"limit": 10, "offset": "zero"},
    }
    for name, params in cases.items():
        response = api.get(runs.runs_url(thread_id), params=params)
        findings.expect_rejected("RUN-PAGING-REQUIRED", response, f"list with {name}", valid)
