"""Records the Chromium HAR of the audit's self-tests (selftests/audit/fixtures/chromium.har): a
page that calls the reference server with `fetch`, in Debian's headless Chromium driven by
Playwright, which writes the HAR (`record_har_path`) as it writes any browser's. Run it again
when the page should call more:

    .venv/bin/python selftests/support/browser_har.py

The page is served from the reference's own origin (`/app`, beside the API), so its calls are
same-origin; it sets SameSite cookies, as a web app's session would (Chromium's and
Playwright's HARs say `sameSite` of each). The token the page sends is random, and written into
the file as REDACTED_TOKEN: the fixture holds none.
"""

from __future__ import annotations

import json
import re
import secrets
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "selftests" / "audit" / "fixtures" / "chromium.har"
REDACTED_TOKEN = "redacted-token"
PAGE = """<!doctype html><html><body><script>
const api = "/api/ai", auth = {"Authorization": "Bearer TOKEN", "Content-Type": "application/json"};
async function call(method, path, body, headers) {
  const sent = body === undefined ? undefined : JSON.stringify(body);
  const answer = await fetch(api + path, {method, headers: headers || auth, body: sent});
  return [answer.status, await answer.text()];
}
async function main() {
  const [, made] = await call("POST", "/threads", {metadata: {app: "browser"}});
  const thread = JSON.parse(made).thread_id;
  await call("PATCH", `/threads/${thread}`, {metadata: {n: 2}});
  await call("GET", `/threads/${thread}`);
  await call("POST", "/threads/search", {metadata: {app: "browser"}, limit: 10});
  await call("POST", `/threads/${thread}/runs/stream`,
             {assistant_id: "ASSISTANT", input: {text: "a browser streams"}});
  await call("POST", `/threads/${thread}/runs/wait`,
             {assistant_id: "ASSISTANT", input: {text: "a browser waits"}});
  await call("DELETE", `/threads/${thread}`);
  await call("GET", `/threads/${thread}`);
  await call("POST", "/threads/search", {}, {"Content-Type": "application/json"});
  await call("POST", "/threads/search", {}, {"Authorization": "Bearer not-a-token"});
  document.title = "done";
}
main();
</script></body></html>"""


def record(into: Path) -> None:
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT / "selftests" / "support"))
    from safety_support import reference_app, serve

    from assistant_conformance.reference._agents import ECHO_ASSISTANT_ID

    token = secrets.token_urlsafe(16)
    page_text = PAGE.replace("TOKEN", token).replace("ASSISTANT", ECHO_ASSISTANT_ID).encode()

    def with_page(api: Any) -> Any:
        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http" or scope["path"] != "/app":
                return await api(scope, receive, send)
            headers = [(b"content-type", b"text/html"),
                       (b"set-cookie", b"theme=dark; Path=/; SameSite=Strict")]  # fmt: skip
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": page_text})

        return app

    with (
        tempfile.TemporaryDirectory() as work,
        serve(with_page(reference_app(Path(work), (token,)))) as base,
    ):
        raw = Path(work) / "raw.har"
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
            context = browser.new_context(record_har_path=str(raw))
            context.add_cookies([{"name": "session", "value": "s1", "url": base,
                                  "sameSite": "Lax"}])  # fmt: skip
            page = context.new_page()
            page.goto(f"{base}/app")
            page.wait_for_function("document.title === 'done'", timeout=30_000)
            context.close()
            browser.close()
        text = raw.read_text(encoding="utf-8").replace(token, REDACTED_TOKEN)
        text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:8000", text)
    document = json.loads(text)
    assert token not in text and document["log"]["entries"]
    into.parent.mkdir(parents=True, exist_ok=True)
    into.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    record(FIXTURE)
    print(f"written: {FIXTURE}")
