"""Text splitting for knowledge documents, driven by a knowledge base's `parserConfig`.

The text is first cut at the delimiter tokens (the `delimiter` string holds them separated by
spaces; `\\n`, `\\r` and `\\t` written as text mean the control characters), pieces longer than
`chunkSize` are cut into windows, and the pieces are then packed greedily, joined by one space,
into chunks of at most `chunkSize` characters. A new chunk starts with the tail of the previous one
(whole pieces, at most `chunkOverlap` characters), as common RAG splitters do.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any

DEFAULT_CHUNK_SIZE = 1000
DEFAULT_CHUNK_OVERLAP = 0
DEFAULT_DELIMITERS = ["\n\n", "\n"]
JOINER = " "

_ESCAPES = {"\\n": "\n", "\\r": "\r", "\\t": "\t"}


def chunk_settings(config: dict[str, Any]) -> tuple[int, int, list[str]]:
    """(chunk size, overlap, delimiter tokens), made usable: bounds are not in the contract,
    so any number is accepted and brought into range instead of being refused."""
    size = config.get("chunkSize")
    size = DEFAULT_CHUNK_SIZE if size is None else max(1, int(size))
    overlap = config.get("chunkOverlap")
    overlap = DEFAULT_CHUNK_OVERLAP if overlap is None else min(max(0, int(overlap)), size - 1)
    delimiter = config.get("delimiter")
    tokens = DEFAULT_DELIMITERS if delimiter is None else delimiter_tokens(delimiter)
    return size, overlap, tokens


def delimiter_tokens(delimiter: str) -> list[str]:
    tokens = {_unescape(token) for token in delimiter.split(" ") if token}
    return sorted(tokens, key=len, reverse=True)  # longest first: "\n\n" wins over "\n"


def _unescape(token: str) -> str:
    for text, char in _ESCAPES.items():
        token = token.replace(text, char)
    return token


def split_text(text: str, size: int, overlap: int, tokens: list[str]) -> list[str]:
    """The chunks of `text`; an empty list when it holds nothing but whitespace."""
    pattern = "|".join(re.escape(token) for token in tokens)
    pieces = [piece.strip() for piece in (re.split(pattern, text) if tokens else [text])]
    windows = [w for piece in pieces if piece for w in _windows(piece, size, overlap)]
    return _pack(windows, size, overlap)


def _windows(piece: str, size: int, overlap: int) -> list[str]:
    """A piece cut into windows of `size` characters overlapping by `overlap`."""
    out, start = [], 0
    while True:
        out.append(piece[start : start + size])
        if start + size >= len(piece):
            return out
        start += size - overlap


def _pack(pieces: list[str], size: int, overlap: int) -> list[str]:
    chunks: list[str] = []
    window: deque[str] = deque()
    total = 0  # length of JOINER.join(window)
    for piece in pieces:
        if window and total + len(JOINER) + len(piece) > size:
            chunks.append(JOINER.join(window))
            # Keep a tail of at most `overlap` characters that still leaves room for `piece`.
            while window and (total > overlap or total + len(JOINER) + len(piece) > size):
                dropped = window.popleft()
                total -= len(dropped) + (len(JOINER) if window else 0)
        total += len(piece) + (len(JOINER) if window else 0)
        window.append(piece)
    if window:
        chunks.append(JOINER.join(window))
    return chunks


def count_tokens(chunks: list[str]) -> int:
    """Words embedded, overlaps included: the deterministic stand-in for model tokens."""
    return sum(len(chunk.split()) for chunk in chunks)
