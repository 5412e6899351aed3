"""Retrieval evaluation on a BEIR set: each mode's document ranking, metrics and latency.

Modes (all retrieve ``recall`` chunks, collapsed to documents by their best chunk):

* ``dense`` / ``sparse``: one leg alone.
* ``hybrid-equal``: classic equal-weight RRF (``adaptive=False``), the baseline.
* ``hybrid``: adaptive weighted RRF.
* ``hybrid-convex``: the same leg weights, fused by a convex combination of normalised scores.
* ``hybrid+rerank``: hybrid, then the cross-encoder reorders the first ``query.recall`` chunks
  (what the answer pipeline reranks); needs a reranker.
* ``default``: what the answer pipeline does: hybrid with the configured fusion, plus rerank when
  a reranker is installed.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..protocols import Reranker
from ..types import Hit
from .metrics import docs_by_max_score, evaluate, percentile

__all__ = [
    "ALL_MODES",
    "RERANK_MISSING",
    "ModeResult",
    "kb_views",
    "rerank_hits",
    "run_mode",
    "search_mode",
]

ALL_MODES = ("dense", "sparse", "hybrid-equal", "hybrid", "hybrid-convex", "hybrid+rerank", "default")
RERANK_MISSING = "needs a reranker: none installed"


@dataclass
class ModeResult:
    mode: str
    metrics: dict[str, float]
    latencies_ms: list[float]
    rankings: dict[str, list[str]]  # query id -> document ids, best first
    weights: dict[str, dict[str, float]] = field(default_factory=dict)  # query id -> leg weights (hybrid)
    note: str = ""

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: round(v, 4) for k, v in self.metrics.items() if k != "queries"}
        out["p50_ms"] = round(percentile(self.latencies_ms, 50), 1)
        out["p95_ms"] = round(percentile(self.latencies_ms, 95), 1)
        out["queries"] = int(self.metrics.get("queries", 0))
        if self.weights:
            sw = [w["sparse"] for w in self.weights.values()]
            out["mean_sparse_weight"] = round(statistics.fmean(sw), 4)
            out["share_downweighted"] = round(sum(1 for s in sw if s < 0.999) / len(sw), 4)
        if self.note:
            out["note"] = self.note
        return out


def kb_views(lib: Any, names: Sequence[str]) -> list[Any]:
    """The retrieval views search and ask use (``Library.views``: same store, manifest, BM25 encoder
    with the knowledge base's recorded average length, embedder checked)."""
    return list(lib.views(list(names)))


def rerank_hits(query: str, hits: Sequence[Hit], reranker: Reranker, n: int) -> list[Hit]:
    """The first ``n`` hits reordered by the cross-encoder (as the answer pipeline does), followed
    by the rest in their fused order (so Recall@100 stays computable)."""
    head, tail = list(hits[:n]), list(hits[n:])
    if not head:
        return []
    scores = reranker.score(query, [h.chunk.text for h in head])
    order = sorted(range(len(head)), key=lambda i: -float(scores[i]))
    return [head[i] for i in order] + tail


def search_mode(
    lib: Any, views: Sequence[Any], query: str | Sequence[str], mode: str, *, recall: int,
    reranker: Reranker | None,
) -> tuple[list[Hit], dict[str, float] | None]:
    """One query (or a question with its rewrite: the first is the question) in one mode: the
    ranked chunk hits and (hybrid modes) the sparse leg weights of the first."""
    searched = [query] if isinstance(query, str) else list(query)
    query = searched[0]
    from ..query.retrieve import retrieve

    q = lib.settings.query
    fusion = "rrf"
    if mode in ("dense", "sparse"):
        leg, adaptive = mode, False
    elif mode == "hybrid-equal":
        leg, adaptive = "hybrid", False
    elif mode in ("hybrid", "hybrid+rerank"):
        leg, adaptive = "hybrid", True
    elif mode == "hybrid-convex":
        leg, adaptive, fusion = "hybrid", True, "convex"
    elif mode == "default":
        leg, adaptive, fusion = "hybrid", q.adaptive_fusion, q.fusion
    else:
        raise ValueError(f"unknown mode {mode!r}")
    result = retrieve(searched, views, lib.embedder, recall=recall, rrf_k=q.rrf_k, adaptive=adaptive,
                      mode=leg, fusion=fusion)  # type: ignore[arg-type]
    hits = list(result.hits)
    if mode == "hybrid+rerank" or (mode == "default" and reranker is not None):
        if reranker is None:
            raise ValueError(RERANK_MISSING)
        hits = rerank_hits(query, hits, reranker, q.recall)
    weights = None
    if leg == "hybrid" and result.weights:
        w = next(iter(result.weights.values()))  # one query, one KB
        weights = {"dense": w.dense, "sparse": w.sparse, "coverage": w.coverage,
                   "language_agreement": w.language_agreement}
    return hits, weights


def run_mode(
    lib: Any,
    views: Sequence[Any],
    mode: str,
    queries: Mapping[str, str | Sequence[str]],
    qrels: Mapping[str, Mapping[str, int]],
    doc_of: Callable[[Hit], str],
    *,
    recall: int = 100,
    reranker: Reranker | None = None,
    on_query: Callable[[int, int], None] | None = None,
) -> ModeResult:
    rankings: dict[str, list[str]] = {}
    latencies: list[float] = []
    weights: dict[str, dict[str, float]] = {}
    if queries:  # warm up (model load, first-query caches) outside the timings
        search_mode(lib, views, next(iter(queries.values())), mode, recall=recall, reranker=reranker)
    for i, (qid, text) in enumerate(queries.items()):
        t0 = time.perf_counter()
        hits, w = search_mode(lib, views, text, mode, recall=recall, reranker=reranker)
        latencies.append((time.perf_counter() - t0) * 1000)
        # hits are in final order; position stands in for the score so reranked lists collapse correctly
        rankings[qid] = docs_by_max_score((doc_of(h), -rank) for rank, h in enumerate(hits))
        if w is not None:
            weights[qid] = w
        if on_query is not None:
            on_query(i + 1, len(queries))
    return ModeResult(mode, evaluate(rankings, qrels), latencies, rankings, weights)
