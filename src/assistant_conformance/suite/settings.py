"""The suite's options: each a pytest option, an environment variable and an ini key.

Precedence: command line, then environment, then ini file, then the default.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from assistant_conformance.report.catalogue import load
from assistant_conformance.report.redact import MIN_SECRET_LENGTH


@dataclass(frozen=True)
class Option:
    flag: str
    env: str
    help: str
    default: Any = None
    kind: type = str
    is_flag: bool = False

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
        "the assistant every run uses (id or graph); default: one named for testing, else no run",
    ),
    Option(
        "--run-input",
        "ASSISTANT_API_RUN_INPUT",
        "the input of every run, JSON or @file.json; {text} in it is replaced by the suite's words "
        "(default: LangGraph chat messages)",
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

# Optional capability groups (--unsupported): the catalogue says which sections each covers.
CAPABILITY_GROUPS = load().groups
_GROUP_ALIASES = {"chat-kit": "chatkit", "conversation": "conversations", "file": "files"}


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("assistant-conformance", "assistant API conformance suite")
    for opt in OPTIONS:
        ini = opt.dest
        help_text = f"{opt.help} [env {opt.env}, ini {ini}]"
        try:
            if opt.is_flag:
                group.addoption(opt.flag, action="store_true", default=None, help=help_text)
            else:
                group.addoption(opt.flag, default=None, help=help_text, metavar=opt.dest.upper())
        except ValueError:
            # Another plugin (pytest-base-url) owns --base-url already: reuse its option.
            pass
        parser.addini(ini, help_text, default=None)


def _raw(config: pytest.Config, opt: Option) -> Any:
    value = config.getoption(opt.dest, default=None)
    if value in (None, ""):
        value = os.environ.get(opt.env) or None
    if value in (None, ""):
        value = config.getini(opt.dest) or None
    return value


class OptionError(ValueError):
    """A bad option value; the message is one readable line."""


@dataclass(frozen=True)
class SuiteSettings:
    base_url: str | None
    token: str | None
    alt_token: str | None
    strict_conformance: bool
    examples: int
    seed: int
    request_timeout: float
    process_timeout: float
    report_dir: Path
    max_response_size: int = 16 * 1024 * 1024
    assistant: str | None = None
    run_input: Any = None  # parsed JSON; None: the default chat input
    baseline: Path | None = None
    unsupported: tuple[str, ...] = ()
    read_only: bool = False
    sweep: bool = False
    no_cleanup: bool = False

    @classmethod
    def from_config(cls, config: pytest.Config) -> SuiteSettings:
        values: dict[str, Any] = {}
        for opt in OPTIONS:
            raw = _raw(config, opt)
            if raw is None:
                values[opt.dest] = opt.default
            elif opt.kind is bool:
                values[opt.dest] = raw is True or str(raw).lower() in ("1", "true", "yes", "on")
            else:
                try:
                    values[opt.dest] = opt.kind(raw)
                except ValueError:
                    raise OptionError(
                        f"{opt.flag} expects {opt.kind.__name__}, got {raw!r}"
                    ) from None
        values["report_dir"] = Path(values["report_dir"])
        values["baseline"] = Path(values["baseline"]) if values["baseline"] else None
        values["unsupported"] = _groups(values["unsupported"])
        values["run_input"] = _run_input(values["run_input"])
        settings = cls(**values)
        settings.validate()
        return settings

    def validate(self) -> None:
        if self.base_url and not self.base_url.startswith(("http://", "https://")):
            raise OptionError(
                f"--base-url must start with http:// or https://, got {self.base_url!r}"
            )
        if self.base_url and not self.token:
            raise OptionError("--base-url needs --token (or ASSISTANT_API_TOKEN)")
        for flag, token in (("--token", self.token), ("--alt-token", self.alt_token)):
            if token is not None and len(token) < MIN_SECRET_LENGTH:
                raise OptionError(
                    f"{flag} is shorter than {MIN_SECRET_LENGTH} characters: "
                    "so short a token cannot be kept out of the reports"
                )
        if self.sweep and self.read_only:
            raise OptionError("--sweep deletes data: it cannot be combined with --read-only")
        if self.sweep and self.no_cleanup:
            raise OptionError("--sweep and --no-cleanup contradict each other")
        if self.examples < 1:
            raise OptionError("--examples must be at least 1")
        for name in ("request_timeout", "process_timeout", "max_response_size"):
            if getattr(self, name) <= 0:
                raise OptionError(f"--{name.replace('_', '-')} must be positive")
        if self.baseline and not self.baseline.is_file():
            raise OptionError(f"--baseline: no such file {str(self.baseline)!r}")


def _groups(raw: str) -> tuple[str, ...]:
    names = [_GROUP_ALIASES.get(n, n) for n in (p.strip().lower() for p in raw.split(",")) if n]
    unknown = [n for n in names if n not in CAPABILITY_GROUPS]
    if unknown:
        raise OptionError(
            f"--unsupported: unknown capability group {unknown[0]!r} "
            f"(known: {', '.join(CAPABILITY_GROUPS)})"
        )
    return tuple(dict.fromkeys(names))


def _run_input(raw: str | None) -> Any:
    """--run-input: JSON, or @FILE holding JSON."""
    if raw is None:
        return None
    text = raw
    if raw.startswith("@"):
        try:
            text = Path(raw[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise OptionError(f"--run-input {raw}: cannot read it ({exc.strerror})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise OptionError(f"--run-input is not JSON ({exc.msg} at {exc.pos})") from None
