"""Every finding of a run against a mutant replays from its HAR alone: `still fails` against
that mutant, `now passes` against the reference, each in under 5 s, with no token in its file.

One mutant per family: a property-layer check, statuses, authentication (a module fixture's
resource), strict JSON, an incomplete answer, paging, knowledge-base processing (a polling loop),
stream resumption (a stream cut and joined), cancel (a stream read while the cancel is sent), and
a patch read back. And one more: a check still written as test code (`test`: its test is run
again), which costs a pytest start: bounded at 15 s, not 5.

What a replay cannot send again as it was is `not replayed` with why, and no exit of its
own; a generated case is rebuilt whatever its body (none, JSON, text, multipart); a replay or a
run writing into a pipe its reader closed ends without a traceback.
"""

from __future__ import annotations

import json
import re
import secrets
import shlex
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from assistant_conformance.contract import openapi
from assistant_conformance.proof import mutants
from assistant_conformance.proof.connectors import MutantConnector
from assistant_conformance.proof.suiterun import child_environment
from assistant_conformance.reference import embedded
from assistant_conformance.report import redact
from assistant_conformance.suite.evidence.har import Recorded, recorded_of
from assistant_conformance.suite.evidence.replay import Replayer
from assistant_conformance.suite.evidence.unreplayed import NotReplayed
from assistant_conformance.suite.http import trail
from assistant_conformance.suite.http.policy import Policy
from assistant_conformance.suite.http.target import Target
from assistant_conformance.suite.judging import checks
from assistant_conformance.suite.property import scope
from assistant_conformance.suite.property.replayed import AS_STATUS, judge_again, rebuilt
from assistant_conformance.suite.safety.guard import Guard
from assistant_conformance.suite.safety.ledger import LEDGER_DIR, Ledger
from assistant_conformance.suite.safety.session import SafetySession

pytestmark = pytest.mark.xdist_group("replay")

SHORT = ["--request-timeout=3", "--process-timeout=3"]
FAMILIES = {
    "create-thread-200": list(mutants.selection("create-thread-200")),
    "message-create-200": ["tests/scenario/test_conversations.py"],
    "any-token-accepted": [
        "tests/scenario/test_auth.py",
        "-k",
        "existing_resource and threads and wrong",
    ],
    "thread-read-with-nan": ["tests/scenario/test_threads.py"],
    "answer-cut-short": ["tests/scenario/test_runs.py", "-k", "wait"],
    "messages-ignore-limit": ["tests/scenario/test_conversations.py", "-k", "limit"],
    "process-never-starts": ["tests/scenario/test_knowledge.py", "-k", "processed"],
    "join-ignores-last-event-id": ["tests/scenario/test_streams.py", "-k", "join_after"],
    "cancel-does-nothing": ["tests/scenario/test_runs.py", "-k", "cancel"],
    "conversation-patch-not-persisted": ["tests/scenario/test_conversations.py", "-k", "patch"],
    "conversation-delete-keeps": [
        "tests/scenario/test_conversations.py",
        "-k",
        "deleted_conversation",
    ],
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
    clean = child_environment()
    return {**clean, "ASSISTANT_API_TOKEN": tokens[0], "ASSISTANT_API_ALT_TOKEN": tokens[1]}


def replayed(
    report: Path, base_url: str, tokens: list[str], *ids: str
) -> subprocess.CompletedProcess[str]:
    again = command("replay", str(report), *ids, "--base-url", base_url)
    ran = subprocess.run(
        again, env=environment(tokens), capture_output=True, text=True, timeout=300
    )
    assert tokens[0] not in ran.stdout + ran.stderr
    assert "Traceback" not in ran.stderr, ran.stderr[-3000:]
    return ran


def replay(report: Path, base_url: str, tokens: list[str]) -> tuple[int, dict[str, tuple]]:
    ran = replayed(report, base_url, tokens)
    return ran.returncode, said_of(ran.stdout)


def said_of(stdout: str) -> dict[str, tuple[str, float]]:
    return {m[1]: (m[2], float(m[3])) for m in map(LINE.match, stdout.splitlines()) if m}


@contextmanager
def mutant_run(
    mutant: str, selection: list[str], tokens: list[str], tmp_path: Path
) -> Iterator[tuple[Path, str]]:
    """The report folder of a run of `selection` against `mutant`, and the mutant, still served."""
    server = MutantConnector(mutant, tuple(tokens)).start(tmp_path / "mutant")
    report = tmp_path / "report"
    try:
        args = ["run", f"--base-url={server.base_url}", f"--report-dir={report}", *SHORT, "--"]
        ran = subprocess.run(command(*args, *selection), env=environment(tokens), cwd=tmp_path,
                             capture_output=True, text=True, timeout=600)  # fmt: skip
        assert ran.returncode in (0, 1), ran.stdout[-3000:]
        yield report, server.base_url
    finally:
        server.stop()


@pytest.mark.parametrize("mutant", FAMILIES)
def test_every_finding_replays_against_its_mutant_and_the_reference(
    mutant, tokens, reference, tmp_path
):
    server = MutantConnector(mutant, tuple(tokens)).start(tmp_path / "mutant")
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
            assert_polls_thinned(json.loads(text)["log"]["entries"], mutant)
        status, against_mutant = replay(report, server.base_url, tokens)
    finally:
        server.stop()
    ids = {h.stem for h in hars}
    assert status == 1 and set(against_mutant) == ids, against_mutant
    assert {said for said, _ in against_mutant.values()} == {"still fails"}, against_mutant
    status, against_reference = replay(report, reference, tokens)
    assert status == 0 and set(against_reference) == ids, against_reference
    assert {said for said, _ in against_reference.values()} == {"now passes"}, against_reference
    # Replayed from its declared check (quick, whatever the machine's load), not by running its
    # test again, but where the check is test code (RERUN): the kind says which way it went.
    kinds = {json.loads(h.read_text())["log"]["_finding"]["check"]["kind"] for h in hars}
    assert ("test" in kinds) == (mutant in RERUN), kinds
    kinds = {json.loads(h.read_text())["log"]["_finding"]["check"]["kind"] for h in hars}
    assert ("test" in kinds) == (mutant in RERUN), kinds


def assert_polls_thinned(entries: list[dict], mutant: str) -> None:
    """A polling loop is kept as its first and last polls, the last saying how many were left out
    and how long they took (the knowledge base's processing polls until its deadline)."""
    loops: dict[str, list[dict]] = {}
    for entry in entries:
        if "_poll" in entry:
            loops.setdefault(entry["_poll"]["loop"], []).append(entry["_poll"])
    assert all(len(polls) <= 2 for polls in loops.values()), loops
    if mutant == "process-never-starts":
        left_out = [p for polls in loops.values() for p in polls if p.get("skipped")]
        assert left_out and all(p["seconds"] > 0 for p in left_out), loops
        assert len(entries) < 12, len(entries)


# --- what a replay cannot do, said, and a closed pipe ------------------------------------------


def finding_of(har: Path) -> dict:
    return json.loads(har.read_text())["log"]["_finding"]


def forget_first_exchange(har: Path) -> None:
    """The HAR as a run writes it when what the finding's first exchange made was made before the
    exchanges it kept (a long run keeps the last har.ORIGINS_KEPT): that exchange gone, and with
    it where later requests say their values came from."""
    document = json.loads(har.read_text())
    log = document["log"]
    log["entries"] = log["entries"][1:]
    for entry in log["entries"]:
        entry["_provenance"] = [
            {**given, "from": {**given["from"], "entry": given["from"]["entry"] - 1}}
            for given in entry["_provenance"]
            if given["from"]["entry"] != 0
        ]
    log["_finding"]["check"] = (
        checks.from_words(log["_finding"]["check"]).rebased(lambda i: i - 1).as_json()
    )
    har.write_text(json.dumps(document))


def made_by_first_exchange(har: Path) -> bool:
    """Whether a later request of the finding uses a value the first exchange's answer gave."""
    entries = json.loads(har.read_text())["log"]["entries"]
    return any(g["from"]["entry"] == 0 for e in entries[1:] for g in e["_provenance"])


def test_a_resource_the_run_made_before_the_exchanges_it_kept_is_not_replayed(
    tokens, reference, tmp_path
):
    """Its request would name a conversation of the old run, which the replay does not own:
    not sent, said with why, and no exit of its own (the other findings now pass: exit 0)."""
    selection = ["tests/scenario/test_conversations.py", "-k", "created_message or limit"]
    with mutant_run("message-create-200", selection, tokens, tmp_path) as (report, _):
        hars = sorted((report / "exchanges").glob("*.har"))
    assert len(hars) > 1, hars  # one to forget, others to pass
    forgotten = next(h for h in hars if made_by_first_exchange(h))
    forget_first_exchange(forgotten)
    ran = replayed(report, reference, tokens)
    said = said_of(ran.stdout)
    assert said.pop(forgotten.stem)[0] == "not replayed", ran.stdout
    assert {s for s, _ in said.values()} == {"now passes"}, ran.stdout
    assert ran.returncode == 0, ran.stdout
    why = f"  not replayed: {forgotten.stem}: exchange 0 (POST /api/ai/conversations/"
    assert why in ran.stdout and "the reported run made before" in ran.stdout, ran.stdout
    assert "1 not replayed" in ran.stdout, ran.stdout
    alone = replayed(report, reference, tokens, forgotten.stem)  # nothing judged: no pass
    assert alone.returncode == 3 and said_of(alone.stdout)[forgotten.stem][0] == "not replayed"


def test_a_generated_case_without_a_body_replays(tokens, reference, tmp_path):
    """Property-layer findings on operations the document gives no body (a GET with a query, a
    bodyless POST without a credential): still fail against their mutant, now pass against the
    reference, never a schemathesis traceback."""
    selection = ["tests/property/test_property.py", "-k", "usage or copy or cancel"]
    with mutant_run("errors-as-text", selection, tokens, tmp_path) as (report, mutant):
        hars = sorted((report / "exchanges").glob("*.har"))
        ran = replayed(report, mutant, tokens)
    requests = [json.loads(h.read_text())["log"]["entries"][-1]["request"] for h in hars]
    assert {finding_of(h)["check"]["kind"] for h in hars} == {"schemathesis"}, hars
    assert not any("postData" in r for r in requests), requests
    assert {r["method"] for r in requests} == {"GET", "POST"}, requests
    assert any(r["queryString"] for r in requests), requests
    ids = {h.stem for h in hars}
    assert ran.returncode == 1 and set(said_of(ran.stdout)) == ids, ran.stdout
    assert {s for s, _ in said_of(ran.stdout).values()} == {"still fails"}, ran.stdout
    status, against_reference = replay(report, reference, tokens)
    assert status == 0 and {s for s, _ in against_reference.values()} == {"now passes"}


def in_a_pipe(command_line: list[str], tokens: list[str], cwd: Path) -> tuple[int, str, str]:
    """`COMMAND | head -1` in a real shell: the command's exit status, head's line, its stderr."""
    shell = f"{shlex.join(command_line)} 2>stderr.txt | head -1; exit ${{PIPESTATUS[0]}}"
    ran = subprocess.run(["bash", "-c", shell], env=environment(tokens), cwd=cwd,
                         capture_output=True, text=True, timeout=600)  # fmt: skip
    return ran.returncode, ran.stdout, (cwd / "stderr.txt").read_text()


def test_a_replay_into_a_closed_pipe_ends_quietly(tokens, tmp_path):
    """`replay DIR | head -1`: the first line, then exit 141 (as a shell sees SIGPIPE end a
    writer), no traceback; what the replay created is removed all the same."""
    selection = FAMILIES["any-token-accepted"]
    with mutant_run("any-token-accepted", selection, tokens, tmp_path) as (report, mutant):
        again = command("replay", str(report), "--base-url", mutant)
        status, line, stderr = in_a_pipe(again, tokens, tmp_path)
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
    assert status == 141 and LINE.match(line), (status, line)
    ledgers = list((report / "ledger").glob("*.jsonl"))  # the run's and the replay's
    closed = [p for p in ledgers if '"event": "closed"' in p.read_text()]
    assert len(closed) == len(ledgers) == 2, ledgers


def test_a_run_into_a_closed_pipe_goes_on_to_its_end(tokens, reference, tmp_path):
    """`run | head -1`: the run is not cut where its reader stopped reading: every test judged,
    its reports written, its exit status the run's own (conformant: 0)."""
    selection = ["tests/scenario/test_auth.py", "-k", "existing_resource and threads"]

    def run(report: Path) -> list[str]:
        return ["run", f"--base-url={reference}", f"--report-dir={report}", *SHORT, "--",
                *selection]  # fmt: skip

    status, line, stderr = in_a_pipe(command(*run(tmp_path / "piped")), tokens, tmp_path)
    assert "Traceback" not in stderr, stderr
    assert status == 0 and line.startswith("====="), (status, line, stderr[-2000:])
    heard = subprocess.run(command(*run(tmp_path / "heard")), env=environment(tokens),
                           cwd=tmp_path, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert heard.returncode == 0, heard.stdout[-2000:]
    tests = [json.loads((tmp_path / r / "results.json").read_text())["tests"]
             for r in ("piped", "heard")]  # fmt: skip
    assert [t["nodeid"] for t in tests[0]] == [t["nodeid"] for t in tests[1]], tests


@pytest.fixture
def replayer(tokens, reference, tmp_path):
    """A replay's sender against the reference, as the command makes one."""
    redact.register(tokens[0], "ASSISTANT_API_TOKEN")
    policy = Policy(deadline=3.0)
    ledger = Ledger(tmp_path / LEDGER_DIR, reference)
    ledger.hold()
    safety = SafetySession(Guard(False, 3.0), ledger, policy)
    sender = Replayer(Target(reference, tokens[0], None), safety)
    yield sender
    sender.close()


def recorded(tmp_path: Path, reference: str, *entries: dict) -> Recorded:
    finding = {"id": "X-1", "target": reference, "prefix": "", "check": {
        "kind": "status", "entry": len(entries) - 1, "statuses": [200, 201]}}  # fmt: skip
    log = {"entries": list(entries), "_finding": finding}
    return recorded_of(tmp_path / "exchanges" / "X-1.har", log)


def exchange(method: str, url: str, body: str = "", answer: str = "", **extra: object) -> dict:
    post = {"postData": {"mimeType": "application/json", "text": body}} if body else {}
    return {"request": {"method": method, "url": url, "headers": [], **post},
            "response": {"status": 201, "headers": [], "content": {"text": answer}},
            "_credential": "main", "_provenance": [], **extra}  # fmt: skip


def test_a_stream_the_guard_refuses_is_not_replayed(replayer, reference, tmp_path):
    """A write on a thread the replay has seen and does not own is never sent: no answer is not
    `still fails`, it is `not replayed`, with the guard's why."""
    thread = "0b5e4cd2-35b8-4a55-9bbd-cd0cc2b0a1f7"
    replayer.safety.guard.seen.add(thread)  # answered to the replay, made by someone else
    stream = exchange("POST", f"{reference}/api/ai/threads/{thread}/runs/stream", "{}",
                      _stream={"events": 1, "cut": "max_events"})  # fmt: skip
    with pytest.raises(NotReplayed, match="exchange 0: owned data only"):
        replayer.answers(recorded(tmp_path, reference, stream), 3.0)


def test_a_value_the_new_answer_does_not_give_is_not_replayed(replayer, reference, tmp_path):
    """The thread id came from a place of the old answer the new one does not have: the old id
    is not sent in its stead."""
    old = "7d1c9d4e-3f0b-4c55-a1de-0f9e6c1b2a33"
    made = exchange("POST", f"{reference}/api/ai/threads", "{}", json.dumps({"id": old}))
    given = [{"slot": "path[4]", "from": {"entry": 0, "at": "body.id"}}]
    read = exchange("GET", f"{reference}/api/ai/threads/{old}", _provenance=given)
    with pytest.raises(NotReplayed, match=r"exchange 1 .*path\[4\] came from exchange 0's answer"):
        replayer.answers(recorded(tmp_path, reference, made, read), 3.0)


MULTIPART = (
    b'--conformance\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n'
    b"Content-Type: text/plain\r\n\r\nhello\r\n--conformance--\r\n"
)
SHAPES = {  # a body as recorded, and the Content-Type it was sent with
    "no body": (None, None),
    "json": (b'{"metadata": {"a": [1, "x"]}}', "application/json"),
    "not json": (b"{not json", "application/json"),
    "text": (b"plain words", "text/plain"),
    "multipart upload": (MULTIPART, "multipart/form-data; boundary=conformance"),
}
RESPONSE_CHECKS = [c.__name__ for c in scope.CHECKS if c.__name__ not in AS_STATUS]


@pytest.mark.parametrize("shape", SHAPES)
def test_every_recorded_case_is_rebuilt_as_it_was_sent(shape):
    """Every operation of the document, with each body a run can have sent (or none), a query
    with a name given twice and an encoded path parameter: schemathesis' case of it sends the
    same request, and each check of the answer runs on it."""
    body, kind = SHAPES[shape]
    base = "http://127.0.0.1:9"
    for template, item in openapi.document()["paths"].items():
        path = re.sub(r"\{\w+\}", "a%2Fb", template)
        for method in (m.upper() for m in item if m in ("get", "post", "put", "patch", "delete")):
            headers = {"Authorization": "Bearer x", **({"Content-Type": kind} if kind else {})}
            url = f"{base}{path}?limit=1&limit=2&start="
            answer = trail.Entry(method, url, headers, body, status=400)
            answer.response_headers = {"content-type": "text/plain"}
            sent = rebuilt(answer).as_transport_kwargs(base_url=base)
            assert (sent["method"], sent["url"]) == (method, f"{base}{path}"), sent
            assert sent["params"] == {"limit": ["1", "2"], "start": ""}, sent
            assert sent.get("data") == body and sent["headers"].get("Content-Type") == kind, sent
            for name in RESPONSE_CHECKS:
                check = checks.SchemathesisCheck(name=name, entry=0)
                said = judge_again(check, "ROBUST-NO-5XX", answer, {"headers": {}})
                assert said == (True, "HTTP 400"), (name, said)  # a 400 is no 5xx
