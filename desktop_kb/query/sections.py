"""Answering from a whole section or document: its chunks in reading order, within the context
budget; a section larger than the budget is answered map-reduce (a partial answer per part, each
citing its passages by their global numbers, then one answer combined from the partial ones)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..progress import CancelToken
from ..protocols import ChatMessage, Generator
from ..text.budget import estimate_tokens
from ..types import Chunk, Hit
from .loops import guarded_chat
from .prompts import answer_messages, reduce_messages
from .scope import Scope

__all__ = ["map_reduce", "scope_passages", "split_parts"]


def scope_passages(scope: Scope, chunks: Sequence[Chunk]) -> list[Hit]:
    """The scope's chunks (from the document's chunk list) as passages, in reading order."""
    wanted = set(scope.chunk_ids)
    picked = sorted((c for c in chunks if c.chunk_id in wanted), key=lambda c: (c.start, c.index))
    return [Hit(chunk=c, kb=scope.kb, score=0.0) for c in picked]


def split_parts(passages: Sequence[Hit], budget: int) -> list[list[int]]:
    """Consecutive passage indexes grouped so that each group's text fits ``budget`` tokens (a
    passage bigger than the budget is a group of its own)."""
    parts: list[list[int]] = [[]]
    used = 0
    for i, h in enumerate(passages):
        cost = estimate_tokens(h.chunk.text) + 12  # its label and delimiters
        if parts[-1] and used + cost > budget:
            parts.append([])
            used = 0
        parts[-1].append(i)
        used += cost
    return [p for p in parts if p]


def map_reduce(
    question: str,
    passages: Sequence[Hit],
    history: Sequence[tuple[str, str]],
    generator: Generator,
    parts: Sequence[Sequence[int]],
    *,
    max_tokens: int = 512,
    part_tokens: int = 200,
    on_part: Callable[[int, int], None] | None = None,
    on_token: Callable[[str], None] | None = None,
    cancel: CancelToken | None = None,
) -> tuple[str, list[ChatMessage]]:
    """The combined answer and the conversation that produced it (the reduce step's, so a
    correction retry revises the combined answer). Each part answers in at most ``part_tokens``,
    the combination in ``max_tokens``; a reply that loops is cut before its first repeat."""
    partials: list[str] = []
    for k, part in enumerate(parts, 1):
        if on_part is not None:
            on_part(k, len(parts))
        subset = [passages[i] for i in part]
        messages = answer_messages(question, subset, history, first=part[0] + 1,
                                   note=f"These passages are part {k} of {len(parts)} of the section asked "
                                        "about; answer for this part only.")
        text = guarded_chat(generator, messages, max_tokens=part_tokens, cancel=cancel).text
        if text:
            partials.append(text)
    messages = reduce_messages(question, partials)
    return guarded_chat(generator, messages, max_tokens=max_tokens, on_token=on_token, cancel=cancel).text, messages
