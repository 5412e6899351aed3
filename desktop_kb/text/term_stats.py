"""Document frequencies of the knowledge base(s) an answer came from: what makes a word rare."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .tokenize import token_id, tokenize

__all__ = ["RARE_SHARE", "TermStats", "idf", "manifest_term_stats"]

RARE_SHARE = 0.05  # a claim word in at most this share of the documents (at most 20) is rare


def idf(n_docs: int, df: int) -> float:
    """BM25's inverse document frequency of a term found in ``df`` of ``n_docs`` documents."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


@dataclass(frozen=True)
class TermStats:
    """Document frequencies of the knowledge base(s) searched: a word that few documents contain
    is a rare (key) word. ``df`` maps tokens (as :func:`tokenize` gives them) to counts."""

    n_docs: int
    df: Callable[[Sequence[str]], dict[str, int]]

    def rare(self, tokens: Iterable[str], unseen: bool = True, share: float | None = None) -> set[str]:
        """The rare ones among ``tokens``; with ``unseen=False`` not those that no document has
        (in a question those are mostly its own wording, not the entity asked about)."""
        tokens = [t for t in set(tokens) if not t.isdigit()]
        if not tokens or self.n_docs <= 0:
            return set()
        counts = self.df(tokens)
        limit = max(1.0, min(20.0, (RARE_SHARE if share is None else share) * self.n_docs))
        return {t for t in tokens if counts.get(t, 0) <= limit and (unseen or counts.get(t, 0) > 0)}

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> TermStats:
        """Statistics of a list of documents (tests, the faithfulness set)."""
        counts: dict[str, int] = {}
        n = 0
        for text in texts:
            n += 1
            for t in set(tokenize(text)):
                counts[t] = counts.get(t, 0) + 1
        return cls(n, lambda tokens: {t: counts.get(t, 0) for t in tokens})


def manifest_term_stats(manifests: Sequence[Any]) -> TermStats:
    """Document frequencies summed over knowledge bases (their manifests' BM25 vocabularies)."""
    n_docs = sum(m.corpus_stats()[0] for m in manifests)

    def df(tokens: Sequence[str]) -> dict[str, int]:
        ids = {t: token_id(t) for t in tokens}
        out = dict.fromkeys(tokens, 0)
        for m in manifests:
            counts = m.document_frequencies(ids.values())
            for t, i in ids.items():
                out[t] += counts.get(i, 0)
        return out

    return TermStats(n_docs, df)
