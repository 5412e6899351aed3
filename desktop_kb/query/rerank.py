"""Rerank: a cross-encoder scores (question, passage) pairs across all knowledge bases at once."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from ..protocols import Reranker
from ..types import Hit

__all__ = ["RerankResult", "rerank"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RerankResult:
    hits: tuple[Hit, ...]
    scored: bool  # True when the hits carry real cross-encoder scores
    degraded: bool  # True when the installed reranker failed (no reranker at all is a normal setup)
    reason: str = ""


def rerank(question: str, hits: Sequence[Hit], reranker: Reranker | None, top_k: int) -> RerankResult:
    if reranker is None:
        return RerankResult(tuple(hits[:top_k]), scored=False, degraded=False, reason="no reranker installed")
    if len(hits) <= top_k:
        return RerankResult(tuple(hits), scored=False, degraded=False, reason="skipped: few candidates")
    try:
        scores = reranker.score(question, [h.chunk.text for h in hits])
        if len(scores) != len(hits):
            raise ValueError(f"reranker returned {len(scores)} scores for {len(hits)} passages")
    except Exception as exc:  # a failing reranker must not stop the answer
        log.warning("reranker failed: %s", exc)
        return RerankResult(tuple(hits[:top_k]), scored=False, degraded=True, reason=f"reranker failed: {exc}")
    order = sorted(range(len(hits)), key=lambda i: -scores[i])
    ranked = tuple(dataclasses.replace(hits[i], score=float(scores[i]), rerank_score=float(scores[i]))
                   for i in order[:top_k])
    return RerankResult(ranked, scored=True, degraded=False)
