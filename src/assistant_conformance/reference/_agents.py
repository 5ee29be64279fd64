"""The fixed catalogue of deterministic agents (no LLM) that runs execute.

Each agent checks its input up front (a 400 before anything is stored) and then yields `Step`s
in the modes of LangGraph's library: the engine persists as events what the run's stream modes
make of them (_streams.py). The last `values` step is the run's final state. `tokens` counts what
a step "streamed", for usage.

- echo: input `{"text": "..."}` or `{"messages": [..., {"content": "..."}]}`; one `messages`
  chunk per word, sleeping the token delay before each, then the whole AI message as a
  `messages` step, an `updates` step and the final `values`. `{"fail": "why"}` makes it fail
  after streaming the chunks (an `error` event, then `end`), so failures can be tested.
- counter: input `{"n": N}` (0..1000, default 5); counts 1..N as `custom` and `updates` events.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol

from .db import Doc
from .errors import bad_request

CATALOGUE_CREATED_AT = "2025-01-01T00:00:00Z"


@dataclass(frozen=True)
class Step:
    mode: str  # the stream mode (and SSE event name) this step belongs to
    data: Any
    tokens: int = 0


class AgentFailure(RuntimeError):
    """Raised by an agent asked to fail; becomes the run's `error` event."""


class ReferenceAgent(Protocol):
    graph_id: str

    def check_input(self, input: Any) -> None: ...

    def run(self, input: Any, values: Doc, run_id: str, delay: float) -> AsyncIterator[Step]: ...


def _input_object(input: Any) -> Doc:
    if input is None:
        return {}
    if not isinstance(input, dict):
        bad_request("input must be a JSON object")
    return input


def _content_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": "..."}]
        texts = [p.get("text") for p in content if isinstance(p, dict)]
        if texts and all(isinstance(t, str) for t in texts):
            return " ".join(t for t in texts if isinstance(t, str))
    return None


def echo_text(input: Any) -> str:
    """The text the echo agent repeats: `input.text`, else the last message's content."""
    data = _input_object(input)
    if "text" in data:
        if not isinstance(data["text"], str):
            bad_request("input.text must be a string")
        return data["text"]
    if "messages" not in data:
        return ""
    messages = data["messages"]
    if not isinstance(messages, list) or not messages:
        bad_request("input.messages must be a non-empty array")
    last = messages[-1]
    text = _content_text(last.get("content") if isinstance(last, dict) else last)
    if text is None:
        bad_request("input.messages[-1].content must be a string")
    return text


class EchoAgent:
    graph_id = "echo"

    def check_input(self, input: Any) -> None:
        echo_text(input)
        if "fail" in _input_object(input) and not isinstance(input["fail"], str):
            bad_request("input.fail must be a string")

    async def run(self, input: Any, values: Doc, run_id: str, delay: float) -> AsyncIterator[Step]:
        text = echo_text(input)
        words = text.split()
        ai_id = f"{run_id}-ai"
        metadata = {"langgraph_node": "echo", "run_id": run_id}
        history = values.get("messages")
        history = list(history) if isinstance(history, list) else []
        human = {"type": "human", "content": text, "id": f"{run_id}-human"}
        state = {**values, "messages": [*history, human]}
        yield Step("values", state)
        for i, word in enumerate(words):
            await asyncio.sleep(delay)
            chunk = {
                "type": "AIMessageChunk",
                "content": word if i == 0 else " " + word,
                "id": ai_id,
            }
            yield Step("messages", [chunk, metadata], tokens=1)
        failure = _input_object(input).get("fail")
        if isinstance(failure, str):
            raise AgentFailure(failure)
        ai = {"type": "ai", "content": " ".join(words), "id": ai_id}
        yield Step("messages", [ai, metadata])  # the message is whole: messages/complete
        yield Step("updates", {"echo": {"messages": [ai]}})
        yield Step("values", {**state, "messages": [*state["messages"], ai]})


class CounterAgent:
    graph_id = "counter"

    def check_input(self, input: Any) -> None:
        n = _input_object(input).get("n", 5)
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= 1000:
            bad_request("input.n must be an integer from 0 to 1000")

    async def run(self, input: Any, values: Doc, run_id: str, delay: float) -> AsyncIterator[Step]:
        n = int(_input_object(input).get("n", 5))
        yield Step("values", {**values, "count": 0})
        for i in range(1, n + 1):
            await asyncio.sleep(delay)
            yield Step("custom", {"count": i}, tokens=1)
            yield Step("updates", {"counter": {"count": i}})
        yield Step("values", {**values, "count": n})


def _assistant(assistant_id: str, graph_id: str, name: str, description: str) -> Doc:
    return {
        "assistant_id": assistant_id,
        "graph_id": graph_id,
        "name": name,
        "description": description,
        "version": 1,
        "config": {"configurable": {}},
        "context": {},
        "metadata": {"created_by": "system"},
        "created_at": CATALOGUE_CREATED_AT,
        "updated_at": CATALOGUE_CREATED_AT,
    }


# Ids as LangGraph derives them for a graph's default assistant: uuid5(NAMESPACE_URL, graph_id).
ECHO_ASSISTANT_ID = "e809e711-7ffe-5960-821d-7d83c173c321"
COUNTER_ASSISTANT_ID = "3c2ddcc0-8014-58a3-be2e-582ab4be4c07"

ASSISTANTS: list[Doc] = [
    _assistant(
        ECHO_ASSISTANT_ID, "echo", "Echo", "Streams its input text back, one token per word."
    ),
    _assistant(COUNTER_ASSISTANT_ID, "counter", "Counter", "Counts from 1 to input.n (default 5)."),
]
AGENTS: dict[str, ReferenceAgent] = {"echo": EchoAgent(), "counter": CounterAgent()}

# Every stream mode a client may ask for; the agents produce values, messages (sent as the modes
# messages and messages-tuple ask, _streams.py), updates and custom.
STREAM_MODES = (
    "values",
    "messages",
    "messages-tuple",
    "updates",
    "custom",
    "events",
    "debug",
    "tasks",
    "checkpoints",
)
DEFAULT_STREAM_MODES = ("values",)  # LangGraph's default, for a run that names no stream_mode


def find_assistant(assistant_id: str) -> Doc | None:
    """The assistant with this id, or the one of this graph (LangGraph accepts both)."""
    for assistant in ASSISTANTS:
        if assistant_id in (assistant["assistant_id"], assistant["graph_id"]):
            return assistant
    return None
