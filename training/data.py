"""Training examples for the cross-encoder's two heads, built from ``../shared/train`` only.

Never reads ``../shared/eval`` (the sets we measure on) nor SciFact. Every example is a
(question, claim, text) triple with a 0/1 label:

* ``verify``: does ``text`` (the cited passage's evidence: the sentence the claim stands on, led
  by the passage's title) state ``claim`` as the answer to ``question``? Claims are built by
  :func:`desktop_kb.eval.faithfulness.build_claims` from the SQuAD-format training files (the same
  construction the faithfulness set uses, on other data): verbatim, paraphrased and short right
  answers are positives; another question's answer from the same paragraph (``in_passage_swap``,
  ``short_wrong``, ``swapped_roles``), a changed figure, a negation, another article's answer, the
  answer sentence cited to another passage and the sentence nearest the question away from the
  answer (``off_passage``) are negatives. Unanswerable (adversarial) questions over their own
  paragraph's nearest sentence are negatives too. WikiQA (English) adds question → sentence
  pairs, label 1 where the sentence answers it.
* ``rerank``: is ``text`` (a paragraph) the one that answers ``question``? Its own paragraph is
  the positive; another paragraph of the same article (hard) and one of another article (easy)
  are the negatives. SQuAD-format files (the unlabelled English one too: a question's own
  paragraph is known even where its answer is not) and WikiQA.

Typed distractors (``training/distractors.py``, data version 3) add, for every answerable question,
a wrong answer of the answer's own kind from its own passage (``typed_short``, ``typed_swap``,
``typed_roles``): the bare-answer negatives ``build_claims`` gives only where a paragraph has
several questions.

English bare answers the aligned pair's two matches cannot pin (a common noun, a phrase, a
clause) come, from data version 6, from the app's own judge reading the aligned English sentence
(``training/aligned_spans.py``), where its file is there.

The split is by article (a hash of its title), so no paragraph of a held-out article is trained on:
``heldout`` is what thresholds are calibrated on. An English article of the translated pair
(the aligned claims, the unlabelled English rerank pairs) goes where its Chinese translation goes
(data version 3; version 2 split them apart, so an article's translation could be trained on).
"""

from __future__ import annotations

import csv
import functools
import gzip
import hashlib
import json
import os
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from desktop_kb.eval.datasets import Document, QADataset, QAItem
from desktop_kb.eval.faithfulness import ACCEPT, build_claims
from desktop_kb.text.tokenize import cjk_ratio, tokenize
from desktop_kb.verify.support import sentence_spans
from training.aligned_spans import read as read_aligned
from training.common import ROOT, evidence_text, shared_train
from training.wikiqa_spans import key as span_key
from training.wikiqa_spans import question_text
from training.wikiqa_spans import read as read_spans

__all__ = ["SQUAD_FILES", "Example", "article_key", "build", "cache_file", "lang_of", "read_examples", "shared_train",
           "split_of", "write_examples"]

# what each SQuAD-format file may give: claims (it has answers) and/or rerank pairs
SQUAD_FILES = {
    "chinesesquad_zh.json": ("verify", "rerank"),
    "drcd_test.json": ("verify", "rerank"),
    "cmrc2018_trial.json": ("verify", "rerank"),
    "squad2_testhalf_en_unlabelled.json": ("rerank",),
}
# English claims: the unlabelled English half aligned with its labelled Chinese translation
# (training/align_en.py); needs the installed ONNX embedder, so it is a name of its own
ALIGNED_EN = "squad_en_aligned"
UNANSWERABLE_EN_MAX = 700  # the aligned English half is mostly adversarial unanswerable questions
DATA_VERSION = 6  # 2: the aligned English claims; 3: typed distractors, English split by its Chinese article;
# 4: English spans found by meaning too (align_en._phrase_span); 5: WikiQA's answering sentences' spans
# (training/wikiqa_spans.py) as bare right answers, where that file is there; 6: aligned English
# questions neither match finds, with the judge's span (training/aligned_spans.py), where that file is there
WIKIQA_SPANS = ROOT / "training" / ".cache" / "wikiqa-spans.jsonl"
ALIGNED_SPANS = ROOT / "training" / ".cache" / "aligned-spans.jsonl"
TRANSLATED_EN = (ALIGNED_EN, "squad2_testhalf_en_unlabelled")  # English of chinesesquad_zh's articles
HELDOUT_SHARE = 10  # one article in ten is held out
_MARK = re.compile(r"\s*\[\d+\]")


@dataclass(frozen=True)
class Example:
    task: str  # "verify" | "rerank"
    question: str
    claim: str  # the answer or claim judged ("" for rerank)
    text: str  # the evidence (verify) or the passage (rerank)
    label: int
    kind: str  # how it was built (a faithfulness kind, "wikiqa", "rerank_hard", …)
    lang: str  # "en" | "zh"
    source: str  # the file it came from


def split_of(title: str) -> str:
    h = int(hashlib.sha1(title.encode("utf-8")).hexdigest()[:8], 16)
    return "heldout" if h % HELDOUT_SHARE == 0 else "train"


def article_key(ds_name: str, title: str) -> str:
    """What the split hashes: ``name:title``; an English article of the translated pair is keyed
    by its Chinese translation's, so the two always fall on the same side."""
    from training.align_en import TITLES

    if ds_name in TRANSLATED_EN:
        zh = {en: zh for zh, en in TITLES.items()}.get(title.replace(" ", "_"))
        if zh is not None:
            return f"chinesesquad_zh:{zh}"
    return f"{ds_name}:{title}"


def lang_of(text: str) -> str:
    """An example's language, from its question: "zh" where over 30% of its letters are CJK."""
    return "zh" if cjk_ratio(text) > 0.3 else "en"


def load_squad(path: Path) -> QADataset:
    """A SQuAD-format file as the eval code's QA dataset (one document per paragraph)."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    corpus: dict[str, Document] = {}
    items: list[QAItem] = []
    for a, article in enumerate(raw["data"]):
        title = str(article.get("title") or f"article-{a}")
        for p, para in enumerate(article["paragraphs"]):
            doc_id = f"{path.stem}-{a}-{p}"
            corpus[doc_id] = Document(doc_id, title, para["context"])
            for k, qa in enumerate(para["qas"]):
                answers = tuple(dict.fromkeys(x["text"] for x in qa.get("answers") or [] if x.get("text")))
                answerable = bool(answers) and not qa.get("is_impossible", False)
                extra = {"plausible_answers": [x["text"] for x in qa.get("plausible_answers") or []]}
                items.append(QAItem(str(qa.get("id", f"{doc_id}-{k}")), qa["question"], answers if answerable else (),
                                    doc_id, answerable, extra))
    digest = hashlib.sha1(path.read_bytes()).hexdigest()
    return QADataset(path.parent, path.stem, tuple(items), corpus, digest)


def _overlap(a: str, b: str) -> float:
    if cjk_ratio(a) > 0.3 or cjk_ratio(b) > 0.3:
        ga = {a[i:i + 2] for i in range(len(a) - 1)}
        gb = {b[i:i + 2] for i in range(len(b) - 1)}
    else:
        ga, gb = set(tokenize(a)), set(tokenize(b))
    return len(ga & gb) / max(1, len(ga))


def evidence_for(claim: str, title: str, passage: str, rng: random.Random | None = None) -> str:
    """What the verifier reads for ``claim`` cited to ``passage``: the sentence sharing most with
    the claim (with a neighbour now and then, as evidence windows do), led by the title."""
    spans = sentence_spans(passage) or [(0, len(passage))]
    best = max(range(len(spans)), key=lambda k: _overlap(claim, passage[spans[k][0]:spans[k][1]]))
    lo = hi = best
    if rng is not None and rng.random() < 0.35:
        lo, hi = max(0, best - (rng.random() < 0.5)), min(len(spans) - 1, best + 1)
    return evidence_text(title, passage[spans[lo][0]:spans[hi][1]])


@functools.lru_cache(maxsize=1)
def _aligned_english() -> QADataset:
    """Aligned once a process (minutes): both splits are cut from the same dataset."""
    import sys

    from desktop_kb.models.e5_onnx import e5_onnx_dir
    from desktop_kb.settings import load_settings
    from training.align_en import aligned_english, onnx_embedders

    queries, passages = onnx_embedders(e5_onnx_dir(load_settings()))
    spans = aligned_spans()

    def read(q: dict, sentence: str, _zh: str) -> str:  # a span read in another sentence is no span here
        span = spans.get(q["id"], "")
        return span if span and span in sentence else ""

    return aligned_english(shared_train(), queries, passages, log=lambda m: print(m, file=sys.stderr),
                           read=read if spans else None)


def _claims(ds: QADataset, split: str, rng: random.Random, unanswerable_max: int = 0) -> Iterator[Example]:
    keep = {d for d, doc in ds.corpus.items() if split_of(article_key(ds.name, doc.title)) == split}
    for c in build_claims(ds, seed=rng.randrange(1 << 30)):
        if c.context_ids[0] not in keep:
            continue
        n = int(re.search(r"\[(\d+)\]", c.answer).group(1))  # type: ignore[union-attr]
        cited = c.passages[n - 1]
        claim = _MARK.sub("", c.answer).strip()
        text = evidence_for(claim, cited.chunk.heading_path[0] if cited.chunk.heading_path else "",
                            cited.chunk.text, rng)
        yield Example("verify", c.question, claim, text, int(c.kind in ACCEPT), c.kind, lang_of(c.question), ds.name)
    unanswerable = [i for i in ds.items if not i.answerable]
    if unanswerable_max and len(unanswerable) > unanswerable_max:
        unanswerable = rng.sample(unanswerable, unanswerable_max)
    for item in unanswerable:  # adversarial unanswerable questions: their paragraph's nearest sentence
        doc = ds.corpus.get(item.context_id)
        if doc is None or item.context_id not in keep:
            continue
        spans = sentence_spans(doc.text)
        if not spans:
            continue
        s, e = max(spans, key=lambda sp: _overlap(item.question, doc.text[sp[0]:sp[1]]))
        if e - s >= 8:
            yield Example("verify", item.question, doc.text[s:e], evidence_text(doc.title, doc.text[s:e]), 0,
                          "unanswerable", lang_of(item.question), ds.name)


def _typed(ds: QADataset, split: str, rng: random.Random) -> Iterator[Example]:
    """A typed distractor per answerable question (``training/distractors.py``), as negatives."""
    from training.distractors import typed_claims

    for item in ds.items:
        doc = ds.corpus.get(item.context_id)
        if doc is None or not item.answerable or split_of(article_key(ds.name, doc.title)) != split:
            continue
        for kind, claim in typed_claims(item, doc.text, rng):
            yield Example("verify", item.question, claim, evidence_for(claim, doc.title, doc.text, rng), 0, kind,
                          lang_of(item.question), ds.name)


def _rerank(ds: QADataset, split: str, rng: random.Random, per_question: int = 1) -> Iterator[Example]:
    by_title: dict[str, list[str]] = {}
    for d, doc in ds.corpus.items():
        by_title.setdefault(doc.title, []).append(d)
    ids = sorted(ds.corpus)
    for item in ds.items:
        doc = ds.corpus.get(item.context_id)
        if doc is None or split_of(article_key(ds.name, doc.title)) != split:
            continue
        lang = lang_of(item.question)
        yield Example("rerank", item.question, "", evidence_text(doc.title, doc.text), 1, "rerank_own", lang, ds.name)
        same = [d for d in by_title[doc.title] if d != doc.id]
        for _ in range(per_question):
            if same:
                other = ds.corpus[rng.choice(same)]
                yield Example("rerank", item.question, "", evidence_text(other.title, other.text), 0, "rerank_hard",
                              lang, ds.name)
            far = ds.corpus[rng.choice(ids)]
            if far.title != doc.title:
                yield Example("rerank", item.question, "", evidence_text(far.title, far.text), 0, "rerank_easy",
                              lang, ds.name)


def wikiqa_spans() -> dict[str, str]:
    """training/wikiqa_spans.py's kept spans (its ``key`` → span, "" where none was kept); empty
    where the file was not made."""
    return read_spans(WIKIQA_SPANS) if WIKIQA_SPANS.is_file() else {}


def aligned_spans() -> dict[str, str]:
    """training/aligned_spans.py's kept spans (English question id → span, "" where none was
    kept); empty where the file was not made."""
    return read_aligned(ALIGNED_SPANS) if ALIGNED_SPANS.is_file() else {}


def _wikiqa(path: Path, split: str, rng: random.Random, negatives: int = 2,
            spans: dict[str, str] | None = None) -> Iterator[Example]:
    """Each question's answering sentences, and at most ``negatives`` of its other sentences; an
    answering sentence with a kept span (``spans``) also gives that span as a bare right answer
    (``short_right``, the evidence its sentence)."""
    rows: dict[str, list[dict[str, str]]] = {}
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for r in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            rows.setdefault(r["QuestionID"], []).append(r)
    for group in rows.values():
        title = group[0]["DocumentTitle"]
        if split_of(f"wikiqa:{title}") != split:
            continue
        question = question_text(group[0]["Question"])
        wrong = [r for r in group if r["Label"] != "1"]
        for r in [r for r in group if r["Label"] == "1"] + rng.sample(wrong, min(negatives, len(wrong))):
            sentence = r["Sentence"].strip()
            yield Example("verify", question, sentence, evidence_text(title, sentence), int(r["Label"]), "wikiqa",
                          "en", path.name)
            span = (spans or {}).get(span_key({"qid": r["QuestionID"], "sentence": sentence}), "") if r["Label"] == "1" else ""
            if span:
                yield Example("verify", question, span, evidence_text(title, sentence), 1, "short_right", "en",
                              path.name)


def read_examples(path: Path) -> list[Example]:
    """A file of :func:`write_examples` (one example a line)."""
    return [Example(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_examples(path: Path, rows: Sequence[Example]) -> None:
    """One JSON example a line, written whole then renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(e.__dict__, ensure_ascii=False) + "\n" for e in rows), encoding="utf-8")
    os.replace(tmp, path)


def cache_file(cache: Path, split: str, seed: int = 13, files: Sequence[str] | None = None) -> Path:
    """Where :func:`build` keeps ``split``'s examples in ``cache``: named by everything they are
    built from (the data version, the files, the seed, and which span files' spans are kept)."""
    kept = sorted(f"{k}|{v}" for k, v in wikiqa_spans().items() if v)
    kept += sorted(f"aligned:{k}|{v}" for k, v in aligned_spans().items() if v)
    tag = hashlib.sha1(json.dumps([split, seed, sorted(files or []), DATA_VERSION, kept]).encode()).hexdigest()[:10]
    return cache / f"examples-{split}-{tag}.jsonl"


def build(split: str, seed: int = 13, *, files: Sequence[str] | None = None, cache: Path | None = None) -> list[Example]:
    """Every example of ``split`` ("train" | "heldout"), shuffled deterministically; read from
    (or written to) ``cache`` (a folder) when given — building takes minutes."""
    path = None
    spans = wikiqa_spans()
    if cache is not None:
        path = cache_file(cache, split, seed, files)
        if path.is_file():
            return read_examples(path)
    rng = random.Random(seed)
    root = shared_train()
    out: list[Example] = []
    for name, tasks in SQUAD_FILES.items():
        if files is not None and name not in files:
            continue
        ds = load_squad(root / name)
        if "verify" in tasks:
            out.extend(_claims(ds, split, rng))
            out.extend(_typed(ds, split, rng))
        if "rerank" in tasks:
            out.extend(_rerank(ds, split, rng))
    if files is None or ALIGNED_EN in files:
        out.extend(_claims(_aligned_english(), split, rng, UNANSWERABLE_EN_MAX))
        out.extend(_typed(_aligned_english(), split, rng))
    for name in ("wikiqa_train.tsv.gz", "wikiqa_dev.tsv.gz", "wikiqa_test.tsv.gz"):
        if files is None or name in files:
            out.extend(_wikiqa(root / name, split, rng, spans=spans))
    rng.shuffle(out)
    if path is not None:
        write_examples(path, out)
    return out
