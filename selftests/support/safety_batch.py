"""The suite runs the redaction and owned-data self-tests look at, made once per session and run
concurrently (each is a pytest subprocess: a few seconds of start-up each).

- main: auth (on real resources, isolation), streams, files, threads, conversations, knowledge,
  store and the chat-kit property item against the reference; the main token comes from the
  environment, the alt token from the command line; listings and database before and after;
- echo: a broken variant that reflects the credential in every answer (body and header) and
  answers 200 for a created thread, so findings carry the tokens as evidence;
- mutant: the reference mutant whose chat-kit secrets never work (fails CHATKIT-SECRET);
- read-only: the whole suite with --read-only against a reference holding data;
- kept + sweep: a run with --no-cleanup, then --sweep against the same target.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import httpx
from safety_support import (
    ALT_TOKEN,
    TOKEN,
    Done,
    Misbehave,
    dump,
    reference_app,
    run_suite,
    serve,
    table_counts,
)

from assistant_conformance.proof.connectors import MutantConnector
from assistant_conformance.reference.connectors import ReferenceConnector

MAIN_TESTS = (
    "tests/scenario/test_auth.py",
    "tests/scenario/test_streams.py",
    "tests/scenario/test_files.py",
    "tests/scenario/test_threads.py",
    "tests/scenario/test_conversations.py",
    "tests/scenario/test_knowledge.py",
    "tests/scenario/test_store.py",
    "tests/property/test_property.py",
    "-k",  # of auth: isolation and real resources; of the property layer: chat-kit sessions
    "not test_refused_without_valid_credential"
    " and (not test_property.py or v1CreateChatkitSession)",
)
# Tests that put the tokens where only the plugin can mask them: an exception, an assertion
# message, captured output and logs, a skip reason.
LEAKY_TESTS = """
import logging, pytest

@pytest.mark.req("THR-STATUS")
def test_exception(target):
    raise RuntimeError(f"the token is {target.token}, the other {target.alt_token}")

@pytest.mark.req("THR-GET-CREATED")
def test_assertion_and_output(target):
    print("printed:", target.token)
    logging.getLogger("leaky").error("logged: %s", target.alt_token)
    assert target.token == "something else", f"asserted: {target.token}"

@pytest.mark.req("ROBUST-UNKNOWN-ID-404")
def test_skip(target):
    pytest.skip(f"skipped: {target.token}")
"""
KEPT_TESTS = (
    "tests/scenario/test_threads.py::test_created_thread_is_readable_by_its_id",
    "tests/scenario/test_conversations.py::test_search_finds_a_new_conversation",
)
API = "/api/ai"


@dataclass
class Snapshot:
    listings: dict[str, dict[str, list[str]]]  # principal -> kind -> sorted ids
    counts: dict[str, int]
    rows: list[tuple[Any, ...]]


@dataclass
class Batch:
    runs: dict[str, Done] = field(default_factory=dict)
    before: dict[str, Snapshot] = field(default_factory=dict)  # per server: main, read-only, kept
    after: dict[str, Snapshot] = field(default_factory=dict)
    between: Snapshot | None = None  # the kept server after --no-cleanup, before --sweep
    seeds: dict[str, dict[str, str]] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)  # chat-kit secrets the reference issued
    kb_paths: list[str] = field(default_factory=list)  # what the main run's ledger lists
    kb_after: dict[str, tuple[int, int]] = field(default_factory=dict)  # GET status: main, alt


def client(base_url: str, token: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.Client(base_url=base_url, headers=headers, timeout=30, verify=False)


def seed(base_url: str) -> dict[str, str]:
    """Data of both principals the suite did not create (and must leave as it is)."""
    made: dict[str, str] = {}
    for name, token in (("main", TOKEN), ("alt", ALT_TOKEN)):
        with client(base_url, token) as c:
            thread = c.post(f"{API}/threads", json={"metadata": {"owner": name}}).json()
            tid = thread["thread_id"]
            wait = c.post(f"{API}/threads/{tid}/runs/wait", json={"assistant_id": "echo"})
            assert wait.status_code == 201, wait.text
            conversation = c.post(f"{API}/conversations", json={"title": f"{name} notes"}).json()
            cid = conversation["id"]
            c.post(f"{API}/conversations/{cid}/messages", json={"content": "kept"})
            kb = c.post(f"{API}/v1/kb", json={"name": f"{name} kb"}).json()
            c.post(f"{API}/v1/kb/{kb['id']}/bulk", json=[{"name": "d", "content": "kept text"}])
            item = {"namespace": [name, "notes"], "key": "k", "value": {"v": 1}}
            assert c.put(f"{API}/store/items", json=item).status_code == 204
            made.update(
                {f"{name}-thread": tid, f"{name}-conversation": cid, f"{name}-kb": kb["id"]}
            )
    return made


def listings(base_url: str) -> dict[str, dict[str, list[str]]]:
    found = {}
    for name, token in (("main", TOKEN), ("alt", ALT_TOKEN)):
        with client(base_url, token) as c:
            threads = c.post(f"{API}/threads/search", json={"limit": 10000}).json()
            conversations = c.post(f"{API}/conversations/search", json={"take": 10000}).json()
            namespaces = c.post(f"{API}/store/namespaces", json={"limit": 10000}).json()
        found[name] = {
            "threads": sorted(t["thread_id"] for t in threads),
            "conversations": sorted(x["id"] for x in conversations["items"]),
            "namespaces": sorted(".".join(n) for n in namespaces["namespaces"]),
        }
    return found


def snapshot(base_url: str, db: Path) -> Snapshot:
    return Snapshot(listings(base_url), table_counts(db), dump(db))


@cache
def batch() -> Batch:
    work = Path(tempfile.mkdtemp(prefix="safety-batch-"))
    out = Batch()
    for name in ("main", "mutant", "ro", "kept", "echo"):
        (work / name).mkdir()
    main = ReferenceConnector(token_delay_ms=2, tokens=(TOKEN, ALT_TOKEN)).start(work / "main")
    main_db = work / "main" / "reference.db"  # ReferenceConnector's database in its folder
    secret_never_works = MutantConnector("chatkit-secret-never-works", (TOKEN, ALT_TOKEN))
    mutant = secret_never_works.start(work / "mutant")
    echo_app = Misbehave(
        reference_app(work / "echo"), echo_auth=True, status_200="POST /api/ai/threads"
    )
    try:
        with (
            serve(echo_app) as echo_url,
            serve(reference_app(work / "ro")) as ro_url,
            serve(reference_app(work / "kept")) as kept_url,
        ):
            servers = {
                "main": (main.base_url, main_db),
                "read-only": (ro_url, work / "ro" / "reference.db"),
                "kept": (kept_url, work / "kept" / "reference.db"),
            }
            for name, (url, db) in servers.items():
                out.seeds[name] = seed(url)
                out.before[name] = snapshot(url, db)
            jobs = _jobs(work, out, main.base_url, echo_url, mutant.base_url, ro_url, kept_url)
            with ThreadPoolExecutor(max_workers=3) as pool:
                futures = {name: pool.submit(job) for name, job in jobs.items()}
                for name, future in futures.items():
                    result = future.result()
                    if result is not None:
                        out.runs[name] = result
            for name, (url, db) in servers.items():
                out.after[name] = snapshot(url, db)
            _read_main_ledger(out, main.base_url)
        rows = dump(main_db)
        out.secrets = [r[2] for r in rows if r[0] == "resources" and r[1] == "chatkit_secret"]
    finally:
        main.stop()
        mutant.stop()
    return out


def _jobs(
    work: Path, out: Batch, main: str, echo: str, mutant: str, ro: str, kept: str
) -> dict[str, Callable[[], Done | None]]:
    def sut(name: str, base_url: str, *args: str, env_token: bool = False) -> Done:
        token = {"ASSISTANT_API_TOKEN": TOKEN} if env_token else {}
        options = ["--base-url", base_url, "--alt-token", ALT_TOKEN]
        options += [] if env_token else ["--token", TOKEN]
        return run_suite(work / name / "reports", *args, *options, env=token, timeout=600)

    def kept_then_swept() -> None:
        out.runs["kept"] = sut("kept", kept, *KEPT_TESTS, "--no-cleanup")
        out.between = snapshot(kept, work / "kept" / "reference.db")
        out.runs["sweep"] = run_suite(
            work / "kept" / "reports", "--sweep", "--base-url", kept, "--token", TOKEN,
            "--alt-token", ALT_TOKEN,
        )  # fmt: skip

    def leaky() -> Done:
        (work / "leaky").mkdir(exist_ok=True)
        (work / "leaky" / "test_leaky.py").write_text(LEAKY_TESTS)
        allure = work / "leaky" / "reports" / "allure-results"  # not a suite run: not by default
        return run_suite(
            work / "leaky" / "reports", f"--alluredir={allure}", "--base-url", main,
            "--token", TOKEN, "--alt-token", ALT_TOKEN, "-rA", cwd=work / "leaky",
        )  # fmt: skip

    return {
        "main": lambda: sut("main", main, *MAIN_TESTS, env_token=True),
        "leaky": leaky,
        "read-only": lambda: sut("read-only", ro, "tests", "--read-only"),
        "echo": lambda: sut("echo", echo, "tests/scenario/test_threads.py"),
        "mutant": lambda: sut("mutant", mutant, "tests/scenario/test_files.py", "-k", "chatkit"),
        "kept": kept_then_swept,
    }


def _read_main_ledger(out: Batch, base_url: str) -> None:
    """KBs have no list operation: GET (the reference's extension) each one the ledger names."""
    ledgers = list((out.runs["main"].report_dir / "ledger").glob("*.jsonl"))
    for line in (x for path in ledgers for x in path.read_text().splitlines()):
        record = json.loads(line)
        path = (record.get("delete") or {}).get("path", "")
        if record.get("event") == "created" and ("/kb/" in path or "/knowledges/" in path):
            out.kb_paths.append(path)
    with client(base_url, TOKEN) as main, client(base_url, ALT_TOKEN) as alt:
        for path in out.kb_paths:
            out.kb_after[path] = (main.get(path).status_code, alt.get(path).status_code)
