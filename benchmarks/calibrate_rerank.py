"""Choose how the reranker's score is blended with the fused order (settings.query.rerank_weight,
rerank_candidates) on a retrieval set of training data (training/retrieval_set.py), never an eval set.

For each query: the app's fused hits (convex fusion, recall 100, as ``eval retrieval`` ranks them), the first
``--rerank-top`` of them scored by the cross-encoder (``--reranker-dir``: a built folder; default
the installed ``e5-cross-encoder``); cached in ``--cache`` so the sweep is instant the second time.
Then, for each number of candidates N and weight w, the first N are ordered by
``(1 - w) · minmax(fused) + w · rerank`` (the app's :func:`desktop_kb.query.rerank.blend`), the rest
kept in fused order, and nDCG@10 / MRR@10 computed on documents. Usage::

    python benchmarks/calibrate_rerank.py --dataset /tmp/tr-zh-heldout --data-dir D [--limit-queries 300] [--json]

Prints one JSON document with ``--json`` (progress on stderr). With ``--record-into MANIFEST
--weight W --candidates N`` the chosen blend and this set's held-out numbers go into a cross-encoder
manifest's ``calibration.rerank`` (run once per language set; the entries merge), where the
``e5_cross_encoder`` reranker reads it.

Cross-language: ``--rewrite auto`` searches each question as the app does a first question (with
its translation where its language is not the corpus's; the reranker reads the question), e.g. on
``training/retrieval_set.py --lang en-zh``::

    python benchmarks/calibrate_rerank.py --dataset /tmp/tr-enzh-heldout --data-dir D --rewrite auto
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from desktop_kb.eval.corpus import LogProgress, prepare_kb
from desktop_kb.eval.datasets import load_beir, sample_ids
from desktop_kb.eval.metrics import docs_by_max_score, mrr_at_k, ndcg_at_k
from desktop_kb.eval.retrieval import kb_views, search_mode
from desktop_kb.library.kb import Library
from desktop_kb.query.rerank import blend
from desktop_kb.settings import load_settings

WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)
SIZES = (3, 5, 8, 10, 20)


def collect(args: argparse.Namespace) -> dict[str, object]:
    from desktop_kb.backends.cross_encoder_e5 import E5CrossEncoder
    from desktop_kb.library.factory import own_cross_encoder_dir

    ds = load_beir(args.dataset)
    judged = ds.judged_queries()
    qids = sample_ids(list(judged), args.limit_queries)
    settings = load_settings(Path(args.data_dir))
    ce = E5CrossEncoder(args.reranker_dir or own_cross_encoder_dir(settings), threads=2)
    records = []
    with Library.open(settings, reranker=None) as lib:
        prep = prepare_kb(lib, ds.corpus, ds.corpus_sha1, progress=LogProgress(f"ingest {ds.name}"))
        views = kb_views(lib, [prep.name])
        searched: dict[str, list[str]] = {q: [judged[q]] for q in qids}
        if args.rewrite != "off":  # as the app searches a first question: with its translation where auto
            from desktop_kb.eval.rewrites import rewrite_queries

            searched = rewrite_queries(lib, views, {q: judged[q] for q in qids}, args.rewrite, prep.cache_dir,
                                       on_progress=_every(25, "rewritten"))
        tick = _every(25, "queries")
        for i, qid in enumerate(qids, 1):
            hits, _ = search_mode(lib, views, searched[qid], "hybrid-convex", recall=100, reranker=None)
            head = hits[:args.candidates]
            t0 = time.perf_counter()
            scores = ce.score(judged[qid], [h.chunk.text for h in head])  # as the app reads them: with the question
            ms = (time.perf_counter() - t0) * 1000
            records.append({"qid": qid, "docs": [prep.doc_id(h.chunk.path) for h in hits],
                            "fused": [float(h.score) for h in head], "rerank": [float(s) for s in scores],
                            "rerank_ms": round(ms, 1), "searched": searched[qid]})
            tick(i, len(qids))
    return {"dataset": str(args.dataset), "reranker": str(ce.folder), "qrels": {q: ds.qrels[q] for q in qids},
            "records": records}


def _every(k: int, label: str) -> Callable[[int, int], None]:
    def report(i: int, n: int) -> None:
        if i % k == 0 or i == n:
            print(f"{i}/{n} {label}", file=sys.stderr)
    return report


def ranking(rec: dict, n: int, w: float) -> list[str]:
    k = min(n, len(rec["fused"]))
    order = blend(rec["fused"][:k], rec["rerank"][:k], w)
    docs = [rec["docs"][i] for i in order] + rec["docs"][k:]
    return docs_by_max_score((d, -r) for r, d in enumerate(docs))


def sweep(data: dict) -> list[dict[str, float]]:
    rows = []
    for n in SIZES:
        for w in WEIGHTS:
            runs = [ranking(r, n, w) for r in data["records"]]
            rels = [data["qrels"][r["qid"]] for r in data["records"]]
            rows.append({"candidates": n, "weight": w,
                         "ndcg@10": round(float(np.mean([ndcg_at_k(x, q) for x, q in zip(runs, rels, strict=True)])), 4),
                         "mrr@10": round(float(np.mean([mrr_at_k(x, q) for x, q in zip(runs, rels, strict=True)])), 4)})
    return rows


def record(manifest: Path, data: dict, rows: list[dict[str, float]], weight: float, candidates: int,
           rule: str) -> dict:
    """``calibration.rerank`` of ``manifest`` set to this blend, with this set's held-out nDCG@10."""
    meta = json.loads((Path(data["dataset"]) / "META.json").read_text(encoding="utf-8"))
    cell = {(r["candidates"], r["weight"]): r["ndcg@10"] for r in rows}
    if (candidates, weight) not in cell:
        raise SystemExit(f"the sweep has no cell for {candidates} candidates at weight {weight}")
    m = json.loads(manifest.read_text(encoding="utf-8"))
    own = m.setdefault("calibration", {}).setdefault("rerank", {})
    if own.get("weight", weight) != weight or own.get("candidates", candidates) != candidates:
        own.pop("heldout", None)  # numbers of another blend
    own.update({"weight": weight, "candidates": candidates, "rule": rule})
    own.setdefault("heldout", {})[meta.get("lang", meta["name"])] = {
        "queries": len(data["records"]), "documents": meta.get("n_docs"), "fused_ndcg@10": cell[(SIZES[0], 0.0)],
        "blend_ndcg@10": cell[(candidates, weight)], "reranker_alone_ndcg@10": cell[(max(SIZES), 1.0)]}
    manifest.write_text(json.dumps(m, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return own


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--limit-queries", type=int, default=None)
    ap.add_argument("--rerank-top", dest="candidates", type=int, default=20, help="candidates scored and cached")
    ap.add_argument("--reranker-dir", default=None)
    ap.add_argument("--rewrite", choices=("off", "auto", "always"), default="off",
                    help="search each question as the app does with query.rewrite (auto: with its translation "
                         "where its language is not the corpus's); the reranker reads the question")
    ap.add_argument("--cache", type=Path, default=None, help="the scored candidates (read if present)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--record-into", type=Path, help="a cross-encoder manifest.json to record the blend in")
    ap.add_argument("--weight", type=float, help="with --record-into: the chosen weight")
    ap.add_argument("--candidates", dest="chosen", type=int, help="with --record-into: the chosen candidates")
    ap.add_argument("--rule", default="chosen from the sweep on held-out training retrieval (benchmarks/calibrate_rerank.py)",
                    help="with --record-into: how the blend was chosen, in words")
    args = ap.parse_args()
    if args.cache is not None and args.cache.exists():
        data = json.loads(args.cache.read_text(encoding="utf-8"))
    else:
        data = collect(args)
        if args.cache is not None:
            args.cache.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    rows = sweep(data)
    if args.record_into is not None:
        if args.weight is None or args.chosen is None:
            raise SystemExit("--record-into needs --weight and --candidates")
        print(json.dumps(record(args.record_into, data, rows, args.weight, args.chosen, args.rule),
                         ensure_ascii=False), file=sys.stderr)
    ms = [r["rerank_ms"] for r in data["records"]]
    out = {"dataset": data["dataset"], "reranker": data["reranker"], "queries": len(data["records"]),
           "rerank_ms_p50": round(float(np.median(ms)), 1), "rows": rows}
    if args.json:
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return 0
    print(f"{out['dataset']}: {out['queries']} queries, rerank of {args.candidates} p50 {out['rerank_ms_p50']} ms")
    print("N   " + "".join(f"  w={w:<4}" for w in WEIGHTS))
    for n in SIZES:
        cells = [r for r in rows if r["candidates"] == n]
        print(f"{n:<4}" + "".join(f"  {c['ndcg@10']:.4f}" for c in cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
