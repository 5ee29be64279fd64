"""`audit` and `proxy` check every input before any work: one line, exit 4, never a traceback.

- a report folder that cannot be written (a file where it would go, or above it): said at the
  start, before a file is read or a port listened on;
- `--exchange-timeout` 0, negative, not a number or infinite: refused;
- a file of any shape (JSON nested past Python's reader, larger than the bound, not UTF-8,
  NaN, every field of a valid file replaced by a value of the wrong kind, too large, too deep or
  empty): one line and exit 4, or judged; never a traceback;
- `--help` gives every option's default.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from har_support import exchange, har, thread

from assistant_conformance.audit.harfile import MAX_BYTES
from assistant_conformance.cli import command

COMMAND = [sys.executable, "-m", "assistant_conformance"]


def one_line_exit_4(done: subprocess.CompletedProcess[str], *said: str) -> None:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 4, done.stdout + done.stderr
    assert len(lines) == 1 and all(s in lines[0] for s in said), lines
    assert "Traceback" not in done.stderr


def good_har(path: Path) -> Path:
    made = {"thread_id": thread(1)}
    path.write_text(json.dumps(har([exchange("POST", "/api/ai/threads", 201, body={},
                                             answer=made)])))  # fmt: skip
    return path


@pytest.mark.parametrize("where", ["a file", "under a file"])
@pytest.mark.parametrize("verb", ["audit", "proxy"])
def test_a_report_folder_that_cannot_be_written_is_found_first(verb, where, tmp_path) -> None:
    (tmp_path / "taken").write_text("a file where the folder would go")
    folder = tmp_path / "taken" / ("" if where == "a file" else "reports")
    args = [str(good_har(tmp_path / "a.har"))] if verb == "audit" else [
        "--upstream", "http://127.0.0.1:9", "--port", "0"]  # fmt: skip
    done = subprocess.run([*COMMAND, verb, *args, "--report-dir", str(folder)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    one_line_exit_4(done, "--report-dir", "not a folder")
    assert done.stdout == ""  # nothing was judged, nothing listened


@pytest.mark.parametrize("seconds", ["0", "-5", "nan", "inf"])
def test_an_exchange_timeout_that_is_no_time_is_refused(seconds: str, tmp_path: Path) -> None:
    done = subprocess.run([*COMMAND, "proxy", "--upstream", "http://127.0.0.1:9", "--port", "0",
                           f"--exchange-timeout={seconds}", "--report-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    one_line_exit_4(done, "--exchange-timeout")


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


SHAPES: dict[str, bytes] = {
    "nested past the reader": nested(200_000).encode(),
    "nested in a tool's field": json.dumps(har([]))
    .replace('"pages"', f'"_initiator": {nested(200_000)}, "pages"')
    .encode(),
    "not UTF-8": json.dumps(har([])).encode().replace(b'"1.2"', b'"1.2\xff"'),
    "UTF-16 without a mark": json.dumps(har([])).encode("utf-16-le"),
    "NaN": json.dumps(har([])).replace('"pages": []', '"pages": [NaN]').encode(),
    "empty": b"",
}


@pytest.mark.parametrize("shape", SHAPES)
def test_a_file_of_any_shape_is_one_line(shape: str, tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.har"
    bad.write_bytes(SHAPES[shape])
    code = command.exit_status(["audit", str(bad), "--report-dir", str(tmp_path / "report")])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 4 and len(lines) == 1 and str(bad) in lines[0], lines


def test_a_file_past_the_bound_is_refused_unread(tmp_path: Path, capsys) -> None:
    large = tmp_path / "large.har"
    with large.open("wb") as file:  # sparse: no disk, and nothing read
        file.truncate(MAX_BYTES + 1)
    assert command.exit_status(["audit", str(large), "--report-dir", str(tmp_path / "report")]) == 4
    assert "larger than" in capsys.readouterr().err


ODD = [None, -1, 1e308, "", nested(900), "http://[::1", "\ud800"]


def leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from leaves(inner, (*path, key))
    elif isinstance(value, list):
        for number, inner in enumerate(value):
            yield from leaves(inner, (*path, number))
    yield path


def test_every_field_of_a_valid_file_replaced_is_judged_or_refused(tmp_path, capsys) -> None:
    made = {"thread_id": thread(1), "metadata": {"a": 1}}
    base = har([
        exchange("POST", "/api/ai/threads", 201, body={"metadata": {"a": 1}}, answer=made,
                 _stream={"events": 1, "cut": "", "closed_by_server": True},
                 _truncated=["request"], _principal="credential-1"),
        exchange("PATCH", f"/api/ai/threads/{thread(1)}", 200, body={"metadata": {}},
                 answer=made),
        exchange("GET", f"/api/ai/threads/{thread(1)}", 200, answer="id: 1\\ndata: {}\\n\\n"),
    ])  # fmt: skip
    codes = set()
    for path in [p for p in leaves(base) if p and p[1:3] != ("entries", 1)]:
        for value in ODD:
            document = copy.deepcopy(base)
            holder = document
            for key in path[:-1]:
                holder = holder[key]
            holder[path[-1]] = value
            odd = tmp_path / "odd.har"
            odd.write_text(json.dumps(document), encoding="utf-8", errors="surrogatepass")
            code = command.exit_status(
                ["audit", str(odd), "--report-dir", str(tmp_path / "report")]
            )
            err = capsys.readouterr().err.strip().splitlines()
            assert code in (0, 1, 3, 4), (path, value)
            assert code != 4 or len(err) == 1, (path, value, err)
            codes.add(code)
    assert {0, 4} <= codes


@pytest.mark.parametrize("verb", ["audit", "proxy", "replay"])
def test_help_gives_every_options_default(verb: str) -> None:
    parser = command.Command("x", [verb]).verbs.choices[verb]
    options = [a for a in parser._actions if a.option_strings and a.dest != "help"]
    assert options
    for action in options:
        assert "default" in (action.help or ""), action.option_strings
