"""Conversations, messages and feedbacks (interface 4.5): paging, search, PATCH, delete."""

from __future__ import annotations

import httpx
import pytest

from assistant_conformance.suite.flows import (
    SHAPE,
    conversations,
    identifier,
    is_client_error,
    items_of,
    json_of,
)
from assistant_conformance.suite.judging import checks, findings
from assistant_conformance.suite.safety.ledger import Ledger


@pytest.mark.req("MSG-LIST-PAGING", "MSG-STATUS", "CONV-STATUS", SHAPE)
def test_message_list_honours_limit_and_offset(api: httpx.Client, ledger: Ledger) -> None:
    cid = conversations.create_conversation(api, ledger, "paging")
    created = conversations.create_messages(api, cid, ledger.run_prefix, 5)
    answers = []
    for offset in (0, 2, 4, 6):
        response = conversations.list_page(api, cid, limit=2, offset=offset)
        findings.require_success("MSG-STATUS", response, 200)
        items_of(response)  # a list answer, or the test stops (SHAPE)
        answers.append(findings.index(response))
        total = checks.FieldCheck(entry=answers[-1], key="total", in_=(5,))
        findings.judge("MSG-LIST-PAGING", total, f"total 5 at offset {offset}", response)
    # A server ignoring limit answers pages of 5; one ignoring offset repeats the first page.
    pages = checks.CountsCheck(entries=tuple(answers), equals=(2, 2, 1, 0))
    findings.judge("MSG-LIST-PAGING", pages, "pages of 2, 2, 1, 0 messages")
    every = checks.ListedCheck(entries=tuple(answers), key="id", equals=tuple(sorted(created)))
    findings.judge("MSG-LIST-PAGING", every, "the pages together hold every message once")


@pytest.mark.req("MSG-PAGING-REQUIRED", "MSG-STATUS", "CONV-STATUS", SHAPE)
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"limit": 2},
        {"offset": 0},
        {"limit": "two", "offset": 0},
        {"limit": 2, "offset": "none"},
    ],
    ids=["none", "limit-only", "offset-only", "limit-not-a-number", "offset-not-a-number"],
)
def test_message_list_requires_numeric_limit_and_offset(
    api: httpx.Client, ledger: Ledger, params: dict[str, object]
) -> None:
    cid = conversations.create_conversation(api, ledger, "paging-required")
    control = api.get(conversations.messages_url(cid), params={"limit": 2, "offset": 0})
    findings.expect_status("MSG-STATUS", control, 200)
    response = api.get(conversations.messages_url(cid), params=params)
    findings.expect_rejected("MSG-PAGING-REQUIRED", response, f"list with {params}", control)


@pytest.mark.req("MSG-GET-CREATED", "MSG-SEARCH-NO-BODY", "MSG-STATUS", "CONV-STATUS", SHAPE)
def test_created_message_is_read_and_search_needs_no_body(
    api: httpx.Client, ledger: Ledger
) -> None:
    cid = conversations.create_conversation(api, ledger, "message")
    (message_id,) = conversations.create_messages(api, cid, ledger.run_prefix, 1)
    read = api.get(f"{conversations.messages_url(cid)}/{message_id}")
    findings.expect_status("MSG-STATUS", read, 200)
    body = json_of(read)
    findings.expect(
        "MSG-GET-CREATED",
        read.status_code == 200 and isinstance(body, dict) and body.get("id") == message_id,
        f"message {message_id} read back",
        read,
        read,
    )
    listed = conversations.ids_in(items_of(conversations.list_page(api, cid, limit=10, offset=0)))
    findings.expect("MSG-GET-CREATED", message_id in listed, "the message in the list", listed)

    url = f"{conversations.messages_url(cid)}/search"
    search = api.post(url)  # no body, as the reference call sends
    if findings.expect_success("MSG-SEARCH-NO-BODY", search, "without a body"):
        findings.expect_status("MSG-STATUS", search, 200)  # charged once: a refusal is the above
        return
    # The status is kept by any search that follows the document and gets its status, whatever
    # another got: one with a body (an empty one, the suite's reading of an unspecified body).
    findings.expect_status("MSG-STATUS", api.post(url, json={}), 200)


@pytest.mark.req("CONV-SEARCH-FINDS", "CONV-STATUS", SHAPE)
def test_search_finds_a_new_conversation(api: httpx.Client, ledger: Ledger) -> None:
    cid = conversations.create_conversation(api, ledger, "search")
    found, response = conversations.search_finds(api, cid, f"{ledger.run_prefix}-search")
    findings.expect_status("CONV-STATUS", response, 200)
    findings.expect(
        "CONV-SEARCH-FINDS", found, f"conversation {cid} in the search answer", response, response
    )


@pytest.mark.req("CONV-PATCH-PERSISTS", "CONV-STATUS", SHAPE)
def test_patch_persists(api: httpx.Client, ledger: Ledger) -> None:
    cid = conversations.create_conversation(api, ledger, "patch")
    sent = {
        "title": f"{ledger.run_prefix}-patched ✓",
        "options": {"run": ledger.run_prefix, "n": 2},
    }
    findings.require_success(
        "CONV-STATUS", api.patch(conversations.conversation_url(cid), json=sent), 200
    )
    read = api.get(conversations.conversation_url(cid))
    findings.require_success("CONV-STATUS", read, 200)
    back = checks.ReadBackCheck(entry=findings.index(read), sent=sent)
    findings.judge("CONV-PATCH-PERSISTS", back, "the patched fields read back", read)


@pytest.mark.req("CONV-DELETE-GONE", "CONV-STATUS", "MSG-STATUS", SHAPE)
def test_deleted_conversation_is_gone_with_its_messages(api: httpx.Client, ledger: Ledger) -> None:
    cid = conversations.create_conversation(api, ledger, "delete")
    message_ids = conversations.create_messages(api, cid, ledger.run_prefix, 2)
    findings.require_success("CONV-STATUS", api.delete(conversations.conversation_url(cid)), 202)
    after = {
        "get conversation": api.get(conversations.conversation_url(cid)),
        "list messages": conversations.list_page(api, cid, limit=10, offset=0),
        "get message": api.get(f"{conversations.messages_url(cid)}/{message_ids[0]}"),
        "search messages": api.post(f"{conversations.messages_url(cid)}/search"),
    }
    for what, response in after.items():
        findings.expect(
            "CONV-DELETE-GONE",
            is_client_error(response),
            f"{what} after delete: HTTP 4xx",
            response,
            response,
        )
    found, response = conversations.search_finds(api, cid, f"{ledger.run_prefix}-delete")
    findings.expect("CONV-DELETE-GONE", not found, "search no longer finds it", response, response)


@pytest.mark.req("MSG-FEEDBACK-DELETE", "MSG-STATUS", "CONV-STATUS", SHAPE)
def test_deleted_feedback_leaves_the_list(api: httpx.Client, ledger: Ledger) -> None:
    cid = conversations.create_conversation(api, ledger, "feedback")
    (message_id,) = conversations.create_messages(api, cid, ledger.run_prefix, 1)
    feedbacks = f"{conversations.messages_url(cid)}/{message_id}/feedbacks"
    listed = api.get(feedbacks)
    findings.require("MSG-STATUS", 200 <= listed.status_code < 300, "HTTP 2xx", listed, listed)
    # Creating a feedback is outside the contract (4.5): the reference's extension route.
    created = api.post(feedbacks, json={"rating": "like", "content": ledger.run_prefix})
    if not 200 <= created.status_code < 300:
        pytest.skip(
            f"the target cannot create a feedback (POST .../feedbacks: HTTP {created.status_code})"
        )
    feedback_id = identifier(created)

    before = conversations.ids_in(items_of(api.get(feedbacks)))
    findings.require(
        "MSG-FEEDBACK-DELETE", feedback_id in before, "the new feedback listed", before
    )
    deleted = api.delete(f"{feedbacks}/{feedback_id}")
    findings.require("MSG-STATUS", 200 <= deleted.status_code < 300, "HTTP 2xx", deleted, deleted)
    after_response = api.get(feedbacks)
    after = conversations.ids_in(items_of(after_response))
    findings.expect(
        "MSG-FEEDBACK-DELETE",
        feedback_id not in after,
        "the feedback gone from the list",
        after,
        after_response,
    )
