"""The suite's options: each a pytest option, an environment variable and an ini key (read by
suite/config/settings.py: command line, then environment, then ini file, then the default)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The fewest workers against a remote target: its answers are mostly waiting (bench/latency.py);
# more where its round trip is longer (suite/run/concurrency.py).
REMOTE_CONCURRENCY = 8
# The most: each worker is a process of its own (about 90 MiB, and most of a second of CPU to
# start, all started before any test). At 120 ms a request on 2 cores, 16 / 24 / 32 workers took
# 44.8 / 41.0 / 41.9 s (bench/latency.py): past 24 the start-up costs more than the overlap gives.
REMOTE_MOST = 24
# On loopback (the embedded reference, a local server) the target shares this machine's cores:
# one worker per core, at most this many; past it, each worker's start-up costs more than it gives.
LOCAL_MOST = 2
# Without --assistant, runs go to an assistant whose name or graph has one of these words.
TESTING_WORDS = ("echo", "conformance", "test")


@dataclass(frozen=True)
class Option:
    flag: str
    env: str
    help: str
    default: Any = None
    kind: type = str
    is_flag: bool = False
    repeat: bool = False  # given several times; one per line in the env variable and ini key

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


OPTIONS = (
    Option(
        "--base-url",
        "ASSISTANT_API_BASE_URL",
        "target base URL; none: start the embedded reference server",
    ),
    Option("--token", "ASSISTANT_API_TOKEN", "bearer token of the main principal (never printed)"),
    Option(
        "--alt-token",
        "ASSISTANT_API_ALT_TOKEN",
        "bearer token of a second principal, for isolation checks",
    ),
    Option(
        "--assistant",
        "ASSISTANT_API_ASSISTANT",
        "the assistant every run uses (an id, graph or name); "
        "default: one named for testing, else none",
    ),
    Option(
        "--run-input",
        "ASSISTANT_API_RUN_INPUT",
        "the input of every run, JSON or @file.json; {text} in it is replaced by the suite's words "
        "(default: LangGraph chat messages)",
    ),
    # Knowledge-base fields that name another resource: left out of every body the suite sends
    # as valid unless given here (a server may check what they name, as the deployed one does).
    Option(
        "--kb-workspace-id",
        "ASSISTANT_API_KB_WORKSPACE_ID",
        "a workspace of the target that knowledge bases the suite creates may name (workspaceId); "
        "none: left out",
    ),
    Option(
        "--kb-integration-id",
        "ASSISTANT_API_KB_INTEGRATION_ID",
        "an integration of the target that knowledge bases may name (integrationId); "
        "none: left out",
    ),
    Option(
        "--kb-copilot-id",
        "ASSISTANT_API_KB_COPILOT_ID",
        "a copilot of the target that knowledge bases' embedding model may name "
        "(copilotModel.copilotId); none: left out",
    ),
    Option(
        "--strict-conformance",
        "ASSISTANT_API_STRICT",
        "SHOULD failures fail the run",
        False,
        bool,
        True,
    ),
    Option(
        "--examples", "ASSISTANT_API_EXAMPLES", "generated examples per operation (depth)", 10, int
    ),
    Option("--seed", "ASSISTANT_API_SEED", "seed of generated tests (default fixed: 0)", 0, int),
    Option(
        "--request-timeout",
        "ASSISTANT_API_REQUEST_TIMEOUT",
        "seconds before any one request is cut",
        10.0,
        float,
    ),
    Option(
        "--max-response-size",
        "ASSISTANT_API_MAX_RESPONSE_SIZE",
        "bytes of one answer read at most (no answer of this API comes near it)",
        16 * 1024 * 1024,
        int,
    ),
    Option(
        "--process-timeout",
        "ASSISTANT_API_PROCESS_TIMEOUT",
        "seconds to wait for a run or KB processing to finish",
        30.0,
        float,
    ),
    Option(
        "--header",
        "ASSISTANT_API_HEADERS",
        "'Name: value' sent on every request (repeatable), e.g. a gateway key; the value is "
        "masked in every output unless the name is harmless (User-Agent, X-Request-Id, ...)",
        (),
        str,
        repeat=True,
    ),
    Option(
        "--rate-limit",
        "ASSISTANT_API_RATE_LIMIT",
        "requests per second for the whole run (N/s or N/m); 429 and 503 with Retry-After are "
        "waited out either way",
    ),
    Option(
        "--ca-bundle",
        "ASSISTANT_API_CA_BUNDLE",
        "PEM file of the CA(s) the target's TLS is checked against",
    ),
    Option(
        "--insecure",
        "ASSISTANT_API_INSECURE",
        "do not verify the target's TLS certificate (said in the header and the report)",
        False,
        bool,
        True,
    ),
    Option(
        "--concurrency",
        "ASSISTANT_API_CONCURRENCY",
        "pytest-xdist workers the run spreads over (1: one after another); default: one per "
        f"core on loopback (at most {LOCAL_MOST}), and against a --base-url off this machine "
        f"(or with 'auto') as many as its round trip asks ({REMOTE_CONCURRENCY} to {REMOTE_MOST})",
    ),
    Option(
        "--report-dir",
        "ASSISTANT_API_REPORT_DIR",
        "directory for conformance reports",
        "reports",
        str,
    ),
    Option(
        "--baseline",
        "ASSISTANT_API_BASELINE",
        "YAML file of known failures: requirement ID -> reason (and optional expires: YYYY-MM-DD)",
    ),
    Option(
        "--unsupported",
        "ASSISTANT_API_UNSUPPORTED",
        "capability groups the target does not implement, comma-separated: "
        "store, conversations, files, contexts, chatkit",
        "",
    ),
    Option(
        "--shard",
        "ASSISTANT_API_SHARD",
        "run share I of N of the tests (e.g. 2/4), balanced by the shipped durations; "
        "`assistant-conformance merge` joins the shards' report folders",
    ),
    Option(
        "--read-only",
        "ASSISTANT_API_READ_ONLY",
        "only checks that change nothing (reads, refused credentials, unknown ids): for production",
        False,
        bool,
        True,
    ),
    Option(
        "--sweep",
        "ASSISTANT_API_SWEEP",
        "remove what earlier runs against this target left (listed in their ledgers), then stop",
        False,
        bool,
        True,
    ),
    Option(
        "--no-cleanup",
        "ASSISTANT_API_NO_CLEANUP",
        "keep what the run creates, for debugging (a later --sweep removes it)",
        False,
        bool,
        True,
    ),
)
