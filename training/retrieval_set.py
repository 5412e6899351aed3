"""A retrieval set (BEIR folder) built from ``../shared/train``: for choosing rerank settings and
mining a reranker's hard negatives on training data, never on the eval sets.

The corpus is every paragraph of one language's SQuAD-format training files (both splits: a
held-out question must find its paragraph among all of them, as a user's question among all their
files); the queries are the questions of one split's articles (``heldout``: calibration;
``train``: mining), each relevant to its own paragraph only. One language a set: the English file
is a translation of ``chinesesquad_zh``'s articles, so a mixed corpus would hold each English
answer twice. ``DRCD`` is traditional Chinese as shipped. Usage::

    PYTHONPATH=. python -m training.retrieval_set OUT_DIR --lang zh --split heldout [--limit 300]

writes ``OUT_DIR/corpus.jsonl``, ``queries.jsonl``, ``qrels.tsv`` and ``META.json`` (what
``desktop-kb eval retrieval --dataset OUT_DIR`` reads).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from desktop_kb.eval.datasets import QADataset, sample_ids
from training.data import SQUAD_FILES, article_key, load_squad, shared_train, split_of

__all__ = ["FILES", "build_set", "main", "write_set"]


EN_FILE = "squad2_testhalf_en_unlabelled.json"
FILES = {"en": (EN_FILE,), "zh": tuple(name for name in SQUAD_FILES if name != EN_FILE)}
LANGS = (*FILES, "en-zh")  # en-zh: English questions over the Chinese corpus, each relevant to its
# paragraph's Chinese translation (chinesesquad_zh holds the same articles, paragraph for paragraph)


def _cross(train_dir: Path, split: str, zh: QADataset) -> tuple[dict[str, str], dict[str, str]]:
    """English questions (query id → text) and the paragraph of ``zh`` (chinesesquad_zh, loaded by
    the caller) each belongs to."""
    from training.align_en import TITLES

    zh_article = {doc.title: doc_id.rsplit("-", 2)[-2] for doc_id, doc in zh.corpus.items()}
    en = load_squad(train_dir / EN_FILE)
    to_zh = {e: z for z, e in TITLES.items()}
    queries: dict[str, str] = {}
    rel: dict[str, str] = {}
    for item in en.items:
        doc = en.corpus.get(item.context_id)
        z = to_zh.get(doc.title.replace(" ", "_")) if doc is not None else None
        if doc is None or z not in zh_article or split_of(article_key(en.name, doc.title)) != split:
            continue
        para = item.context_id.rsplit("-", 1)[-1]
        target = f"chinesesquad_zh-{zh_article[z]}-{para}"
        if target in zh.corpus:
            queries[f"{en.name}:{item.id}"], rel[f"{en.name}:{item.id}"] = item.question, target
    return queries, rel


def build_set(train_dir: Path, lang: str, split: str, limit: int | None = None, files: tuple[str, ...] = ()
              ) -> tuple[dict[str, dict[str, str]], dict[str, str], dict[str, str]]:
    """(corpus id → {title, text}, query id → text, query id → its paragraph id) of ``split``
    (``files``: only these of the language's files, a smoke run)."""
    corpus: dict[str, dict[str, str]] = {}
    queries: dict[str, str] = {}
    rel: dict[str, str] = {}
    loaded: dict[str, QADataset] = {}
    for name in files or FILES["zh" if lang == "en-zh" else lang]:
        ds = loaded[name] = load_squad(train_dir / name)
        for doc_id, doc in ds.corpus.items():
            corpus[doc_id] = {"title": doc.title, "text": doc.text}
        if lang == "en-zh":  # the questions are English ones, paired by _cross
            continue
        for item in ds.items:
            doc = ds.corpus.get(item.context_id)
            if doc is None or split_of(article_key(ds.name, doc.title)) != split:
                continue
            qid = f"{ds.name}:{item.id}"
            if qid not in queries:
                queries[qid], rel[qid] = item.question, doc.id
    if lang == "en-zh":
        zh = loaded.get("chinesesquad_zh.json") or load_squad(train_dir / "chinesesquad_zh.json")
        queries, rel = _cross(train_dir, split, zh)
    chosen = sample_ids(sorted(queries), limit)
    return corpus, {q: queries[q] for q in chosen}, {q: rel[q] for q in chosen}


def write_set(out: Path, corpus: dict[str, dict[str, str]], queries: dict[str, str], rel: dict[str, str],
              lang: str, split: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for doc_id in sorted(corpus):
            fh.write(json.dumps({"_id": doc_id, **corpus[doc_id]}, ensure_ascii=False) + "\n")
    with (out / "queries.jsonl").open("w", encoding="utf-8") as fh:
        for qid, text in queries.items():
            fh.write(json.dumps({"_id": qid, "text": text}, ensure_ascii=False) + "\n")
    with (out / "qrels.tsv").open("w", encoding="utf-8") as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        fh.writelines(f"{qid}\t{doc}\t1\n" for qid, doc in rel.items())
    meta = {"name": f"shared/train as paragraph retrieval ({lang}, {split} questions)", "lang": lang,
            "split": split,
            "n_docs": len(corpus), "n_queries": len(queries), "n_qrels": len(rel),
            "notes": "built by training/retrieval_set.py from ../shared/train; training data only"}
    (out / "META.json").write_text(json.dumps(meta, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--lang", choices=LANGS, required=True)
    ap.add_argument("--split", choices=("heldout", "train"), default="heldout")
    ap.add_argument("--limit", type=int, default=None, help="a hash sample of this many questions")
    ap.add_argument("--train-dir", type=Path, default=None)
    args = ap.parse_args(argv)
    corpus, queries, rel = build_set(args.train_dir or shared_train(), args.lang, args.split, args.limit)
    write_set(args.out, corpus, queries, rel, args.lang, args.split)
    print(f"{len(corpus)} paragraphs, {len(queries)} {args.split} questions → {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
