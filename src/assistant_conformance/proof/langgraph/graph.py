"""Deterministic agents of the LangGraph target (no LLM), loaded by `langgraph dev` in its own venv.

- `echo`: a typed chat state (`messages`); answers with the last message's text, streamed one
  token per word by a fake chat model with a short delay, so runs can be observed running,
  resumed and cancelled.
- `plain`: a typed state that reads a plain `input` string (and fails on anything else, chat
  messages included); answers the same text in `output`, streamed the same way.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from typing import Annotated, Any, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

DELAY = float(os.environ.get("CONFORMANCE_TOKEN_DELAY", "0.02"))  # seconds between tokens


def _text(messages: list[BaseMessage]) -> str:
    content = messages[-1].content if messages else ""
    return content if isinstance(content, str) else " ".join(str(part) for part in content)


class WordByWord(BaseChatModel):
    """Answers the last message's text, one chunk per word."""

    @property
    def _llm_type(self) -> str:
        return "word-by-word"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=_text(messages)))])

    async def _astream(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        for i, word in enumerate(_text(messages).split()):
            await asyncio.sleep(DELAY)
            text = word if i == 0 else f" {word}"
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=text))
            if run_manager is not None:
                await run_manager.on_llm_new_token(text, chunk=chunk)
            yield chunk


model = WordByWord()


class ChatState(TypedDict):
    messages: Annotated[list[BaseMessage], add_messages]


async def model_reply(state: ChatState) -> dict[str, Any]:
    return {"messages": [await model.ainvoke(state["messages"])]}


class PlainState(TypedDict, total=False):
    input: str
    output: str


async def answer(state: PlainState) -> dict[str, Any]:
    text = state.get("input")
    if not isinstance(text, str) or not text:
        raise ValueError("the plain agent reads a non-empty `input` string")
    reply = await model.ainvoke([("user", text)])
    return {"output": reply.content}


echo = (
    StateGraph(ChatState)
    .add_node("respond", model_reply)
    .add_edge(START, "respond")
    .add_edge("respond", END)
)
echo = echo.compile()
plain = StateGraph(PlainState).add_node(answer).add_edge(START, "answer").add_edge("answer", END)
plain = plain.compile()
