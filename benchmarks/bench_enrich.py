"""Enrichment cost with the real local LLM: seconds per document and per 1,000 tokens read.

    .venv/bin/python benchmarks/bench_enrich.py --docs 4 --json

Documents are made from the shared QA sets (English SQuAD and Chinese CMRC contexts, a few
paragraphs of one article per document), indexed with the real embedder into a fresh data folder,
then enriched once. Also reported: how many FAQ pairs the model proposed that passed the citation
checks. Progress goes to stderr; ``--json`` prints one JSON document on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
EVAL = Path(os.environ.get("DKB_EVAL_DATA", ROOT.parent / "shared" / "eval"))


def documents(dataset: Path, n_docs: int, per_doc: int) -> dict[str, str]:
    """``n_docs`` documents of ``per_doc`` paragraphs of one article each."""
    by_title: dict[str, list[str]] = defaultdict(list)
    with (dataset / "contexts.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            by_title[row.get("title") or row["_id"]].append(row["text"])
    out = {}
    for title, paras in sorted(by_title.items(), key=lambda kv: -len(kv[1])):  # the longest articles
        out[title] = f"# {title}\n\n" + "\n\n".join(paras[:per_doc]) + "\n"
        if len(out) >= n_docs:
            break
    return out


def run(lang: str, dataset: Path, n_docs: int, per_doc: int, work: Path) -> dict[str, Any]:
    from desktop_kb.library.kb import Library
    from desktop_kb.settings import load_settings

    folder = work / f"docs-{lang}"
    folder.mkdir(parents=True)
    for i, (title, text) in enumerate(documents(dataset, n_docs, per_doc).items()):
        stem = "".join(c for c in title if c.isalnum())[:40] or "doc"
        (folder / f"{i:02d}-{stem}.md").write_text(text, encoding="utf-8")
    settings = load_settings(work / f"data-{lang}")
    with Library.open(settings) as lib:
        lib.ingest("bench", [folder])
        if hasattr(lib.generator, "load"):
            lib.generator.load()  # the model load is not enrichment time
        t0 = time.perf_counter()
        report = lib.enrich("bench", progress=lambda d, t, e: sys.stderr.write(f"{lang}: {d}/{t}\n"))
        wall = time.perf_counter() - t0
        info = lib.enrichments("bench")
    per = list(report.per_doc.values())
    return {
        "documents": len(report.enriched), "failed": len(report.failed), "tokens_read": report.tokens,
        "seconds_total": round(wall, 1),
        "seconds_per_document": round(sum(per) / len(per), 1) if per else None,
        "seconds_per_1k_tokens": round(wall / (report.tokens / 1000), 1) if report.tokens else None,
        "faq_kept": sum(len(v["faq"]) for v in info.values()),
        "example": next(iter(info.values()), None),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=4, help="documents per language")
    ap.add_argument("--paragraphs", type=int, default=3, help="paragraphs per document")
    ap.add_argument("--langs", default="en,zh", help="which sets: en (SQuAD), zh (CMRC)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    out: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "load_avg_start": os.getloadavg()}}
    with tempfile.TemporaryDirectory(prefix="bench-enrich-") as tmp:
        for lang, name in (("en", "squad2_dev"), ("zh", "cmrc2018_dev")):
            if lang in args.langs.split(","):
                out[lang] = run(lang, EVAL / "qa" / name, args.docs, args.paragraphs, Path(tmp))
    out["machine"]["load_avg_end"] = os.getloadavg()
    if args.json:
        sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
    else:
        for lang in ("en", "zh"):
            if lang in out:
                print(lang, {k: v for k, v in out[lang].items() if k != "example"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
