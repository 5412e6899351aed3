"""Rerank examples as the app meets them: the chunks its own retrieval ranks first for a training
question, over a knowledge base of every training paragraph (training/retrieval_set.py).

The reranker head was trained on whole paragraphs against another paragraph of the same article
and one of another article (training/data.py ``_rerank``); the app asks it to reorder the fused
top 20 *chunks*, whose wrong ones are what BM25 and the embedder found close. For each question
of a ``train``-split set: its own paragraph's best-ranked chunk (label 1) and the best-ranked
chunks of up to ``--negatives`` other paragraphs among the fused first ``--depth`` (label 0), as
the app's hybrid-convex retrieval ranks them. Writes one :class:`training.data.Example` a line::

    PYTHONPATH=. python -m training.rerank_mine /tmp/tr-zh-train --data-dir D --out mined-zh.jsonl [--limit 3000]

Only ``train``-split questions may be mined (``heldout`` is what rerank settings are chosen on).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from training.data import Example, lang_of, write_examples

__all__ = ["main", "mine"]


def mine(dataset: Path, data_dir: Path, *, limit: int | None, negatives: int, depth: int) -> list[Example]:
    from desktop_kb.eval.corpus import LogProgress, prepare_kb
    from desktop_kb.eval.datasets import load_beir, sample_ids
    from desktop_kb.eval.retrieval import kb_views, search_mode
    from desktop_kb.library.kb import Library
    from desktop_kb.settings import load_settings

    meta = json.loads((dataset / "META.json").read_text(encoding="utf-8"))
    if meta.get("split") != "train":
        raise SystemExit(f"{dataset} holds {meta.get('split')!r} questions; mine only the train split")
    ds = load_beir(dataset)
    judged = ds.judged_queries()
    qids = sample_ids(sorted(judged), limit)
    out: list[Example] = []
    with Library.open(load_settings(data_dir), reranker=None) as lib:
        prep = prepare_kb(lib, ds.corpus, ds.corpus_sha1, progress=LogProgress(f"ingest {ds.name}"))
        views = kb_views(lib, [prep.name])
        for i, qid in enumerate(qids):
            question, gold = judged[qid], set(ds.qrels[qid])
            hits, _ = search_mode(lib, views, question, "hybrid-convex", recall=max(depth, 30), reranker=None)
            seen: set[str] = set()
            pos, neg = None, []
            for rank, h in enumerate(hits):
                doc = prep.doc_id(h.chunk.path)
                if doc in gold and pos is None:
                    pos = h.chunk.text
                elif doc not in gold and doc not in seen and rank < depth and len(neg) < negatives:
                    neg.append(h.chunk.text)
                seen.add(doc)
            if pos is None:  # its paragraph was not retrieved at all: nothing the app would rerank
                continue
            lang, source = lang_of(question), qid.split(":")[0]
            rows = [Example("rerank", question, "", pos, 1, "rerank_mined_own", lang, source)]
            rows += [Example("rerank", question, "", t, 0, "rerank_mined", lang, source) for t in neg]
            out.extend(rows)
            if (i + 1) % 250 == 0:
                print(f"mined {i + 1}/{len(qids)}", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset", type=Path, help="a train-split set of training/retrieval_set.py")
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--limit", type=int, default=None, help="a hash sample of this many questions")
    ap.add_argument("--negatives", type=int, default=3)
    ap.add_argument("--depth", type=int, default=10, help="negatives from the fused first N chunks")
    args = ap.parse_args(argv)
    rows = mine(args.dataset, args.data_dir, limit=args.limit, negatives=args.negatives, depth=args.depth)
    write_examples(args.out, rows)
    print(f"{len(rows)} examples → {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
