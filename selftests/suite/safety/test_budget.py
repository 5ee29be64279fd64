"""The run's budget of what nothing removes: a place held by a create still out is waited for."""

from __future__ import annotations

import threading

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
    assert allowance.already("") == ""
    answered = threading.Thread(target=lambda: allowance.settle(KIND, made=True))
    counts = allowance.counts
    original = counts.get

    def get(name):  # the first look finds it out: let its answer come
        value = original(name)
        if not answered.is_alive() and not original(KIND):
            answered.start()
            answered.join()
        return value

    counts.get = get  # type: ignore[method-assign]
    assert allowance.already(KIND) == f"not sent again: the run made 1 {KIND}"
