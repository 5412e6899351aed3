"""Fusion variants on the same retrieved legs: does another score normalisation, leg weight or
per-document aggregation beat the product's convex fusion (query/fuse.py)?

    .venv/bin/python benchmarks/fusion_variants.py --data-dir D --dataset ../shared/eval/retrieval/scifact --json

For every judged query of a BEIR set (its knowledge base built or reused as ``eval retrieval``
does), the dense and BM25 legs are retrieved once (recall 100, the product's adaptive sparse
weight recorded), then fused offline by each variant; documents are ranked by their best chunk,
as ``eval retrieval`` ranks them, and scored against the set's qrels (nDCG@10). RRF and the
convex combination at each α run the product's own code (query/fuse.py), so the default variant
must reproduce ``eval retrieval``; only the other normalisations and the per-document sums are
written here.
``--prf`` adds dense pseudo-relevance feedback (Rocchio): the query vector plus β times the mean
vector of the first k chunks (of the dense leg, or of the fused ranking), normalised, searched again
exactly over all the KB's vectors, alone and fused with the same BM25 leg.
Measured in session 10 (docs/history/benchmarks-log.md): on SciFact no variant reaches 0.72; the product's
min-max at α = 0.5 is within 0.15 points of the best; session 11: PRF neither. Progress on
stderr; ``--json`` prints one JSON document on stdout.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from desktop_kb.eval.metrics import docs_by_max_score, evaluate  # noqa: E402
from desktop_kb.protocols import ScoredRecord  # noqa: E402
from desktop_kb.query import fuse  # noqa: E402
from desktop_kb.query.fuse import FusedRecord  # noqa: E402

Leg = list[tuple[str, str, float]]  # (chunk id, document id, score), best first
Query = dict[str, Any]  # {"w": sparse weight, "qv": query vector, "dense": Leg, "sparse": Leg}
Norm = Callable[[Sequence[float]], list[float]]


def _records(q: Query, leg: str) -> list[ScoredRecord]:
    return [ScoredRecord(cid, score, {"doc": d}) for cid, d, score in q[leg]]


def _fused(q: Query, fusion: Callable[..., list[FusedRecord]], **options: Any) -> list[FusedRecord]:
    """The product's fusion code (query/fuse.py) on the dumped legs, one query, one KB."""
    return fusion([_records(q, "dense")], [(_records(q, "sparse"), q["w"])], **options)


def product(q: Query, fusion: Callable[..., list[FusedRecord]] = fuse.convex, **options: Any) -> list[str]:
    return docs_by_max_score((f.payload["doc"], f.score) for f in _fused(q, fusion, **options))


def zscore(xs: Sequence[float]) -> list[float]:
    mean, sd = statistics.fmean(xs), statistics.pstdev(xs) or 1.0
    return [(x - mean) / sd for x in xs]


def dbsf(xs: Sequence[float]) -> list[float]:
    """Distribution-based: mean ± 3 standard deviations mapped to [0, 1] (Qdrant's DBSF)."""
    mean, sd = statistics.fmean(xs), statistics.pstdev(xs) or 1.0
    lo, hi = mean - 3 * sd, mean + 3 * sd
    return [min(1.0, max(0.0, (x - lo) / (hi - lo))) for x in xs]


def by_top(xs: Sequence[float]) -> list[float]:
    hi = max(xs)
    return [x / hi if hi > 0 else 0.0 for x in xs]


def normalised(q: Query, norm: Norm, alpha: float = 0.5) -> list[str]:
    """The product's convex combination with another normalisation of each leg than min-max."""
    scores: dict[str, float] = {}
    doc: dict[str, str] = {}
    for leg, weight in (("dense", alpha), ("sparse", (1 - alpha) * q["w"])):
        recs = q[leg]
        if not recs:
            continue
        for (cid, d, _), n in zip(recs, norm([r[2] for r in recs]), strict=True):
            doc[cid] = d
            scores[cid] = scores.get(cid, 0.0) + weight * n
    return docs_by_max_score((doc[c], scores[c]) for c in sorted(scores, key=lambda c: -scores[c]))


def doc_sum(q: Query, decay: float) -> list[str]:
    """The product's convex fusion, a document scoring its best chunk plus ``decay``-discounted
    further chunks (instead of its best chunk alone)."""
    per: dict[str, list[float]] = {}
    for f in _fused(q, fuse.convex):
        per.setdefault(f.payload["doc"], []).append(f.score)
    agg = {d: sum(v * decay**i for i, v in enumerate(sorted(xs, reverse=True))) for d, xs in per.items()}
    return sorted(agg, key=lambda d: -agg[d])


VARIANTS: dict[str, Callable[[Query], list[str]]] = {
    "dense": lambda q: docs_by_max_score((d, s) for _, d, s in q["dense"]),
    "sparse": lambda q: docs_by_max_score((d, s) for _, d, s in q["sparse"]),
    "rrf, adaptive": partial(product, fusion=fuse.rrf),
    "convex min-max, alpha 0.5 (product)": product,
    **{f"convex min-max, alpha {a}": partial(product, alpha=a) for a in (0.3, 0.4, 0.6, 0.7)},
    "convex z-score": partial(normalised, norm=zscore),
    "convex dbsf": partial(normalised, norm=dbsf),
    "convex score / top": partial(normalised, norm=by_top),
    "convex, documents sum chunks (decay 0.5)": partial(doc_sum, decay=0.5),
    "convex, documents sum chunks (decay 0.25)": partial(doc_sum, decay=0.25),
}


class Vectors:
    """All of a KB's chunk vectors, for exact dense search with a changed query vector."""

    def __init__(self, ids: list[str], docs: list[str], matrix: Any) -> None:
        self.ids, self.docs, self.matrix = ids, docs, matrix
        self.row = {c: i for i, c in enumerate(ids)}

    def search(self, vector: Any, n: int = 100) -> Leg:
        import numpy as np

        scores = self.matrix @ vector
        n = min(n, len(scores))
        top = np.argpartition(-scores, n - 1)[:n]
        return [(self.ids[i], self.docs[i], float(scores[i])) for i in top[np.argsort(-scores[top])]]


def prf(q: Query, vectors: Vectors, k: int, beta: float, source: str) -> Query:
    """The query with its dense leg searched again by the Rocchio vector q + β·mean(first k)."""
    import numpy as np

    first = ([cid for cid, _, _ in q["dense"][:k]] if source == "dense"
             else [f.id for f in _fused(q, fuse.convex)[:k]])
    v = q["qv"] + beta * vectors.matrix[[vectors.row[c] for c in first]].mean(axis=0)
    return {**q, "dense": vectors.search(v / np.linalg.norm(v))}


def prf_variants(vectors: Vectors) -> dict[str, Callable[[Query], list[str]]]:
    out: dict[str, Callable[[Query], list[str]]] = {}
    for source, k, beta in (("dense", 3, 0.3), ("fused", 3, 0.3), ("fused", 3, 0.6), ("fused", 5, 0.3)):
        memo: dict[int, Query] = {}

        def again(q: Query, k: int = k, beta: float = beta, source: str = source,
                  memo: dict[int, Query] = memo) -> Query:
            if id(q) not in memo:
                memo[id(q)] = prf(q, vectors, k, beta, source)
            return memo[id(q)]

        name = f"PRF from the {source} top {k}, beta {beta}"
        out[f"dense, {name}"] = lambda q, again=again: VARIANTS["dense"](again(q))
        out[f"convex, {name}"] = lambda q, again=again: product(again(q))
    return out


def dump_legs(data_dir: Path | None, dataset: Path, limit: int | None,
              with_vectors: bool = False) -> tuple[dict[str, Query], dict[str, Any], Vectors | None]:
    import numpy as np

    from desktop_kb.eval.corpus import LogProgress, prepare_kb
    from desktop_kb.eval.datasets import load_beir, sample_ids
    from desktop_kb.eval.retrieval import kb_views
    from desktop_kb.library.kb import Library
    from desktop_kb.query.fuse import adaptive_weights, term_coverage
    from desktop_kb.settings import load_settings

    ds = load_beir(dataset)
    judged = ds.judged_queries()
    queries: dict[str, Query] = {}
    with Library.open(load_settings(data_dir)) as lib:
        prep = prepare_kb(lib, ds.corpus, ds.corpus_sha1, progress=LogProgress(f"ingest {ds.name}"))
        kb = kb_views(lib, [prep.name])[0]
        n_docs, _, cjk, letters = kb.manifest.corpus_stats()

        def doc(payload: dict[str, Any]) -> str:
            return prep.doc_id(str(payload.get("path", "")))

        vectors = None
        if with_vectors:
            points = list(kb.store.points(kb.name))
            vectors = Vectors([p.id for p in points], [doc(p.payload) for p in points],
                              np.stack([np.asarray(p.dense, dtype=np.float32) for p in points]))
        qids = sample_ids(list(judged), limit)
        for i, qid in enumerate(qids, start=1):
            text = judged[qid]
            svec = kb.sparse.encode_query(text)
            qv = np.asarray(lib.embedder.embed_query(text), dtype=np.float32)
            dense, sparse = kb.store.search_both(kb.name, qv, svec, None, 100)
            coverage = term_coverage(svec.indices, kb.manifest.document_frequencies(svec.indices), n_docs)
            weight = adaptive_weights(text, cjk / letters if letters else 0.0, coverage).sparse
            queries[qid] = {"w": weight, "qv": qv, **{name: [(r.id, doc(r.payload), r.score) for r in recs]
                                                      for name, recs in (("dense", dense), ("sparse", sparse))}}
            if i % 50 == 0 or i == len(qids):
                print(f"legs: {i}/{len(qids)}", file=sys.stderr, flush=True)
    return queries, {q: dict(ds.qrels[q]) for q in queries}, vectors


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", type=Path, required=True, help="BEIR folder")
    ap.add_argument("--data-dir", type=Path, help="data folder (eval knowledge bases are cached)")
    ap.add_argument("--limit-queries", type=int, help="a fixed sample of N queries, as eval retrieval draws it")
    ap.add_argument("--prf", action="store_true", help="also dense pseudo-relevance feedback variants")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    queries, qrels, vectors = dump_legs(args.data_dir, args.dataset, args.limit_queries, args.prf)
    variants = {**VARIANTS, **(prf_variants(vectors) if vectors is not None else {})}
    result = {"dataset": args.dataset.name, "queries": len(queries),
              "ndcg@10": {name: round(evaluate({q: f(legs) for q, legs in queries.items()}, qrels)["ndcg@10"], 4)
                          for name, f in variants.items()}}
    if args.json:
        print(json.dumps(result))
    else:
        for name, score in result["ndcg@10"].items():
            print(f"{name:45} {score:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
