"""HAR read as browsers, proxies and HTTP libraries write it.

- a real HAR of headless Chromium, written by Playwright (`record_har_path`), of a page that calls
  the reference (fixtures/chromium.har, recorded by selftests/support/browser_har.py: cookies
  with `sameSite`, `_resourceType`, `_transferSize`, `_securityDetails`, ...): judged, exit 0;
- a Firefox export written by hand as Firefox writes one (fixtures/firefox.har: pages, local
  time offsets, `_securityState`, a 202 without a body): judged, exit 0;
- the same exchanges with each tool's own fields beside HAR's (Chromium's developer tools,
  Playwright, Firefox, Charles, mitmproxy), or as HAR 1.1: the same verdicts as without them;
- what cannot be judged (an entry without a status, a request without a method) is refused in
  one line, exit 4.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from audit_support import audited, verdicts
from har_support import exchange, har, thread

from assistant_conformance.cli import command

pytestmark = pytest.mark.xdist_group("audit")
FIXTURES = Path(__file__).parent / "fixtures"
BROWSER_SHOWS = (  # what the fixtures' pages exercised, and the reference kept
    "AUTH-MISSING-REJECTED", "AUTH-401", "AUTH-WWW-AUTHENTICATE", "THR-PATCH-PERSISTS",
    "THR-DELETE-GONE", "ROBUST-NO-5XX", "ROBUST-RESPONSE-SHAPE", "ROBUST-ERROR-JSON",
)  # fmt: skip


@pytest.mark.parametrize("name", ["chromium.har", "firefox.har"])
def test_a_browsers_file_is_judged(name: str, tmp_path: Path) -> None:
    code, document = audited([FIXTURES / name], tmp_path / "report")
    found = verdicts(document)
    assert code == 0, document["result"]
    assert {rid: found[rid] for rid in BROWSER_SHOWS} == dict.fromkeys(BROWSER_SHOWS, "pass")
    assert found["RUN-STREAM-ENDS"] == "untested"  # a browser's file does not say how it stopped
    if name == "chromium.har":
        assert found["RUN-STREAM-EVENT-IDS"] == "pass"
        assert "sameSite" in (FIXTURES / name).read_text()
    assert "redacted-token" in (FIXTURES / name).read_text()  # the fixtures hold no token


def plain() -> list[dict[str, Any]]:
    """A client's exchanges, as the helper writes them: HAR 1.2's fields only."""
    path = f"/api/ai/threads/{thread(1)}"
    made = {"thread_id": thread(1), "metadata": {"n": 1}}
    return [
        exchange("POST", "/api/ai/threads", 201, body={}, answer=made),
        exchange("PATCH", path, 200, body={"metadata": {"n": 1}}, answer=made),
        exchange("GET", path, 200, answer=made),
        exchange("DELETE", path, 202),
        exchange("GET", path, 404, answer={"detail": "gone"}),
        exchange("POST", "/api/ai/threads/search", 401, body={}, token=None, answer={"d": 1}),
    ]


COOKIE = {"name": "session", "value": "s1", "path": "/", "domain": "127.0.0.1",
          "expires": "2027-01-01T00:00:00.000Z", "httpOnly": True, "secure": False}  # fmt: skip


def chromium_devtools(entry: dict[str, Any]) -> None:
    entry.update(_initiator={"type": "script", "stack": {"callFrames": [
        {"functionName": "call", "url": "http://127.0.0.1:9/app", "lineNumber": 3}]}},
        _priority="High", _resourceType="fetch", _connectionId="1234", pageref="page_1",
        serverIPAddress="127.0.0.1", connection="1234")  # fmt: skip
    entry["request"]["cookies"] = [{**COOKIE, "sameSite": "Lax", "partitionKey": None}]
    entry["response"].update(_transferSize=812, _error=None, _fetchedViaServiceWorker=False)
    entry["timings"].update(blocked=0.4, dns=-1, ssl=-1, connect=-1, _blocked_queueing=0.3,
                            _workerStart=-1, _workerReady=-1)  # fmt: skip


def playwright(entry: dict[str, Any]) -> None:
    entry.update(_frameref="frame@1", _monotonicTime=12.5, _serverPort=9, _securityDetails={})
    entry["response"]["cookies"] = [{**COOKIE, "sameSite": "Strict"}]
    entry["response"].update(_transferSize=400, _failureText=None)
    entry["response"]["content"]["compression"] = 0


def firefox(entry: dict[str, Any]) -> None:
    entry.update(_securityState="insecure", pageref="page_1", connection="9")
    entry["timings"].update(blocked=0, dns=0, connect=0, ssl=0)
    entry["request"]["postData"] = {**entry["request"].get("postData", {}), "params": []} if (
        "postData" in entry["request"]) else entry["request"].get("postData")  # fmt: skip
    if entry["request"]["postData"] is None:
        del entry["request"]["postData"]


def charles(entry: dict[str, Any]) -> None:
    entry.update(serverIPAddress="127.0.0.1", comment="", connection="")
    entry["request"]["comment"] = ""
    entry["response"]["comment"] = ""
    entry["response"]["content"]["comment"] = ""
    entry["timings"]["comment"] = ""


def mitmproxy(entry: dict[str, Any]) -> None:
    entry.update(serverIPAddress="127.0.0.1", _resourceType="xhr")
    entry["response"]["content"]["compression"] = 0
    entry["request"]["queryString"] = []


TOOLS = {"chromium-devtools": chromium_devtools, "playwright": playwright, "firefox": firefox,
         "charles": charles, "mitmproxy": mitmproxy}  # fmt: skip


@pytest.mark.parametrize("tool", [*TOOLS, "har-1.1"])
def test_each_tools_own_fields_change_no_verdict(tool: str, tmp_path: Path) -> None:
    _, alone = audited([write(tmp_path / "plain.har", har(plain()))], tmp_path / "plain")
    document = har(plain(), version="1.1" if tool == "har-1.1" else "1.2")
    if tool in TOOLS:
        for entry in document["log"]["entries"]:
            TOOLS[tool](entry)
        document["log"]["browser"] = {"name": tool, "version": "1"}
        document["log"]["pages"] = [{"startedDateTime": "2026-01-02T03:04:05Z", "id": "page_1",
                                     "title": "app", "pageTimings": {"onLoad": 1}}]  # fmt: skip
    code, with_them = audited([write(tmp_path / f"{tool}.har", document)], tmp_path / "tool")
    assert code == 0
    assert verdicts(with_them) == verdicts(alone)
    assert verdicts(alone)["THR-DELETE-GONE"] == "pass"


def write(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def without(document: dict[str, Any], where: tuple[str, ...]) -> dict[str, Any]:
    changed = copy.deepcopy(document)
    holder = changed["log"]["entries"][0]
    for key in where[:-1]:
        holder = holder[key]
    del holder[where[-1]]
    return changed


CANNOT = [("response", "status"), ("request", "method"), ("request", "headers"),
          ("startedDateTime",)]  # fmt: skip


@pytest.mark.parametrize("where", CANNOT, ids=str)
def test_what_cannot_be_judged_is_refused_in_one_line(where, tmp_path: Path, capsys) -> None:
    bad = write(tmp_path / "bad.har", without(har(plain()), where))
    code = command.exit_status(["audit", str(bad), "--report-dir", str(tmp_path / "report")])
    said = capsys.readouterr().err.strip().splitlines()
    assert code == 4 and len(said) == 1 and where[-1] in said[0], said
    assert not (tmp_path / "report").exists()
