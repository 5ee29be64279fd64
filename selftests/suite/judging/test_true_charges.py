"""Verdicts charged by what failed, on servers that use the room the document leaves: a state write
refused until the thread has run, events numbered only in an older spelling, prefixes that share a
store whose deleted knowledge bases answer empty, a replay judged without the event ids it does
not need. Each runs the scenario module it concerns against the double, served in-process."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from safety_support import ALT_TOKEN, TOKEN, Done, reference_app, run_suite, serve
from starlette.types import Receive, Scope, Send

from assistant_conformance.proof.mutants import with_mutant
from assistant_conformance.proof.mutants._base import send_json
from assistant_conformance.proof.variants import with_variant
from assistant_conformance.proof.variants.threads import StateWriteNeedsRun

pytestmark = pytest.mark.xdist_group("true-charges")
RUN_LIST = re.compile(r"/api/ai/threads/[^/]+/runs")
RUN_CREATE = re.compile(r"(/api/ai/threads/[^/]+)/runs(?:/wait|/stream)?")


def suite_against(app: object, report_dir: Path, *args: str) -> Done:
    with serve(app) as url:  # type: ignore[arg-type]
        return run_suite(
            report_dir, *args, f"--base-url={url}", f"--token={TOKEN}", f"--alt-token={ALT_TOKEN}"
        )


def reason_of(done: Done, requirement: str) -> str:
    return next(r["reason"] for r in done.json()["requirements"] if r["id"] == requirement)


class EveryThreadsRunList:
    """Every thread's run list, as the suite reads it, answers the list of the first thread that
    had a run, as a server whose run list holds every thread's runs: what a check knows of its own
    thread's runs must not come from it."""

    def __init__(self, app: object) -> None:
        self.app, self.first = app, ""

    @property
    def state(self) -> object:
        return self.app.state  # type: ignore[attr-defined]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            made = RUN_CREATE.fullmatch(scope["path"]) if scope["method"] == "POST" else None
            self.first = self.first or (made[1] if made else "")
            if scope["method"] == "GET" and RUN_LIST.fullmatch(scope["path"]) and self.first:
                path = self.first + "/runs"
                scope = {**scope, "path": path, "raw_path": path.encode()}
        await self.app(scope, receive, send)  # type: ignore[operator]


def test_a_state_write_refused_until_a_run_is_judged_after_one(tmp_path: Path) -> None:
    """409 on a thread that never ran: the check runs its own thread once (knowing it never ran,
    whatever the run list says), writes again, and judges what it reads back."""
    app = EveryThreadsRunList(StateWriteNeedsRun(reference_app(tmp_path)))
    done = suite_against(
        app, tmp_path / "reports", "tests/scenario/test_threads.py", "-k", "state or history"
    )
    verdicts = done.verdicts()
    assert verdicts["THR-STATE-PERSISTS"] == "pass", done.output
    assert verdicts["THR-HISTORY-ORDERED"] == "pass", done.output


class StateWriteAlways409:
    """Every state write answers 409: no run reaches the state the write asks."""

    def __init__(self, app: object) -> None:
        self.app = app

    @property
    def state(self) -> object:
        return self.app.state  # type: ignore[attr-defined]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        writes = scope["type"] == "http" and scope["method"] == "POST"
        if writes and scope["path"].endswith("/state"):
            await send_json(send, 409, {"message": "run an assistant first"})
            return
        await self.app(scope, receive, send)  # type: ignore[operator]


def test_a_state_write_still_refused_after_a_run_says_so(tmp_path: Path) -> None:
    app = StateWriteAlways409(reference_app(tmp_path))
    done = suite_against(
        app, tmp_path / "reports", "tests/scenario/test_threads.py", "-k", "state_written"
    )
    reason = reason_of(done, "THR-STATE-PERSISTS")
    assert done.verdicts()["THR-STATE-PERSISTS"] == "skip", done.output
    assert "on a thread that never ran" in reason and "after one run" in reason, reason


def test_event_ids_are_asked_in_each_spelling_before_they_are_judged(tmp_path: Path) -> None:
    app = with_variant(reference_app(tmp_path), "ids-on-continue-only")
    done = suite_against(app, tmp_path / "reports", "tests/scenario/test_streams.py")
    assert done.returncode == 0, done.output
    assert done.verdicts()["RUN-STREAM-EVENT-IDS"] == "pass", done.output
    numbering = done.json()["runs"]["agent"]["numbering"]
    assert numbering == 'given when asked on_disconnect: "continue"', numbering


@pytest.mark.parametrize(
    ("mutant", "replay"),
    [("events-without-ids", "pass"), ("events-without-ids-replay-empty", "warn")],
)
def test_a_replay_is_judged_without_event_ids(tmp_path: Path, mutant: str, replay: str) -> None:
    """Events without ids: the replay of a finished run is judged all the same, by the events'
    names and data (a whole replay passes, an empty one warns); no id, no repeat told by one."""
    app = with_mutant(reference_app(tmp_path), mutant)
    done = suite_against(app, tmp_path / "reports", "tests/scenario/test_streams.py")
    verdicts = done.verdicts()
    assert verdicts["RUN-JOIN-REPLAY"] == replay, done.output
    assert verdicts["RUN-STREAM-EVENT-IDS"] == "fail", done.output


def test_a_check_across_prefixes_compares_the_prefixes(tmp_path: Path) -> None:
    """A deleted knowledge base answering 200 [] under both prefixes: they share one store
    (KB-PREFIXES-SHARED holds); that the deleted answers as a living one is KB-DELETE-GONE's."""
    app = with_variant(reference_app(tmp_path), "deleted-kb-status-empty")
    done = suite_against(app, tmp_path / "reports", "tests/scenario/test_knowledge_prefixes.py")
    verdicts = done.verdicts()
    assert verdicts["KB-PREFIXES-SHARED"] == "pass", done.output
    assert verdicts["KB-DELETE-GONE"] == "warn", done.output


def test_processing_that_never_completes_warns_whichever_test_polls_first(tmp_path: Path) -> None:
    """Processing that never ends, the prefixes' test polling first (with workers any test may):
    its poll waits its whole bound and is KB-PROCESS-COMPLETES's evidence, though that test does
    not name it; the processing tests after it read once, not judged. Before, the requirement
    was only skipped: its verdict depended on which test polled first."""
    app = with_mutant(reference_app(tmp_path), "process-never-starts")
    first = ["tests/scenario/test_knowledge_prefixes.py", "tests/scenario/test_knowledge.py"]
    order = [*first, "-k", "shared or terminal", "-p", "no:randomly", "-n", "0"]
    done = suite_against(app, tmp_path / "reports", *order, "--process-timeout=2")
    assert done.verdicts()["KB-PROCESS-COMPLETES"] == "warn", done.output
    assert "waited once, not again" in done.output, done.output  # the later polls read once
