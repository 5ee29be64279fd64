"""Operations a target lacks (suite/http/absent.py): which answers say so, and the pre-flight's
decisions (suite/http/target.py) on servers served here in a thread: a subset server is run and
reported, an address where nothing answers as the API does is refused in one line."""

from __future__ import annotations

import pytest
from safety_support import TOKEN, reference_app, serve
from starlette.types import Receive, Scope, Send

from assistant_conformance.proof import mutants
from assistant_conformance.suite.http import absent, trail
from assistant_conformance.suite.http.policy import Policy
from assistant_conformance.suite.http.target import HarnessError, Target, preflight

NOT_YET = '{"statusCode": 400, "message": "This feature is not yet implemented", "error": "Bad"}'


@pytest.mark.parametrize(
    ("method", "path", "status", "body", "shown", "absent_"),
    [
        ("POST", "/api/ai/threads/search", 405, "", (), True),  # no id: the path is not served
        ("POST", "/api/ai/threads/search", 404, "{}", (), True),
        ("POST", "/api/ai/threads/t1/copy", 501, "", (), True),  # whatever the id
        ("POST", "/api/ai/threads/t1/copy", 400, NOT_YET, (), True),  # the platform's phrasing
        ("PATCH", "/api/ai/threads/t1", 400, '{"detail": "Method not supported"}', (), True),
        ("GET", "/api/ai/threads/t1", 404, '{"message": "not found"}', (), False),  # unknown id
        ("GET", "/api/ai/threads/t1", 404, "{}", ("t1",), True),  # an id the target had shown
        ("POST", "/api/ai/threads/t1/runs/wait", 405, "", (), False),
        ("POST", "/api/ai/threads", 415, '{"message": "Unsupported Media Type"}', (), False),
        ("POST", "/api/ai/threads", 400, '{"message": "metadata must be an object"}', (), False),
        ("POST", "/api/ai/threads", 201, '{"message": "not implemented"}', (), False),  # a 2xx
        ("POST", "/api/ai/not-documented", 501, "", (), False),  # off the document
    ],
)
def test_which_answers_say_the_operation_is_not_implemented(
    method: str, path: str, status: int, body: str, shown: tuple[str, ...], absent_: bool
) -> None:
    why = absent.reason(method, path, status, body, set(shown))
    assert (why is not None) == absent_, why
    if why is not None:
        assert why.startswith(f"{absent.operation(method, path).label} answered {status}")  # type: ignore[union-attr]


def entry(method: str, path: str, status: int, body: bytes = b"{}") -> trail.Entry:
    found = trail.Entry(method, f"http://target{path}", {}, None, status=status)
    found.take(body)
    return found


def test_a_test_s_exchanges_show_absent_only_what_no_input_explains() -> None:
    """405 and 501 on documented operations, a 404 only where the pre-flight found it absent;
    each operation once; the phrasings are left to the checks of valid requests."""
    exchanges = [
        entry("POST", "/api/ai/threads/search", 405),
        entry("POST", "/api/ai/threads/search", 405),
        entry("POST", "/api/ai/assistants/count", 404),
        entry("POST", "/api/ai/assistants/search", 404),
        entry("POST", "/api/ai/threads/t1/copy", 400, NOT_YET.encode()),
        entry("GET", "/api/ai/threads/t2", 404),
        entry("POST", "/api/ai/threads/t3/history", 501),
    ]
    found = absent.in_trail(exchanges, {"t2"}, {"POST /api/ai/assistants/count"})
    assert [(i, a.operation) for i, a in found] == [
        (0, "POST /api/ai/threads/search"),
        (2, "POST /api/ai/assistants/count"),
        (6, "POST /api/ai/threads/{thread_id}/history"),
    ]
    assert {a.requirement for _, a in found} == {"THR-STATUS", "ASST-STATUS"}


def test_the_list_names_each_operation_once_and_leaves_unsupported_groups_to_their_line() -> None:
    records = [
        {"operation": "POST /api/ai/store/namespaces", "requirement": "STORE-STATUS",
         "reason": "405", "how": "observed"},
        {"operation": "POST /api/ai/threads/search", "requirement": "THR-STATUS",
         "reason": "405 in a test", "how": "observed"},
        {"operation": "POST /api/ai/threads/search", "requirement": "THR-STATUS",
         "reason": "405 to the pre-flight", "how": "pre-flight"},
    ]  # fmt: skip
    listed = absent.absent_summary(records, {"store"})
    assert [(r["operation"], r["how"]) for r in listed] == [
        ("POST /api/ai/threads/search", "pre-flight")
    ]
    every = [r["operation"] for r in absent.absent_summary(records)]  # in the document's order
    assert every == ["POST /api/ai/threads/search", "POST /api/ai/store/namespaces"]


async def html_everywhere(scope: Scope, receive: Receive, send: Send) -> None:
    """A web server that is not the API: 200 and a page for every request."""
    if scope["type"] != "http":
        return
    page = b"<html><body>Welcome</body></html>"
    headers = [(b"content-type", b"text/html"), (b"content-length", str(len(page)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": page})


def checked(base_url: str, token: str = TOKEN) -> Target | str:
    """The pre-flight's decision: the target to run (with what it found), or its one line."""
    target = Target(base_url, token, None)
    try:
        preflight(target, Policy(deadline=5.0))
    except HarnessError as refused:
        return str(refused)
    return target


@pytest.fixture(scope="module")
def decided(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Target | str]:
    """Each case's decision, made in set-up: outside a test, nothing the doors see is judged."""
    made = tmp_path_factory.mktemp
    subset = mutants.with_mutant(reference_app(made("subset")), "thread-search-missing")
    reference = reference_app(made("reference"))
    with serve(reference) as url, serve(subset) as lacking, serve(html_everywhere) as page:
        return {
            "complete": checked(url),
            "subset": checked(lacking),
            "wrong-base": checked(f"{url}/api/ai"),
            "not-json": checked(page),
            "bad-token": checked(url, "not-the-token-1234"),
        }


def test_a_complete_target_is_asked_once(decided: dict[str, Target | str]) -> None:
    target = decided["complete"]
    assert isinstance(target, Target), target
    assert target.first_read[:2] == ("POST", "/api/ai/threads/search")
    assert target.lacking == []


def test_a_target_without_one_read_is_run_and_that_read_found_absent(
    decided: dict[str, Target | str],
) -> None:
    target = decided["subset"]
    assert isinstance(target, Target), target
    assert target.first_read[:2] == ("POST", "/api/ai/assistants/search")  # the guard asks it
    (lacking,) = target.lacking
    assert (lacking.operation, lacking.requirement, lacking.how) == (
        "POST /api/ai/threads/search",
        "THR-STATUS",
        absent.PREFLIGHT,
    )
    assert "answered 405" in lacking.reason


@pytest.mark.parametrize(
    ("case", "line"),
    [
        ("wrong-base", "answers none of the API's reads as the API does (POST "
         "/api/ai/threads/search -> 404, POST /api/ai/assistants/search -> 404"),
        ("not-json", "is --base-url the root of the API (without /api/ai)?"),
        ("bad-token", "rejects the token (HTTP 401): check --token"),
    ],
)  # fmt: skip
def test_an_address_where_nothing_answers_as_the_api_is_refused_in_one_line(
    case: str, line: str, decided: dict[str, Target | str]
) -> None:
    refused = decided[case]
    assert isinstance(refused, str), refused
    assert line in refused
    assert "\n" not in refused and "not-the-token-1234" not in refused
