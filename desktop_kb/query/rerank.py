"""Rerank: a cross-encoder scores (question, passage) pairs across all knowledge bases at once."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from ..protocols import Reranker
from ..types import Hit

__all__ = ["RerankResult", "blend", "blend_of", "rerank", "reranked"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RerankResult:
    hits: tuple[Hit, ...]
    scored: bool  # True when the hits carry real cross-encoder scores
    degraded: bool  # True when the installed reranker failed (no reranker at all is a normal setup)
    reason: str = ""


def blend(fused: Sequence[float], scores: Sequence[float], weight: float) -> list[int]:
    """The candidates' order by ``(1 - weight) · fused + weight · score``, the fused scores min-max
    scaled over the candidates (reranker scores are in [0, 1]); ties keep the fused order.
    ``weight`` 1 orders by the reranker alone, 0 keeps the fused order."""
    lo, hi = (min(fused), max(fused)) if fused else (0.0, 0.0)
    span = hi - lo
    scaled = [(f - lo) / span if span > 0 else 0.0 for f in fused]
    mixed = [(1.0 - weight) * s + weight * float(r) for s, r in zip(scaled, scores, strict=True)]
    return sorted(range(len(mixed)), key=lambda i: -mixed[i])


def blend_of(reranker: Reranker, weight: float = -1.0, candidates: int = 0) -> tuple[float, int]:
    """(weight, candidates): the settings' where set (``query.rerank_weight`` / ``rerank_candidates``),
    else the reranker's own calibrated ``blend`` (our cross-encoder's manifest), else the reranker
    alone (1.0) over every candidate (0)."""
    own = getattr(reranker, "blend", None) or (1.0, 0)
    return (own[0] if weight == -1.0 else weight), (own[1] if candidates <= 0 else candidates)


def reranked(question: str, hits: Sequence[Hit], reranker: Reranker, weight: float = 1.0,
             candidates: int = 0) -> list[Hit]:
    """Every hit: the first ``candidates`` (0: all) in :func:`blend` order, each carrying its
    reranker score (``score`` and ``rerank_score``), then the rest in their fused order. Raises what
    the reranker raises."""
    n = candidates if candidates > 0 else len(hits)
    head, tail = list(hits[:n]), list(hits[n:])
    scores = reranker.score(question, [h.chunk.text for h in head])
    if len(scores) != len(head):
        raise ValueError(f"reranker returned {len(scores)} scores for {len(head)} passages")
    order = blend([h.score for h in head], scores, weight)
    return [dataclasses.replace(head[i], score=float(scores[i]), rerank_score=float(scores[i])) for i in order] + tail


def rerank(question: str, hits: Sequence[Hit], reranker: Reranker | None, top_k: int, *,
           weight: float = -1.0, candidates: int = 0) -> RerankResult:
    """The first ``top_k`` of :func:`reranked` (``weight`` / ``candidates``: see :func:`blend_of`)."""
    if reranker is None:
        return RerankResult(tuple(hits[:top_k]), scored=False, degraded=False, reason="no reranker installed")
    if len(hits) <= top_k:
        return RerankResult(tuple(hits), scored=False, degraded=False, reason="skipped: few candidates")
    try:
        ranked = reranked(question, hits, reranker, *blend_of(reranker, weight, candidates))
    except Exception as exc:  # a failing reranker must not stop the answer
        log.warning("reranker failed: %s", exc)
        return RerankResult(tuple(hits[:top_k]), scored=False, degraded=True, reason=f"reranker failed: {exc}")
    return RerankResult(tuple(ranked[:top_k]), scored=True, degraded=False)
