"""Ranking metrics (BEIR / trec_eval conventions) and latency percentiles.

* Relevance grades come from qrels; a grade <= 0 means "not relevant".
* nDCG@k uses linear gain and the log2 discount: DCG = Σ_{i=1..k} rel_i / log2(i + 1); the ideal
  DCG sorts all graded qrels of the query (not just the retrieved ones) in decreasing order.
* A document repeated in a ranking counts once, at its first (best) position.
* Queries with no relevant document are skipped by :func:`evaluate` (as BEIR does); the single-query
  functions return 0.0 for them.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

__all__ = [
    "char_error_rate",
    "dedupe",
    "docs_by_max_score",
    "evaluate",
    "mrr_at_k",
    "ndcg_at_k",
    "percentile",
    "recall_at_k",
]

T = TypeVar("T", bound=Hashable)


def dedupe(ranking: Iterable[T]) -> list[T]:
    """The ranking with repeats removed (first occurrence kept)."""
    return list(dict.fromkeys(ranking))


def docs_by_max_score(scored: Iterable[tuple[T, float]]) -> list[T]:
    """Collapse (doc, score) pairs (e.g. chunk hits) into a document ranking, each document scored by
    its best pair; ties keep the order in which the documents first appeared."""
    best: dict[T, float] = {}
    for doc, score in scored:
        if doc not in best or score > best[doc]:
            best[doc] = score
    return sorted(best, key=lambda d: -best[d])  # sorted() is stable: first-seen wins ties


def ndcg_at_k(ranking: Sequence[str], qrels: Mapping[str, int], k: int = 10) -> float:
    ideal = sorted((g for g in qrels.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    if idcg <= 0:
        return 0.0
    dcg = sum(max(qrels.get(d, 0), 0) / math.log2(i + 2) for i, d in enumerate(dedupe(ranking)[:k]))
    return dcg / idcg


def recall_at_k(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    relevant = {d for d, g in qrels.items() if g > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(dedupe(ranking)[:k])) / len(relevant)


def mrr_at_k(ranking: Sequence[str], qrels: Mapping[str, int], k: int = 10) -> float:
    for i, d in enumerate(dedupe(ranking)[:k]):
        if qrels.get(d, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def evaluate(rankings: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]]) -> dict[str, float]:
    """Mean nDCG@10, Recall@10, Recall@100 and MRR@10 over the queries of ``rankings`` that have at
    least one relevant document (a query missing from ``rankings`` is not counted)."""
    sums = {"ndcg@10": 0.0, "recall@10": 0.0, "recall@100": 0.0, "mrr@10": 0.0}
    n = 0
    for qid, ranking in rankings.items():
        rels = qrels.get(qid, {})
        if not any(g > 0 for g in rels.values()):
            continue
        n += 1
        sums["ndcg@10"] += ndcg_at_k(ranking, rels, 10)
        sums["recall@10"] += recall_at_k(ranking, rels, 10)
        sums["recall@100"] += recall_at_k(ranking, rels, 100)
        sums["mrr@10"] += mrr_at_k(ranking, rels, 10)
    return {key: (value / n if n else 0.0) for key, value in sums.items()} | {"queries": n}


def percentile(values: Sequence[float], p: float) -> float:
    """Linear-interpolated percentile (numpy's default method); 0.0 for no values."""
    if not values:
        return 0.0
    xs = sorted(values)
    pos = (len(xs) - 1) * p / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def char_error_rate(got: str, want: str, *, ignore_spaces: bool = False) -> float:
    """Edit distance from ``want`` to ``got`` over ``want``'s length, whitespace collapsed (or, with
    ``ignore_spaces``, dropped: only the characters recognised count)."""
    sep = "" if ignore_spaces else " "
    a, b = sep.join(got.split()), sep.join(want.split())
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1] / max(len(b), 1)

