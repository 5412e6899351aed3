"""Fusion: weighted reciprocal-rank fusion, with leg weights chosen per query and corpus.

Why adaptive: an English question over Chinese documents matches almost nothing lexically, and
equal-weight RRF then lets a handful of accidental BM25 matches push good dense hits down. The
sparse leg's weight is therefore scaled by

* **term coverage**: the IDF-weighted share of the query's terms that occur in the corpus at all,
* **language agreement**: the share of the corpus written in the query's script (CJK or not),
  0 below 5% and saturating at 25%, so that a mixed-language corpus keeps both legs for both
  languages while an English question over Chinese documents drops the BM25 leg.

Measured on CMRC 2018 with the questions translated to English (300 queries): dense nDCG@10 0.565,
BM25 0.195, equal-weight RRF 0.499 (−6.7 points), adaptive without the floor 0.558 (mean sparse
weight 0.09);
with the floor the sparse weight is 0 there and hybrid equals dense.

Same-language queries whose terms all occur get the classic equal weights.

Note: we fuse here rather than with qdrant-edge's ``Fusion.Rrf(weights=…)`` because that engine
weights by dividing the rank (score = 1/(k − 1 + (rank+1)/w)), which at k=60 barely changes the
order; the classic weighted form is Σ w / (k + rank).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..protocols import ScoredRecord
from ..text.term_stats import idf
from ..text.tokenize import cjk_ratio

__all__ = ["FusedRecord", "LegWeights", "adaptive_weights", "convex", "language_agreement", "rrf", "term_coverage"]

AGREEMENT_FLOOR = 0.05
AGREEMENT_SATURATION = 0.25


@dataclass(frozen=True)
class LegWeights:
    dense: float
    sparse: float
    coverage: float
    language_agreement: float


@dataclass(frozen=True)
class FusedRecord:
    id: str
    score: float
    payload: dict
    dense_score: float | None
    sparse_score: float | None


def term_coverage(token_ids: Sequence[int], df: Mapping[int, int], n_docs: int) -> float:
    """IDF-weighted share of query terms that occur in the corpus (1.0 for an empty query)."""
    if not token_ids:
        return 0.0
    if n_docs <= 0:
        return 0.0
    total = present = 0.0
    for t in set(token_ids):
        d = df.get(t, 0)
        weight = idf(n_docs, d)
        total += weight
        if d > 0:
            present += weight
    return present / total if total else 0.0


def language_agreement(query_cjk: float, corpus_cjk: float) -> float:
    """How much of the corpus is written in the query's script (CJK or not): 0 below 5% (an
    English question over Chinese documents: only stray names and numbers could match), 1 from
    25% up (a mixed corpus fully agrees with queries in either language), linear in between."""
    share = query_cjk * corpus_cjk + (1 - query_cjk) * (1 - corpus_cjk)
    return max(0.0, min(1.0, (share - AGREEMENT_FLOOR) / (AGREEMENT_SATURATION - AGREEMENT_FLOOR)))


def adaptive_weights(query: str, corpus_cjk: float, coverage: float) -> LegWeights:
    agreement = language_agreement(cjk_ratio(query), corpus_cjk)
    return LegWeights(dense=1.0, sparse=max(0.0, min(1.0, coverage * agreement)), coverage=coverage,
                      language_agreement=agreement)


def rrf(
    dense_lists: Sequence[Sequence[ScoredRecord]],
    sparse_lists: Sequence[tuple[Sequence[ScoredRecord], float]],
    *,
    k: int = 60,
    dense_weight: float = 1.0,
    limit: int | None = None,
) -> list[FusedRecord]:
    """Σ weight / (k + rank) over every list (rank 1-based).

    Ties are common (ranks 1 and 2 mirrored across the legs score the same): they are broken by
    Σ weight · score / (the list's top score), so the leg that separates its top hit more clearly
    decides; remaining ties keep first-seen order."""
    scores: dict[str, float] = {}
    tiebreak: dict[str, float] = {}
    payloads: dict[str, dict] = {}
    dense_best: dict[str, float] = {}
    sparse_best: dict[str, float] = {}

    def add(records: Sequence[ScoredRecord], weight: float, best: dict[str, float]) -> None:
        top = records[0].score if records and records[0].score > 0 else 1.0
        for rank, rec in enumerate(records, start=1):
            payloads.setdefault(rec.id, rec.payload)
            best[rec.id] = max(best.get(rec.id, -math.inf), rec.score)
            scores[rec.id] = scores.get(rec.id, 0.0) + (weight / (k + rank) if weight > 0 else 0.0)
            tiebreak[rec.id] = tiebreak.get(rec.id, 0.0) + weight * rec.score / top

    for records in dense_lists:
        add(records, dense_weight, dense_best)
    for records, weight in sparse_lists:
        add(records, weight, sparse_best)
    order = sorted(scores, key=lambda i: (-round(scores[i], 12), -tiebreak[i]))  # stable beyond that
    fused = [FusedRecord(i, scores[i], payloads[i], dense_best.get(i), sparse_best.get(i)) for i in order]
    return fused[:limit] if limit is not None else fused


def _minmax(records: Sequence[ScoredRecord]) -> list[float]:
    if not records:
        return []
    hi, lo = max(r.score for r in records), min(r.score for r in records)
    span = hi - lo
    return [(r.score - lo) / span if span > 0 else 1.0 for r in records]


def convex(
    dense_lists: Sequence[Sequence[ScoredRecord]],
    sparse_lists: Sequence[tuple[Sequence[ScoredRecord], float]],
    *,
    alpha: float = 0.5,
    limit: int | None = None,
) -> list[FusedRecord]:
    """Σ α · minmax(dense score) + Σ (1 − α) · weight · minmax(BM25 score), each list normalised
    on its own (a record missing from a list adds 0). Unlike RRF it keeps how far apart the scores
    are, not only their order (Bruch et al., "An Analysis of Fusion Functions for Hybrid
    Retrieval", 2023); measured in docs/history/benchmarks-log.md before it was offered."""
    scores: dict[str, float] = {}
    payloads: dict[str, dict] = {}
    dense_best: dict[str, float] = {}
    sparse_best: dict[str, float] = {}

    def add(records: Sequence[ScoredRecord], weight: float, best: dict[str, float]) -> None:
        for rec, norm in zip(records, _minmax(records), strict=True):
            payloads.setdefault(rec.id, rec.payload)
            best[rec.id] = max(best.get(rec.id, -math.inf), rec.score)
            scores[rec.id] = scores.get(rec.id, 0.0) + weight * norm

    for records in dense_lists:
        add(records, alpha, dense_best)
    for records, weight in sparse_lists:
        add(records, (1.0 - alpha) * weight, sparse_best)
    order = sorted(scores, key=lambda i: -scores[i])
    fused = [FusedRecord(i, scores[i], payloads[i], dense_best.get(i), sparse_best.get(i)) for i in order]
    return fused[:limit] if limit is not None else fused
