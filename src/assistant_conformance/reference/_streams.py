"""What a run's stream sends for the modes it asked for, as LangGraph's servers send them.

Agents yield steps in the modes of LangGraph's library (_agents.py): `values`, `updates`, `custom`,
and `messages`, whose data is a `[message, metadata]` pair: a chunk (its `type` ends in `Chunk`)
per token, then the whole message once it is complete. A run's stream sends, per mode asked:

- `values`, `updates`, `custom`: each step of that mode as it is;
- `messages-tuple`: each pair as event `messages`, `[chunk, metadata]`; a whole message only when
  none of its chunks was sent (LangGraph's library does not send a streamed message again);
- `messages`: LangGraph's message events: `messages/metadata` `{id: {"metadata": metadata}}` the
  first time a message id is seen, `messages/partial` `[the message so far]` for each chunk (the
  chunks' content joined, as a whole message: `type` "ai", not "AIMessageChunk"), and
  `messages/complete` `[the message]` once it is whole. A run that fails mid-message completes
  nothing.

Both message modes may be asked at once; each then sends its own events (as LangGraph's
JavaScript server does). A run that names no stream_mode streams `values` alone (LangGraph's
default; `DEFAULT_STREAM_MODES` in _agents.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._agents import Step
from .db import Doc


def is_chunk(message: Any) -> bool:
    return isinstance(message, dict) and str(message.get("type", "")).endswith("Chunk")


def whole_type(chunk_type: str) -> str:
    """The type of the whole message a chunk is part of: "AIMessageChunk" -> "ai"."""
    return chunk_type.removesuffix("Chunk").removesuffix("Message").lower() or "ai"


class RunStream:
    """The events one run sends, step by step (one per run: it remembers the messages seen)."""

    def __init__(self, modes: Iterable[str]) -> None:
        self.modes = frozenset(modes)
        self.so_far: dict[str, Doc] = {}  # message id -> the message its chunks make so far
        self.seen: set[str] = set()  # message ids sent in any form

    def events(self, step: Step) -> list[tuple[str, Any]]:
        if step.mode != "messages":
            return [(step.mode, step.data)] if step.mode in self.modes else []
        message, metadata = step.data
        message_id = str(message.get("id"))
        chunk, first = is_chunk(message), message_id not in self.seen
        self.seen.add(message_id)
        events: list[tuple[str, Any]] = []
        if "messages-tuple" in self.modes and (chunk or first):
            events.append(("messages", step.data))
        if "messages" in self.modes:
            if first:
                events.append(("messages/metadata", {message_id: {"metadata": metadata}}))
            if chunk:
                before = self.so_far.get(message_id)
                content = (before["content"] if before else "") + message["content"]
                whole = {**message, "type": whole_type(message["type"]), "content": content}
                self.so_far[message_id] = whole
                events.append(("messages/partial", [whole]))
            else:
                self.so_far.pop(message_id, None)
                events.append(("messages/complete", [message]))
        return events
