"""Generate: the local LLM answers from numbered passages, streaming tokens as they come."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..progress import CancelToken
from ..protocols import ChatMessage, Generator
from ..types import Hit
from .loops import guarded_chat
from .prompts import answer_messages

__all__ = ["generate", "order_passages"]


def order_passages(hits: Sequence[Hit], reading_order: bool) -> list[Hit]:
    """Rerank order, or reading order (file → page → position) for long-document questions."""
    if not reading_order:
        return list(hits)
    return sorted(hits, key=lambda h: (h.chunk.path, h.chunk.pages[:1] or (0,), h.chunk.start))


def generate(
    question: str,
    hits: Sequence[Hit],
    history: Sequence[tuple[str, str]],
    generator: Generator,
    *,
    max_tokens: int = 512,
    on_token: Callable[[str], None] | None = None,
    cancel: CancelToken | None = None,
    messages: list[ChatMessage] | None = None,
    temperature: float = 0.0,
    texts: Sequence[str] | None = None,
) -> tuple[str, list[ChatMessage]]:
    """The answer text and the conversation that produced it (for correction retries); the LLM
    reads ``texts`` (evidence windows) in place of the hits' whole chunks when given. A reply that
    loops is stopped and cut before its first repeat (:mod:`.loops`)."""
    messages = messages if messages is not None else answer_messages(question, hits, history, texts)
    reply = guarded_chat(generator, messages, max_tokens=max_tokens, temperature=temperature, on_token=on_token,
                         cancel=cancel)
    return reply.text, messages
