"""#26: every finding of a run against a mutant replays from its HAR alone: `still fails` against
that mutant, `now passes` against the reference, each in under 5 s, with no token in its file.

One mutant per family: a property-layer check, statuses, authentication (a module fixture's
resource), strict JSON, an incomplete answer, paging, knowledge-base processing (a polling loop),
stream resumption (a stream cut and joined), cancel (a stream read while the cancel is sent), and
a patch read back. And one more: a check still written as test code (`test`: its test is run
again), which costs a pytest start: bounded at 15 s, not 5.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from assistant_conformance.proof import mutants, serve
from assistant_conformance.reference import embedded

pytestmark = pytest.mark.xdist_group("replay")

SHORT = ["--request-timeout=3", "--process-timeout=3"]
FAMILIES = {
    "create-thread-200": list(mutants.selection("create-thread-200")),
    "message-create-200": ["tests/test_conversations.py"],
    "any-token-accepted": ["tests/test_auth.py", "-k", "existing_resource and threads and wrong"],
    "thread-read-with-nan": ["tests/test_threads.py"],
    "answer-cut-short": ["tests/test_runs.py", "-k", "wait"],
    "messages-ignore-limit": ["tests/test_conversations.py", "-k", "limit"],
    "process-never-starts": ["tests/test_knowledge.py", "-k", "processed"],
    "join-ignores-last-event-id": ["tests/test_streams.py", "-k", "join_after"],
    "cancel-does-nothing": ["tests/test_runs.py", "-k", "cancel"],
    "conversation-patch-not-persisted": ["tests/test_conversations.py", "-k", "patch"],
    "conversation-delete-keeps": ["tests/test_conversations.py", "-k", "deleted_conversation"],
}
RERUN = {"conversation-delete-keeps"}  # its check is test code: replayed by running the test
HAR_SCHEMA = resources.files("assistant_conformance.report").joinpath("schemas/har.schema.json")
LINE = re.compile(r"^(\S+)  (still fails|now passes|not replayed)  \((\d+\.\d) s")


@pytest.fixture(scope="module")
def tokens() -> list[str]:
    return [secrets.token_urlsafe(24), secrets.token_urlsafe(24)]


@pytest.fixture(scope="module")
def reference(tokens, tmp_path_factory):
    server = embedded.start(tokens, tmp_path_factory.mktemp("reference") / "reference.db")
    yield server.base_url
    server.stop()


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "assistant_conformance", *args]


def environment(tokens: list[str]) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_API_")}
    return {**clean, "ASSISTANT_API_TOKEN": tokens[0], "ASSISTANT_API_ALT_TOKEN": tokens[1]}


def replay(report: Path, base_url: str, tokens: list[str]) -> tuple[int, dict[str, tuple]]:
    replayed = command("replay", str(report), "--base-url", base_url)
    ran = subprocess.run(
        replayed, env=environment(tokens), capture_output=True, text=True, timeout=300
    )
    said = {m[1]: (m[2], float(m[3])) for m in map(LINE.match, ran.stdout.splitlines()) if m}
    assert tokens[0] not in ran.stdout + ran.stderr
    return ran.returncode, said


@pytest.mark.parametrize("mutant", FAMILIES)
def test_every_finding_replays_against_its_mutant_and_the_reference(
    mutant, tokens, reference, tmp_path
):
    server = serve.start(tokens, tmp_path / "mutant.db", extra_args=["--mutant", mutant])
    try:
        report = tmp_path / "report"
        args = ["run", f"--base-url={server.base_url}", f"--report-dir={report}", *SHORT, "--"]
        ran = subprocess.run(command(*args, *FAMILIES[mutant]),
                             env=environment(tokens), cwd=tmp_path, capture_output=True,
                             text=True, timeout=600)  # fmt: skip
        assert ran.returncode in (0, 1), ran.stdout[-3000:]  # 0: a SHOULD, warned
        hars = sorted((report / "exchanges").glob("*.har"))
        caught = {json.loads(h.read_text())["log"]["_finding"]["requirement"] for h in hars}
        assert caught & set(mutants.MUTANTS[mutant][1]), caught
        for har in hars:
            text = har.read_text()
            assert tokens[0] not in text and tokens[1] not in text
            jsonschema.validate(json.loads(text), json.loads(HAR_SCHEMA.read_text()))
        status, against_mutant = replay(report, server.base_url, tokens)
    finally:
        server.stop()
    ids = {h.stem for h in hars}
    assert status == 1 and set(against_mutant) == ids, against_mutant
    assert {said for said, _ in against_mutant.values()} == {"still fails"}, against_mutant
    status, against_reference = replay(report, reference, tokens)
    assert status == 0 and set(against_reference) == ids, against_reference
    assert {said for said, _ in against_reference.values()} == {"now passes"}, against_reference
    slowest = max(s for _, s in [*against_mutant.values(), *against_reference.values()])
    assert slowest < (15 if mutant in RERUN else 5), (against_mutant, against_reference)
    kinds = {json.loads(h.read_text())["log"]["_finding"]["check"]["kind"] for h in hars}
    assert ("test" in kinds) == (mutant in RERUN), kinds
