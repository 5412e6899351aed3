"""Retrieval: for each query, the dense and sparse legs from every knowledge base, fused by RRF
(or by a convex combination of normalised scores, ``query.fusion = "convex"``).

Dense cosine scores are comparable across knowledge bases (same embedder), so dense lists are
merged by score; BM25 scores are not (each KB has its own IDF), so each KB's sparse list enters
the fusion on its own, with the weight its term coverage earns. Filters go to the store, which
applies them inside every leg.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..ingest.manifest import Manifest
from ..protocols import Embedder, ScoredRecord, SearchFilter, SparseEncoder, VectorStore
from ..types import Chunk, Hit
from .fuse import LegWeights, adaptive_weights, convex, rrf, term_coverage

__all__ = ["KBView", "Mode", "RetrievalResult", "hit_from_payload", "retrieve"]

Mode = Literal["hybrid", "dense", "sparse"]


@dataclass(frozen=True)
class KBView:
    name: str
    store: VectorStore
    manifest: Manifest
    sparse: SparseEncoder


@dataclass(frozen=True)
class RetrievalResult:
    hits: tuple[Hit, ...]
    weights: dict[str, LegWeights]  # per "query|kb"
    best_dense: float | None  # top-1 cosine over all queries and KBs (the no-reranker fallback signal)


def hit_from_payload(kb: str, rec_id: str, payload: dict, score: float, **scores: float | None) -> Hit:
    chunk = Chunk(
        chunk_id=str(payload.get("chunk_id", rec_id)), doc_id=str(payload.get("doc_id", "")),
        path=str(payload.get("path", "")), index=int(payload.get("index", 0)), text=str(payload.get("text", "")),
        heading_path=tuple(payload.get("heading_path") or ()), start=int(payload.get("start", 0)),
        end=int(payload.get("end", 0)), pages=tuple(int(p) for p in payload.get("pages") or ()),
    )
    return Hit(chunk=chunk, kb=kb, score=score, payload=payload, **scores)


def retrieve(
    queries: Sequence[str],
    kbs: Sequence[KBView],
    embedder: Embedder,
    *,
    flt: SearchFilter | None = None,
    recall: int = 20,
    rrf_k: int = 60,
    adaptive: bool = True,
    mode: Mode = "hybrid",
    fusion: str = "rrf",
) -> RetrievalResult:
    dense_lists: list[list[ScoredRecord]] = []
    sparse_lists: list[tuple[list[ScoredRecord], float]] = []
    weights: dict[str, LegWeights] = {}
    best_dense: float | None = None
    stats = {kb.name: kb.manifest.corpus_stats() for kb in kbs} if adaptive and mode == "hybrid" else {}
    for query in queries:
        qvec = embedder.embed_query(query) if mode != "sparse" else None
        merged_dense: list[ScoredRecord] = []
        for kb in kbs:
            svec = kb.sparse.encode_query(query) if mode != "dense" else None
            dense, sparse = kb.store.search_both(kb.name, np.asarray(qvec) if qvec is not None else None,
                                                 svec, flt, recall)
            merged_dense.extend(_tag(dense, kb.name))
            if mode == "dense" or svec is None:
                continue
            if adaptive and mode == "hybrid":
                n_docs, _, cjk, letters = stats[kb.name]
                coverage = term_coverage(svec.indices, kb.manifest.document_frequencies(svec.indices), n_docs)
                w = adaptive_weights(query, cjk / letters if letters else 0.0, coverage)
            else:
                w = LegWeights(1.0, 1.0, 1.0, 1.0)
            weights[f"{query}|{kb.name}"] = w
            sparse_lists.append((_tag(sparse, kb.name), w.sparse if mode == "hybrid" else 1.0))
        merged_dense.sort(key=lambda r: -r.score)
        if merged_dense:
            top = merged_dense[0].score
            best_dense = top if best_dense is None else max(best_dense, top)
        dense_lists.append(merged_dense[:recall])
    if fusion == "convex" and mode == "hybrid":
        fused = convex(dense_lists, sparse_lists, limit=recall)
    else:
        fused = rrf(dense_lists, sparse_lists, k=rrf_k, limit=recall)
    hits = []
    seen: set[tuple[str, str]] = set()
    texts: set[str] = set()
    # a file whose write is under way (or was killed mid-way: the next ingest undoes or finishes
    # it) shows only the version the manifest holds, not half of the new one or the old one's rest
    unsettled = {kb.name: kb.manifest.unsettled() for kb in kbs}
    for f in fused:
        hit = hit_from_payload(str(f.payload.get("_kb", "")), f.id, f.payload, f.score,
                               dense_score=f.dense_score, sparse_score=f.sparse_score)
        moving = unsettled.get(hit.kb, {})
        if hit.chunk.path in moving and hit.chunk.doc_id != moving[hit.chunk.path]:
            continue
        key = (hit.kb, hit.chunk.chunk_id)
        # a FAQ point (enrich.py) stands for its source chunk: one hit for both; and the same
        # text twice (a file copied into two folders, a KB searched with its copy) fills one
        # place of the prompt, not two
        text = " ".join(hit.chunk.text.split())
        if key not in seen and text not in texts:
            seen.add(key)
            texts.add(text)
            hits.append(hit)
    return RetrievalResult(hits=tuple(hits), weights=weights, best_dense=best_dense)


def _tag(records: Sequence[ScoredRecord], kb: str) -> list[ScoredRecord]:
    """Make ids unique across KBs and remember each record's KB."""
    return [ScoredRecord(f"{kb}\x00{r.id}", r.score, {**r.payload, "_kb": kb}) for r in records]
