"""Reading the suite's options (suite/config/options.py) into SuiteSettings, and checking them.

Precedence: command line, then environment, then ini file, then the default.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant_conformance.contract.catalogue import load
from assistant_conformance.report import redact
from assistant_conformance.report.redact import MIN_SECRET_LENGTH
from assistant_conformance.suite.config.options import OPTIONS, Option
from assistant_conformance.suite.config.shards import Shard

if TYPE_CHECKING:  # pytest hands its parser and config in: reading settings needs no pytest
    import pytest

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
            elif opt.repeat:
                group.addoption(opt.flag, action="append", default=None, help=help_text)
            else:
                group.addoption(opt.flag, default=None, help=help_text, metavar=opt.dest.upper())
        except ValueError:
            # Another plugin (pytest-base-url) owns --base-url already: reuse its option.
            pass
        parser.addini(ini, help_text, default=None)


def _raw(config: pytest.Config, opt: Option) -> Any:
    value = config.getoption(opt.dest, default=None)
    if value in (None, "", []):
        value = os.environ.get(opt.env) or None
    if value in (None, ""):
        value = config.getini(opt.dest) or None
    if opt.repeat and isinstance(value, str):
        value = [line for line in value.splitlines() if line.strip()]
    return value


def is_on(raw: Any) -> bool:
    """A flag's raw value (True from the command line, a string from env or ini) read as on."""
    return raw is True or str(raw).lower() in ("1", "true", "yes", "on")


def option_value(config: pytest.Config, dest: str) -> Any:
    """An option's raw value (command line, environment, ini), before SuiteSettings reads it."""
    return _raw(config, next(o for o in OPTIONS if o.dest == dest))


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
    header: tuple[tuple[str, str], ...] = ()
    rate_limit: float | None = None  # requests per second
    ca_bundle: Path | None = None
    insecure: bool = False
    concurrency: int | None = None
    shard: Shard | None = None
    kb_workspace_id: str | None = None
    kb_integration_id: str | None = None
    kb_copilot_id: str | None = None

    @property
    def kb_references(self) -> dict[str, str]:
        """The knowledge-base references the user gave (--kb-workspace-id, ...), by field path:
        the only values the suite sends in fields that name another resource."""
        given = {
            "workspaceId": self.kb_workspace_id,
            "integrationId": self.kb_integration_id,
            "copilotModel.copilotId": self.kb_copilot_id,
        }
        return {path: value for path, value in given.items() if value}

    @classmethod
    def from_config(cls, config: pytest.Config) -> SuiteSettings:
        values: dict[str, Any] = {}
        for opt in OPTIONS:
            raw = _raw(config, opt)
            if raw is None:
                values[opt.dest] = opt.default
            elif opt.kind is bool:
                values[opt.dest] = is_on(raw)
            elif opt.repeat:
                values[opt.dest] = tuple(raw)
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
        try:
            values["header"] = tuple(parse_header(h) for h in values["header"])
            rate = values["rate_limit"]
            values["rate_limit"] = parse_rate(rate) if rate else None
        except ValueError as exc:
            raise OptionError(str(exc)) from None
        values["ca_bundle"] = Path(values["ca_bundle"]) if values["ca_bundle"] else None
        values["concurrency"] = parse_concurrency(values["concurrency"])
        try:
            values["shard"] = Shard.parse(values["shard"]) if values["shard"] else None
        except ValueError as exc:
            raise OptionError(str(exc)) from None
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
        if self.concurrency is not None and self.concurrency < 1:
            raise OptionError("--concurrency must be at least 1")
        if self.examples < 1:
            raise OptionError("--examples must be at least 1")
        for name in ("request_timeout", "process_timeout", "max_response_size"):
            if getattr(self, name) <= 0:
                raise OptionError(f"--{name.replace('_', '-')} must be positive")
        if self.ca_bundle and not self.ca_bundle.is_file():
            raise OptionError(f"--ca-bundle: no such file {str(self.ca_bundle)!r}")
        if self.ca_bundle and self.insecure:
            raise OptionError("--ca-bundle and --insecure contradict each other")
        if self.baseline and not self.baseline.is_file():
            raise OptionError(f"--baseline: no such file {str(self.baseline)!r}")


def check_report_dir(path: Path) -> None:
    """OptionError (one line naming --report-dir) unless the reports can be written to `path`."""
    probe = path / f".writable-{os.getpid()}"
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise OptionError(
            f"cannot write the reports to {str(path)!r} ({exc.strerror or exc}): "
            "give --report-dir DIR (or ASSISTANT_API_REPORT_DIR)"
        ) from None


def parse_header(raw: str) -> tuple[str, str]:
    """'Name: value' -> (name, value); ValueError with one readable line otherwise."""
    name, colon, value = raw.partition(":")
    name, value = name.strip(), value.strip()
    if not colon or not name or any(c in name for c in ' \t()<>@,;="/[]?{}'):
        raise ValueError(f"--header expects 'Name: value', got {redact.text(raw)!r}")
    if name.lower() in ("authorization", "host", "content-length"):
        raise ValueError(f"--header cannot set {name} (the suite sets it)")
    return name, value


def parse_concurrency(raw: Any) -> int | None:
    """--concurrency: a count of workers; None for the default or `auto` (suite/run/
    concurrency.py chooses)."""
    if raw is None or str(raw).strip().lower() == "auto":
        return None
    try:
        return int(raw)
    except ValueError:
        raise OptionError(f"--concurrency expects int or 'auto', got {raw!r}") from None


def parse_rate(raw: str) -> float:
    """'N/s', 'N/m' or a bare number of requests per second."""
    number, _, unit = raw.strip().partition("/")
    per = {"": 1.0, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0}.get(unit.strip().lower())
    try:
        rate = float(number) / per if per else -1.0
    except ValueError:
        rate = -1.0
    if rate <= 0:
        raise ValueError(f"--rate-limit expects N/s (e.g. 20/s), got {raw!r}")
    return rate


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
