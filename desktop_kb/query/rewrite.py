"""Rewrite: the question (plus recent turns) → at most 2 search queries, the original first.

A first question (no conversation) is searched as asked: an LLM call there costs seconds and,
measured with `eval retrieval`, gains nothing. The exception is a question in another language
than the knowledge base: it is also searched translated, so the BM25 leg can match. Follow-ups
are rewritten into a standalone question, searched alone: "And in first-tier cities?" searched as
asked finds whatever mentions cities, so it is no query of its own; the answer and its check are
given the standalone question too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..progress import CancelToken
from ..protocols import Generator
from ..text.tokenize import cjk_ratio
from .fuse import language_agreement
from .llm_json import ask_json
from .prompts import REWRITE_SCHEMA, rewrite_messages
from .references import resolve_reference
from .translate import translate

__all__ = ["invented_entities", "rewrite", "translation_target"]

# Entity-like tokens: numbers, capitalised or mixed-case Latin words, identifiers with digits.
_ENTITY = re.compile(r"\b(?:\d[\d.,:/-]*|[A-Z][\w-]*|\w*\d\w*)\b")


def invented_entities(query: str, sources: Sequence[str]) -> list[str]:
    """Entity-like tokens in ``query`` that appear nowhere in ``sources`` (case-insensitive)."""
    pool = " ".join(sources).lower()
    return [e for e in _ENTITY.findall(query) if e.lower() not in pool and len(e) > 1]


def _same(a: str, b: str) -> bool:
    norm = lambda s: re.sub(r"[\W_]+", "", s.lower())  # noqa: E731
    return norm(a) == norm(b)


def translation_target(question: str, corpus_cjk: float | None) -> str | None:
    """"zh" or "en" when the knowledge base is mostly in the other script than the question (the
    BM25 leg then gets no weight, see :func:`.fuse.language_agreement`); else ``None``."""
    if corpus_cjk is None:
        return None
    q_cjk = cjk_ratio(question)
    if language_agreement(q_cjk, corpus_cjk) >= 1.0:
        return None
    return "en" if q_cjk > 0.3 else "zh"


def rewrite(
    question: str, history: Sequence[tuple[str, str]], generator: Generator | None, *,
    max_queries: int = 2, cancel: CancelToken | None = None, mode: str = "always",
    corpus_cjk: float | None = None,
) -> list[str]:
    """[question] or [question, rewritten]; a follow-up (``history``): [standalone] in its place.
    Any invalid output falls back to [question].
    ``mode`` "auto" skips first questions except to translate (``corpus_cjk``: the knowledge
    base's share of CJK letters); "off" never calls the LLM."""
    queries = [question]
    if generator is None or max_queries < 2 or mode == "off":
        return queries
    if mode == "auto" and not history:
        target = translation_target(question, corpus_cjk)
        translated = translate(question, target, generator, cancel=cancel) if target else None
        if translated and not _same(translated, question):
            queries.append(translated)
        return queries
    reply = ask_json(generator, rewrite_messages(question, history), REWRITE_SCHEMA, max_tokens=96, cancel=cancel)
    candidate = " ".join(str(reply["query"]).split()) if reply is not None else ""
    sources = [question] + [t for turn in history for t in turn]
    if candidate and not _same(candidate, question) and not invented_entities(candidate, sources):
        queries = [candidate] if history else [question, candidate]
    if history:  # a pronoun the rewrite left ("它全长多少？") is replaced by what it stands for
        queries = [resolve_reference(queries[0], history, generator, cancel=cancel) or queries[0]]
    return queries[:max_queries]
