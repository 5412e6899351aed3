"""BM25 sparse vectors: term-frequency saturation here, IDF applied by Qdrant's IDF modifier.

Document weight of term t: ``tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg_len))``.
Query weight: 1 per distinct term (Qdrant multiplies by IDF at search time), so the dot product
is the classic BM25 score.
"""

from __future__ import annotations

from collections import Counter

from ..protocols import SparseVec
from ..text.tokenize import token_id, tokenize

__all__ = ["BM25Encoder", "token_id"]


class BM25Encoder:
    """Our own BM25 encoder (Chinese-aware); ``id`` records the tokeniser version."""

    id = "desktop-kb/bm25-v1"

    def __init__(self, k1: float = 1.2, b: float = 0.75, avg_len: float = 120.0) -> None:
        self.k1 = k1
        self.b = b
        # Floor: a knowledge base of one-line notes must not turn every length into a penalty.
        self.avg_len = max(avg_len, 20.0)

    def tokenize(self, text: str) -> list[str]:
        return tokenize(text)

    def _weights(self, counts: Counter[int], length: int) -> SparseVec:
        norm = self.k1 * (1 - self.b + self.b * length / self.avg_len)
        items = sorted(counts.items())
        return SparseVec(
            tuple(i for i, _ in items),
            tuple(tf * (self.k1 + 1) / (tf + norm) for _, tf in items),
        )

    def encode_document(self, text: str) -> SparseVec:
        tokens = self.tokenize(text)
        return self._weights(Counter(token_id(t) for t in tokens), len(tokens))

    def encode_query(self, text: str) -> SparseVec:
        ids = sorted({token_id(t) for t in self.tokenize(text)})
        return SparseVec(tuple(ids), tuple(1.0 for _ in ids))
