"""The run's budget of what nothing removes: a place held by a create still out is waited for; a
place is kept for each MUST whose check needs one made."""

from __future__ import annotations

import threading
import time

import pytest

from assistant_conformance.suite.config.run_folder import SharedCounts
from assistant_conformance.suite.http import running_test
from assistant_conformance.suite.judging import findings
from assistant_conformance.suite.safety.budget import (
    LIMIT,
    SPARE,
    Allowance,
    BudgetSpent,
    kept_for,
)

KIND = "chat-kit session"


def test_a_valid_create_waits_for_a_refusal_out_to_give_its_place_back() -> None:
    """Workers at once: a refusal in flight holds the place a valid create may take; the valid
    create is sent once it is refused (its place given back), not skipped as spent."""
    allowance = Allowance(SharedCounts(None))
    for _ in range(LIMIT - SPARE - len(kept_for(KIND)) - 1):
        allowance.settle(allowance.reserve(KIND), made=True)
    out = allowance.reserve(KIND, refusal="input")  # out, not yet answered
    waiting = threading.Event()
    refused = threading.Thread(target=lambda: (waiting.wait(), allowance.settle(out, made=False)))
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
    assert counts.get(f"{KIND} (asked)") == 1


def test_a_valid_create_finds_the_budget_spent_once_made_fill_it() -> None:
    allowance = Allowance(SharedCounts(None))
    for _ in range(LIMIT - SPARE - len(kept_for(KIND))):
        allowance.settle(allowance.reserve(KIND), made=True)
    with pytest.raises(BudgetSpent):
        allowance.reserve(KIND)
    allowance.reserve(KIND, refusal="input")  # the spare place stays for a refusal


def checking(*requirements: str) -> findings.TestRecord:
    return findings.TestRecord(frozenset(requirements), strict=False)


def test_a_place_is_kept_for_the_must_whose_check_needs_one() -> None:
    """Whatever other workers' creates come first (a probe, generated and robustness cases a
    lenient target takes, their controls), the MUST's own create finds its place; after it, they
    find the budget spent."""
    assert kept_for(KIND) == {"CHATKIT-STATUS"}
    allowance = Allowance(SharedCounts(None))
    # a probe, and a request without a credential the target took (AUTH's finding)
    first = [allowance.reserve(KIND), allowance.reserve(KIND, refusal="credential")]
    for place in first:
        allowance.settle(place, made=True)
    for refusal in ("", "input"):
        with pytest.raises(BudgetSpent, match="kept for CHATKIT-STATUS"):
            allowance.reserve(KIND, refusal=refusal)
    with running_test.within(checking("CHATKIT-SECRET")), pytest.raises(BudgetSpent):
        allowance.reserve(KIND)  # a SHOULD's check: not the one the place is kept for
    with running_test.within(checking("CHATKIT-STATUS", "CHATKIT-SECRET")):
        allowance.settle(allowance.reserve(KIND), made=True)
    assert allowance.waiting(KIND) == frozenset() and allowance.count(KIND) == LIMIT
    with running_test.within(checking("CHATKIT-STATUS")), pytest.raises(BudgetSpent):
        allowance.reserve(KIND)  # kept once: it took it


def test_a_request_without_a_credential_may_take_the_kept_place_in_flight() -> None:
    """AUTH's MUSTs: a conformant target refuses it and the place comes back."""
    allowance = Allowance(SharedCounts(None))
    for place in [allowance.reserve(KIND), allowance.reserve(KIND, refusal="input")]:
        allowance.settle(place, made=True)
    allowance.settle(allowance.reserve(KIND, refusal="credential"), made=False)
    assert allowance.waiting(KIND) == {"CHATKIT-STATUS"}


def test_no_refusal_of_a_kind_is_risked_once_the_target_made_something_of_one() -> None:
    allowance = Allowance(SharedCounts(None))
    allowance.settle(allowance.reserve(KIND, refusal="input"), made=False)  # refused: as it should
    allowance.settle(allowance.reserve(KIND, refusal="input"), made=True)  # taken: a finding
    with pytest.raises(BudgetSpent, match="another is not risked"):
        allowance.reserve(KIND, refusal="input")
    allowance.settle(allowance.reserve(KIND, refusal="credential"), made=False)  # another kind


def test_a_probe_waits_for_a_create_out_and_makes_no_second() -> None:
    """Workers probing at the same moment: one's create is out; another's probe waits for its
    answer and, one made, sends none of its own."""
    allowance = Allowance(SharedCounts(None))
    probe = allowance.reserve(KIND)  # another worker's probe, out
    with allowance.probing("") as known:
        assert known == ""
    answered = threading.Thread(target=lambda: allowance.settle(probe, made=True))
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
                allowance.settle(allowance.reserve(KIND), made=True)

    workers = [threading.Thread(target=probe) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert sorted(said) == ["", *[f"not sent again: the run made 1 {KIND}"] * 3]
    assert allowance.count(KIND) == 1
