"""Calibrate the no-reranker fallback threshold (settings.query.dense_threshold) on SQuAD 2.0.

Ingests the shared SQuAD 2.0 contexts, takes the embedder's top-1 cosine for every question and
prints, per candidate threshold, how many answerable questions would be sent to the fallback
(false alarms) and how many unanswerable ones would be caught. Usage:

    python benchmarks/calibrate_dense_threshold.py [--dataset ../shared/eval/qa/squad2_dev] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np

from desktop_kb.library.kb import Library
from desktop_kb.settings import Settings


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default=str(Path(__file__).resolve().parents[2] / "shared/eval/qa/squad2_dev"))
    ap.add_argument("--data-dir", default=str(Path(tempfile.gettempdir()) / "desktop-kb-calibration"))
    args = ap.parse_args()
    ds = Path(args.dataset)
    docs = Path(args.data_dir) / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for line in (ds / "contexts.jsonl").open(encoding="utf-8"):
        rec = json.loads(line)
        (docs / f"{rec['_id']}.md").write_text(f"# {rec.get('title', '')}\n\n{rec['text']}\n", encoding="utf-8")
    items = [json.loads(line) for line in (ds / "items.jsonl").open(encoding="utf-8")]
    with Library.open(Settings(data_dir=Path(args.data_dir) / "data"), reranker=None) as lib:
        lib.ingest("calib", [docs])
        view = lib.views(["calib"])[0]
        top1 = {True: [], False: []}
        for it in items:
            vec = lib.embedder.embed_query(it["question"])
            dense = view.store.search_dense("calib", vec, None, 1)
            top1[bool(it["answerable"])].append(dense[0].score if dense else 0.0)
    ans, una = np.array(top1[True]), np.array(top1[False])
    print(f"answerable top-1 cosine: mean {ans.mean():.3f}  p10 {np.percentile(ans, 10):.3f}  p50 {np.median(ans):.3f}")
    print(f"unanswerable top-1 cosine: mean {una.mean():.3f}  p50 {np.median(una):.3f}  p90 {np.percentile(una, 90):.3f}")
    print("threshold | answerable sent to fallback | unanswerable caught")
    for t in np.arange(0.78, 0.90, 0.01):
        print(f"   {t:.2f}   |   {np.mean(ans < t):6.1%}                    |   {np.mean(una < t):6.1%}")


if __name__ == "__main__":
    main()
