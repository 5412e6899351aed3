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

import json
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..protocols import Reranker
from ..types import Hit
from .metrics import docs_by_max_score, evaluate, mrr_at_k, ndcg_at_k, percentile

__all__ = [
    "ALL_MODES",
    "RERANK_MISSING",
    "TABLE_ORDER",
    "ModeResult",
    "format_table",
    "fusion_verdict",
    "kb_views",
    "rerank_hits",
    "run_mode",
    "search_mode",
    "write_per_query",
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


def rerank_hits(query: str, hits: Sequence[Hit], reranker: Reranker, n: int, weight: float = -1.0,
                candidates: int = 0) -> list[Hit]:
    """The first ``n`` hits reordered as the answer pipeline reorders them (the blend of
    ``query.rerank_weight`` / ``rerank_candidates``, :func:`desktop_kb.query.rerank.blend_of`),
    followed by the rest in their fused order (so Recall@100 stays computable)."""
    from ..query.rerank import blend_of, reranked

    head, tail = list(hits[:n]), list(hits[n:])
    if not head:
        return []
    return reranked(query, head, reranker, *blend_of(reranker, weight, candidates)) + tail


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
        hits = rerank_hits(query, hits, reranker, q.recall, q.rerank_weight, q.rerank_candidates)
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


# -- the report ------------------------------------------------------------------------------------
TABLE_ORDER = ALL_MODES  # the report's rows, in this order
LABELS = {"dense": "dense", "sparse": "sparse (BM25)", "hybrid-equal": "hybrid-equal (RRF)",
          "hybrid": "hybrid (adaptive)", "hybrid-convex": "hybrid (convex)", "hybrid+rerank": "hybrid+rerank",
          "default": "default"}


def format_table(summaries: dict[str, dict[str, Any]]) -> str:
    cols = [("nDCG@10", "ndcg@10", "{:.4f}"), ("R@10", "recall@10", "{:.4f}"), ("R@100", "recall@100", "{:.4f}"),
            ("MRR@10", "mrr@10", "{:.4f}"), ("p50 ms", "p50_ms", "{:.1f}"), ("p95 ms", "p95_ms", "{:.1f}")]
    lines = [f"{'mode':<20}" + "".join(f"{c:>9}" for c, _, _ in cols) + "  note"]
    for mode in TABLE_ORDER:
        s = summaries.get(mode)
        if s is None:
            continue
        note = s.get("note", "")
        if "mean_sparse_weight" in s and mode != "hybrid-equal":
            note = (note + "; " if note else "") + (f"mean sparse weight {s['mean_sparse_weight']:.2f}, "
                                                    f"{s['share_downweighted']:.0%} of queries down-weighted")
        lines.append(f"{LABELS[mode]:<20}" + "".join(f"{fmt.format(s[k]):>9}" for _, k, fmt in cols) + "  " + note)
    return "\n".join(lines)


def fusion_verdict(summaries: dict[str, dict[str, Any]], tolerance: float = 0.005) -> str:
    """The product rule: adaptive fusion must not lose to its best leg (nDCG@10)."""
    legs = {m: summaries[m]["ndcg@10"] for m in ("dense", "sparse") if m in summaries}
    if "hybrid" not in summaries or len(legs) < 2:
        return ""
    best = max(legs, key=lambda m: legs[m])
    fused = summaries["hybrid"]["ndcg@10"]
    gap = fused - legs[best]
    lines = []
    if gap >= -tolerance:
        lines.append(f"fusion check: OK, hybrid (adaptive) {fused:.4f} vs best leg {best} {legs[best]:.4f} "
                     f"({gap:+.4f})")
    else:
        lines.append(f"fusion check: FAILS, hybrid (adaptive) {fused:.4f} loses to {best} {legs[best]:.4f} "
                     f"({gap:+.4f})")
    if "hybrid-equal" in summaries:
        eq = summaries["hybrid-equal"]["ndcg@10"]
        lines.append(f"equal-weight RRF {eq:.4f} ({eq - legs[best]:+.4f} vs {best}, {fused - eq:+.4f} for adaptive)")
    if "hybrid-convex" in summaries:
        cv = summaries["hybrid-convex"]["ndcg@10"]
        lines.append(f"convex fusion {cv:.4f} ({cv - legs[best]:+.4f} vs {best}, {cv - fused:+.4f} vs adaptive RRF)")
    return "\n".join(lines)


def write_per_query(path: Path, queries: dict[str, str], results: dict[str, Any], qrels: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for qid, text in queries.items():
            rec: dict[str, Any] = {"id": qid, "query": text, "relevant": qrels.get(qid, {})}
            for mode, r in results.items():
                ranking = r.rankings.get(qid, [])
                rec[mode] = {"top10": ranking[:10], "ndcg@10": round(ndcg_at_k(ranking, qrels.get(qid, {})), 4),
                             "mrr@10": round(mrr_at_k(ranking, qrels.get(qid, {})), 4)}
                if qid in r.weights:
                    rec[mode]["weights"] = r.weights[qid]
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
