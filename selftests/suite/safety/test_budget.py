"""The run's budget of what nothing removes: a place held by a create still out is waited for."""

from __future__ import annotations

import threading
import time

import pytest

from assistant_conformance.suite.config.shared import SharedCounts
from assistant_conformance.suite.safety.budget import LIMIT, SPARE, Allowance, BudgetSpent

KIND = "chat-kit session"


def test_a_valid_create_waits_for_a_refusal_out_to_give_its_place_back() -> None:
    """Workers at once: refusals in flight hold the places a valid create may take; the valid
    create is sent once one is refused (its place given back), not skipped as spent."""
    allowance = Allowance(SharedCounts(None))
    for _ in range(LIMIT - SPARE):
        allowance.reserve(KIND, refusal=True)  # out, not yet answered
    waiting = threading.Event()
    refused = threading.Thread(target=lambda: (waiting.wait(), allowance.settle(KIND, made=False)))
    refused.start()
    counts = allowance.counts
    original = counts.change

    def change(update):  # the first look finds the places taken: let a refusal come back
        answer = original(update)
        waiting.set()
        return answer

    counts.change = change  # type: ignore[method-assign]
    allowance.reserve(KIND)
    refused.join()
    assert counts.get(f"{KIND} (asked)") == LIMIT - SPARE


def test_a_valid_create_finds_the_budget_spent_once_made_fill_it() -> None:
    allowance = Allowance(SharedCounts(None))
    for _ in range(LIMIT - SPARE):
        allowance.reserve(KIND)
        allowance.settle(KIND, made=True)
    with pytest.raises(BudgetSpent):
        allowance.reserve(KIND)
    allowance.reserve(KIND, refusal=True)  # the spare place stays for a refusal


def test_a_probe_waits_for_a_create_out_and_makes_no_second() -> None:
    """Workers probing at the same moment: one's create is out; another's probe waits for its
    answer and, one made, sends none of its own."""
    allowance = Allowance(SharedCounts(None))
    allowance.reserve(KIND)  # another worker's probe, out
    with allowance.probing("") as known:
        assert known == ""
    answered = threading.Thread(target=lambda: allowance.settle(KIND, made=True))
    counts = allowance.counts
    original = counts.change

    def change(update):  # the first look finds it out: let its answer come
        value = original(update)
        if not answered.is_alive() and not counts.get(KIND):
            answered.start()
            answered.join()
        return value

    counts.change = change  # type: ignore[method-assign]
    with allowance.probing(KIND) as known:
        assert known == f"not sent again: the run made 1 {KIND}"


def test_of_probes_at_the_same_moment_one_is_sent() -> None:
    """Workers that look at the same moment, before either's create is out: one probes, the
    others wait for it (a look and the claim are one step), and once it made one, send none."""
    allowance = Allowance(SharedCounts(None))
    ready, said = threading.Barrier(4), []

    def probe() -> None:
        ready.wait()
        with allowance.probing(KIND) as known:
            said.append(known)
            if not known:  # this one probes: the others look meanwhile; its create makes one
                time.sleep(0.2)
                allowance.reserve(KIND)
                allowance.settle(KIND, made=True)

    workers = [threading.Thread(target=probe) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert sorted(said) == ["", *[f"not sent again: the run made 1 {KIND}"] * 3]
    assert allowance.count(KIND) == 1
