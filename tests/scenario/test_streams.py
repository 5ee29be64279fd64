"""Run streams (interface 4.4 and 6): event ids, resumption by join and by POST, replay, the end.

Each check needs only what it uses: a replay of a finished run (a join without last-event-id) is
judged on any stream read to its end, with event ids or without; resuming needs the ids.

A stream is dropped by closing the connection after a number of events chosen from --seed, so a
failure is reproduced by running again with the same seed.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from assistant_conformance.suite.flows import runs
from assistant_conformance.suite.flows.agreement import Agreements
from assistant_conformance.suite.http.sse import SseEvent, read_stream
from assistant_conformance.suite.judging import checks, findings

STREAM_WORDS = 20  # a short run: one event per word on a token-streaming agent
RESUME_WORDS = 40  # long enough to drop its stream mid-run and join while it still runs


# What every test here checks on the way: a thread, a streamed run and its events.
STREAMED = ("THR-STATUS", "RUN-STATUS", "RUN-STREAM-CONTENT-TYPE", "RUN-STREAM-EVENT-IDS")


def drop_point(seed: int, name: str, low: int, high: int) -> int:
    return random.Random(f"{seed}:{name}").randint(low, high)


def replay(api, thread_id: str, run_id: str, settings, **headers: str):
    read = read_stream(
        api,
        "GET",
        runs.runs_url(thread_id, run_id, "/stream"),
        deadline=settings.process_timeout,
        headers=headers,
        run_ended=runs.ended_probe(api, thread_id, run_id),
    )
    runs.check_stream(read, 200)
    return read


@pytest.mark.req(
    *STREAMED,
    "RUN-STREAM-ENDS",
    "RUN-STREAM-AGREES",
    "RUN-JOIN-REPLAY",
)
def test_stream_has_event_ids_ends_and_agrees_with_the_run(api, agent, ledger, suite_settings):
    thread_id = runs.create_thread(api, ledger)
    body = runs.run_body(agent, STREAM_WORDS, runs.IDS)
    started = runs.stream_run(api, thread_id, body, suite_settings.process_timeout)
    read = started.read
    runs.check_event_ids(read.events, "the POST stream", read.exchange)
    findings.expect(
        "RUN-STREAM-ENDS",
        read.closed_by_server,
        f"the server ends the stream within {suite_settings.process_timeout:g} s",
        f"still open ({read.cut}) after {len(read.events)} events",
        read.exchange,
    )
    agreements = Agreements(api, thread_id)
    response = agreements.sample(started.run_id, read.events)
    findings.require_success("RUN-STATUS", response, 200)
    agreements.judge()
    check_state(api, thread_id, read.events)
    if read.closed_by_server:  # the whole run streamed: its replay is judged by it, ids or none
        runs.wait_terminal(api, thread_id, started.run_id, suite_settings.process_timeout)
        check_replay(read.events, [], replay(api, thread_id, started.run_id, suite_settings))


def check_state(api, thread_id: str, events: list[SseEvent]) -> None:
    """RUN-STREAM-AGREES: LangGraph's last `values` event is the thread's state after the run."""
    values = [runs.parsed(e.data) for e in events if e.event == "values"]
    if values and isinstance(values[-1], dict) and not any(e.event == "error" for e in events):
        state = api.get(f"{runs.THREADS}/{thread_id}/state")
        got = (runs.json_of(state) or {}).get("values") if runs.is_success(state) else None
        findings.expect(
            "RUN-STREAM-AGREES",
            got == values[-1],
            "thread state values = the last values event",
            got,
            state,
        )


@pytest.mark.req(
    *STREAMED,
    "RUN-STREAM-ENDS",
    "RUN-STREAM-AGREES",
    "RUN-JOIN-RESUME",
    "RUN-JOIN-REPLAY",
)
def test_join_after_a_dropped_stream_resumes_without_gap_or_duplicate(
    api, agent, ledger, suite_settings
):
    thread_id = runs.create_thread(api, ledger)
    drop = drop_point(suite_settings.seed, "join", 2, RESUME_WORDS - 20)
    body = runs.run_body(agent, RESUME_WORDS, runs.RESUMABLE)
    started = runs.stream_run(api, thread_id, body, suite_settings.process_timeout, max_events=drop)
    first, run_id = started.read, started.run_id
    runs.need_events(first, 2, "resuming a join after some of them")
    # A stream that ended before the drop point is resumed from its middle instead.
    seen = first.events if first.cut else first.events[: max(2, len(first.events) // 2)]
    last_id = runs.last_named(seen)
    findings.require(
        "RUN-STREAM-EVENT-IDS",
        bool(last_id),
        "an id on the last event received before the drop",
        checks.shown(seen),
        first.exchange,
    )
    joined = replay(api, thread_id, run_id, suite_settings, **{"last-event-id": last_id})
    findings.judge(
        "RUN-STREAM-ENDS",
        checks.StreamEndsCheck(entry=findings.index(joined.entry)),
        "the joined stream ends when the run does",
        joined.exchange,
    )
    runs.wait_terminal(api, thread_id, run_id, suite_settings.process_timeout)
    full = replay(api, thread_id, run_id, suite_settings)
    for what, read in (("the POST stream", first), ("the join", joined), ("the replay", full)):
        runs.check_event_ids(read.events, what, read.exchange)
    agreements = Agreements(api, thread_id)
    agreements.sample(run_id, [*seen, *joined.events])
    agreements.judge()
    replay_ok = check_replay(seen, joined.events, full)
    where = f"dropped after event {len(seen)} (id {last_id!r}, seed {suite_settings.seed})"
    received = checks.EventSlice(entry=findings.index(first.entry), end=len(seen))
    got: tuple[checks.EventSlice, ...] = (checks.EventSlice(entry=findings.index(joined.entry)),)
    findings.judge(
        "RUN-JOIN-RESUME",
        checks.EventsNewCheck(got=got, seen=(received,)),
        f"no event already received ({where})",
        joined.exchange,
    )
    if replay_ok:  # the replay is the truth the resumed part is measured against
        expected = (checks.EventSlice(entry=findings.index(full.entry), start=len(seen)),)
        truth = f"exactly the events after {last_id!r}: {checks.shown(full.events[len(seen) :])}"
        truth += f" ({where})"
    else:  # no replay: one join from the first event received sends the same, after it
        start = next(i for i, e in enumerate(seen) if e.own_id and e.id)
        since_id = seen[start].id
        since = replay(api, thread_id, run_id, suite_settings, **{"last-event-id": since_id})
        expected = (checks.EventSlice(entry=findings.index(since.entry)),)
        got = (replace(received, start=start + 1), *got)
        truth = (
            f"after {since_id!r}, the events received then those of the join, as one join "
            f"from {since_id!r} sends them: {checks.shown(since.events)} ({where}; no replay)"
        )
    findings.judge(
        "RUN-JOIN-RESUME",
        checks.EventsEqualCheck(got=got, expected=expected),
        truth,
        joined.exchange,
    )


def check_replay(seen: list[SseEvent], joined: list[SseEvent], full) -> bool:
    """RUN-JOIN-REPLAY: a join without last-event-id after the run sends all from the first. It
    needs no event id: events are compared by id, name and data (runs.keys: where none carries an
    id, every event; their missing ids are RUN-STREAM-EVENT-IDS' finding)."""
    ids = [e.id for e in full.events if e.own_id and e.id]  # without ids, repeats are not told
    ok = findings.expect(
        "RUN-JOIN-REPLAY",
        runs.keys(full.events[: len(seen)]) == runs.keys(seen),
        f"the replay starts with the events first streamed: {checks.shown(seen)}",
        checks.shown(full.events[: len(seen) + 2]),
        full.exchange,
    )
    findings.expect(  # a replay that does not end: the end's requirement, not the replay's
        "RUN-STREAM-ENDS",
        full.closed_by_server,
        "the replay of a finished run ends",
        f"still open ({full.cut})",
        full.exchange,
    )
    ok &= findings.expect(
        "RUN-JOIN-REPLAY",
        len(set(ids)) == len(ids),
        "a replay that sends each event once",
        f"ids {checks.shown(full.events)}",
        full.exchange,
    )
    if joined:
        ok &= findings.expect(
            "RUN-JOIN-REPLAY",
            bool(full.events) and checks.event_key(full.events[-1]) == checks.event_key(joined[-1]),
            f"the replay ends with the run's last event {checks.shown(joined[-1:])}",
            checks.shown(full.events[-3:]),
            full.exchange,
        )
    return ok


# POST runs/stream starts a new run, so "the events after last-event-id" are the new run's: the
# reference (like the deployed server, which reads the run's event log from that id) sends the new
# run's events whose ids come after it in the run's own order. With per-run ids (the reference, and
# LangGraph) an id taken from an earlier run of the same length is also an id of the new run, so
# the answer is exactly the new run's replay after that id. With ids that never repeat (deployed:
# time-based) no new event matches and the answer must still be an unbroken tail of the replay.
@pytest.mark.req(
    *STREAMED,
    "RUN-STREAM-AGREES",
    "RUN-STREAM-RESUME",
    "RUN-JOIN-REPLAY",
)
def test_stream_post_with_last_event_id_sends_only_later_events(api, agent, ledger, suite_settings):
    thread_id = runs.create_thread(api, ledger)
    body = runs.run_body(agent, STREAM_WORDS, runs.MANY_EVENTS)
    drop = drop_point(suite_settings.seed, "post", 2, STREAM_WORDS)
    started = runs.stream_run(api, thread_id, body, suite_settings.process_timeout, max_events=drop)
    first, first_run = started.read, started.run_id
    runs.need_events(first, 2, "resuming a POST stream from one of them")
    last_id = runs.last_named(first.events)
    findings.require(
        "RUN-STREAM-EVENT-IDS",
        bool(last_id),
        "an id on the last event received",
        checks.shown(first.events),
        first.exchange,
    )
    runs.wait_terminal(api, thread_id, first_run, suite_settings.process_timeout)
    again = runs.stream_run(
        api,
        thread_id,
        body,
        suite_settings.process_timeout,
        headers={"last-event-id": last_id},
        known=[first_run],
    )
    resumed, run_id = again.read, again.run_id
    runs.check_event_ids(resumed.events, "the resumed POST stream", resumed.exchange)
    runs.wait_terminal(api, thread_id, run_id, suite_settings.process_timeout)
    full = replay(api, thread_id, run_id, suite_settings)
    agreements = Agreements(api, thread_id)
    agreements.sample(run_id, full.events if full.closed_by_server else resumed.events)
    agreements.judge()
    replayed = findings.expect(
        "RUN-JOIN-REPLAY",
        full.closed_by_server
        and bool(full.events)
        and set(runs.keys(resumed.events)) <= set(runs.keys(full.events)),
        "the replay of the new run holds every event its POST stream sent",
        checks.shown(full.events),
        full.exchange,
    )
    where = f"last-event-id {last_id!r} (seed {suite_settings.seed})"
    if replayed:
        check_resumed_against_replay(resumed, full.events, last_id, where)
        return
    # No replay to measure against: a join of the new run with the same last-event-id sends, by
    # the document's one definition of resumption, the same events the POST had to send.
    joined = replay(api, thread_id, run_id, suite_settings, **{"last-event-id": last_id})
    if not (joined.closed_by_server and joined.events):
        findings.not_judged(
            "RUN-STREAM-RESUME",
            "not judged: RUN-JOIN-REPLAY failed (no replay of the new run) and a join with "
            f"{where} sent {len(joined.events)} events: nothing to measure the POST stream by",
        )
        return
    findings.expect(
        "RUN-STREAM-RESUME",
        runs.keys(resumed.events) == runs.keys(joined.events),
        f"the events a join of the new run with {where} sends: {checks.shown(joined.events)}",
        checks.shown(resumed.events),
        resumed.exchange,
    )


def check_resumed_against_replay(resumed, events: list[SseEvent], last_id: str, where: str) -> None:
    """RUN-STREAM-RESUME measured by the new run's replay: exactly its events after `last_id`, or
    (an id that is none of its ids) an unbroken tail of them. Only the events a client can name
    are compared (a frame without an id is each connection's own)."""
    events, got = checks.named(events), checks.named(resumed.events)
    ids = [e.id for e in events]
    if last_id in ids:
        expected = events[ids.index(last_id) + 1 :]
        findings.expect(
            "RUN-STREAM-RESUME",
            runs.keys(got) == runs.keys(expected),
            f"only the events after {where}: {checks.shown(expected)}",
            checks.shown(resumed.events),
            resumed.exchange,
        )
        return
    tail = events[len(events) - len(got) :] if got else []
    findings.expect(
        "RUN-STREAM-RESUME",
        bool(got) and runs.keys(got) == runs.keys(tail),
        f"an unbroken tail of the new run's events ({where} is none of its ids)",
        checks.shown(resumed.events),
        resumed.exchange,
    )
