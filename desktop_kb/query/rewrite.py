"""Rewrite: the question (plus recent turns) → at most 2 search queries, the original first."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..progress import CancelToken
from ..protocols import Generator
from .llm_json import ask_json
from .prompts import REWRITE_SCHEMA, rewrite_messages

__all__ = ["invented_entities", "rewrite"]

# Entity-like tokens: numbers, capitalised or mixed-case Latin words, identifiers with digits.
_ENTITY = re.compile(r"\b(?:\d[\d.,:/-]*|[A-Z][\w-]*|\w*\d\w*)\b")


def invented_entities(query: str, sources: Sequence[str]) -> list[str]:
    """Entity-like tokens in ``query`` that appear nowhere in ``sources`` (case-insensitive)."""
    pool = " ".join(sources).lower()
    return [e for e in _ENTITY.findall(query) if e.lower() not in pool and len(e) > 1]


def _same(a: str, b: str) -> bool:
    norm = lambda s: re.sub(r"[\W_]+", "", s.lower())  # noqa: E731
    return norm(a) == norm(b)


def rewrite(
    question: str, history: Sequence[tuple[str, str]], generator: Generator | None, *,
    max_queries: int = 2, cancel: CancelToken | None = None,
) -> list[str]:
    """[question] or [question, rewritten]. Any invalid output falls back to [question]."""
    queries = [question]
    if generator is None or max_queries < 2:
        return queries
    reply = ask_json(generator, rewrite_messages(question, history), REWRITE_SCHEMA, max_tokens=96, cancel=cancel)
    if reply is None:
        return queries
    candidate = " ".join(str(reply["query"]).split())
    sources = [question] + [t for turn in history for t in turn]
    if candidate and not _same(candidate, question) and not invented_entities(candidate, sources):
        queries.append(candidate)
    return queries[:max_queries]
