"""The suite's SSE reader follows the WHATWG event stream interpretation (HTML §9.2.6)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from assistant_conformance.suite.http.sse import SseDecoder, iter_lines, parse_events, read_stream

STREAM = 'event: values\ndata: {"a": 1}\nid: 1\n\nevent: end\ndata: null\nid: 2\n\n'


def events_of(chunks: list[str]) -> list[tuple[str, str, str]]:
    decoder = SseDecoder()
    found = [e for line in iter_lines(chunks) if (e := decoder.feed(line))]
    return [(e.event, e.data, e.id) for e in found]


EXPECTED = [("values", '{"a": 1}', "1"), ("end", "null", "2")]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
def test_every_line_end_gives_the_same_events(newline):
    assert events_of([STREAM.replace("\n", newline)]) == EXPECTED


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
def test_events_split_at_every_byte_are_read_whole(newline):
    text = STREAM.replace("\n", newline)
    assert events_of(list(text)) == EXPECTED


def test_crlf_straddling_two_chunks_is_one_line_end():
    # A CR at the end of one chunk and LF at the start of the next must not make an empty line.
    chunks = ["data: a\r", "\ndata: b\r", "\n\r", "\n"]
    assert events_of(chunks) == [("message", "a\nb", "")]


def test_comment_lines_are_ignored():
    text = ": keep-alive\n\n:another\ndata: x\n: inside\n\n"
    assert [(e.event, e.data) for e in parse_events(text)] == [("message", "x")]


def test_retry_is_kept_and_a_non_digit_retry_ignored():
    events = parse_events("retry: 1500\ndata: a\n\nretry: soon\ndata: b\n\n")
    assert [e.retry for e in events] == [1500, 1500]


def test_multi_line_data_is_joined_with_newlines():
    events = parse_events("data: first\ndata:second\ndata\ndata:  indented\n\n")
    assert events[0].data == "first\nsecond\n\n indented"


def test_an_event_without_id_keeps_the_last_id():
    events = parse_events("id: abc-1\ndata: a\n\ndata: b\n\nid: abc-2\ndata: c\n\n")
    assert [(e.data, e.id, e.own_id) for e in events] == [
        ("a", "abc-1", True),
        ("b", "abc-1", False),
        ("c", "abc-2", True),
    ]


def test_an_id_after_event_and_data_belongs_to_that_event():
    events = parse_events("event: messages\ndata: x\nid: 1707712345678-0\n\n")
    assert (events[0].event, events[0].id, events[0].own_id) == (
        "messages",
        "1707712345678-0",
        True,
    )


def test_an_empty_id_resets_and_an_id_with_nul_is_ignored():
    events = parse_events("id: 7\ndata: a\n\nid\ndata: b\n\nid: 8\x009\ndata: c\n\n")
    assert [e.id for e in events] == ["7", "", ""]


def test_a_leading_bom_is_stripped_once():
    events = parse_events("\ufeffdata: a\n\n")
    assert [e.data for e in events] == ["a"]


def test_an_unterminated_last_event_is_discarded():
    assert [e.data for e in parse_events("data: a\n\ndata: b\n")] == ["a"]
    assert [e.data for e in parse_events("data: a\n\ndata: b")] == ["a"]


def test_extra_blank_lines_dispatch_nothing():
    events = parse_events("\n\n\nid: 1\ndata: a\n\n\n\n\ndata: b\n\n\n")
    assert [(e.data, e.id) for e in events] == [("a", "1"), ("b", "1")]


def test_an_event_without_data_dispatches_nothing_and_resets_its_name():
    events = parse_events("event: ping\n\ndata: a\n\n")
    assert [(e.event, e.data) for e in events] == [("message", "a")]


# --- read_stream over HTTP ---------------------------------------------------------------------


def client_serving(chunks: list[bytes], status: int = 200) -> httpx.Client:
    def handler(request: httpx.Request) -> httpx.Response:
        def body() -> Iterator[bytes]:
            yield from chunks

        return httpx.Response(status, headers={"content-type": "text/event-stream"}, content=body())

    return httpx.Client(transport=httpx.MockTransport(handler), base_url="http://test")


def test_read_stream_decodes_utf8_split_inside_a_character_and_a_bom():
    raw = "\ufeffid: é1\ndata: ünïcode\n\n".encode()
    chunks = [raw[i : i + 1] for i in range(len(raw))]
    with client_serving(chunks) as client:
        read = read_stream(client, "GET", "/s", deadline=5)
    assert [(e.id, e.data) for e in read.events] == [("é1", "ünïcode")]
    assert read.closed_by_server and read.cut is None


def test_read_stream_stops_after_max_events_and_says_so():
    with client_serving([b"data: a\n\n", b"data: b\n\n", b"data: c\n\n"]) as client:
        read = read_stream(client, "GET", "/s", deadline=5, max_events=2)
    assert [e.data for e in read.events] == ["a", "b"]
    assert (read.cut, read.closed_by_server) == ("max_events", False)


def test_read_stream_reports_any_2xx_status_and_content_type():
    with client_serving([b"data: a\n\n"], status=201) as client:
        read = read_stream(client, "POST", "/s", deadline=5, json_body={"x": 1})
    assert (read.status, read.content_type) == (201, "text/event-stream")
