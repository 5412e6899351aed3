"""English SQuAD claims for training, recovered from the two halves of one source.

``squad2_testhalf_en_unlabelled.json`` holds English SQuAD 2.0 paragraphs and questions with no
answers; ``chinesesquad_zh.json`` is a machine translation of the same articles *with* answers and
``is_impossible``. Their ids differ, so the two are aligned by meaning, with multilingual-e5 (the
app's own ONNX embedder): article by a fixed title table, paragraph and question by mutual best
cosine above a floor, the answer's sentence likewise. The English answer span is found by string
where it can be: the Chinese answer's Latin letters or digits, in order, in the aligned English
sentence (names kept in Latin script, years, counts), a numeral, a capitalised name close in
meaning. Else (data version 4) by meaning: the word run of the sentence closest to the Chinese
answer, kept only when it is close and clear of every other run; else (data version 6) the span
the app's LLM judge reads in that sentence, where it is close in meaning to the Chinese answer
(training/aligned_spans.py); else the question is left out.

What comes out is an English :class:`QADataset` (answerable items with their recovered span,
unanswerable ones flagged), on which :func:`desktop_kb.eval.faithfulness.build_claims` builds every
claim kind as it does for the Chinese files. Training data only: nothing of ``../shared/eval``.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from desktop_kb.eval.datasets import Document, QADataset, QAItem
from desktop_kb.verify.support import sentence_spans

__all__ = ["TITLES", "aligned_english"]

TITLES = {  # chinesesquad title → English title (the same 19 articles)
    "南加利佛尼亚州": "Southern_California", "天空_（英国）": "Sky_(United_Kingdom)",
    "维多利亚（澳大利亚）": "Victoria_(Australia)", "氧": "Oxygen", "亚马逊热带雨林": "Amazon_rainforest",
    "Ctenophora": "Ctenophora", "弗雷斯诺，加利福尼亚": "Fresno,_California", "黑死病": "Black_Death",
    "地质学": "Geology", "药店": "Pharmacy", "公民抗命": "Civil_disobedience", "施工": "Construction",
    "私立学校": "Private_school", "佛罗里达杰克逊维尔": "Jacksonville,_Florida",
    "经济不平等": "Economic_inequality", "芝加哥大学": "University_of_Chicago",
    "Inter Government_Panel_on_Climate_Change": "Intergovernmental_Panel_on_Climate_Change",
    "Prime_number": "Prime_number", "莱茵河": "Rhine",
}
PARA_FLOOR, QUESTION_FLOOR, SENTENCE_FLOOR, NAME_FLOOR = 0.80, 0.80, 0.78, 0.84
PHRASE_FLOOR, PHRASE_MARGIN, PHRASE_WORDS = 0.86, 0.03, 6
_LATIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9.,'\-]*[A-Za-z0-9]|[A-Za-z0-9]")
_NUMERALS = {"一": "one", "二": "two", "两": "two", "三": "three", "四": "four", "五": "five", "六": "six",
             "七": "seven", "八": "eight", "九": "nine", "十": "ten"}
# a run of capitalised words (with the small words names carry inside): a name's English form
_NAME = re.compile(r"[A-Z][\w'\-]*(?:\s+(?:of|the|de|von|and|la|du)?\s*[A-Z][\w'\-]*)*")

_STOP = {"the", "a", "an", "in", "on", "at", "it", "its", "this", "that", "these", "those", "he", "she", "they",
         "there", "after", "before", "during", "however", "although", "while", "when", "as", "by", "for", "from",
         "with", "since", "some", "many", "most", "all", "both", "each", "other", "unlike", "despite", "because"}
Embed = Callable[[Sequence[str]], np.ndarray]
Read = Callable[[dict, str, str], str]  # (an English question, its answer's sentence, the Chinese answer) → span


def _mutual(a: np.ndarray, b: np.ndarray, floor: float) -> list[tuple[int, int]]:
    """Index pairs that are each other's best match with cosine ≥ ``floor``."""
    if len(a) == 0 or len(b) == 0:
        return []
    sim = a @ b.T
    best_b, best_a = sim.argmax(1), sim.argmax(0)
    return [(i, int(j)) for i, j in enumerate(best_b) if best_a[j] == i and sim[i, j] >= floor]


def _english_span(zh_answer: str, en_sentence: str) -> str | None:
    """The part of ``en_sentence`` from the first to the last Latin/digit token of ``zh_answer``,
    when they all occur there in order (at most 8 words apart); else None."""
    tokens = [t.rstrip(".,") for t in _LATIN.findall(zh_answer)]
    tokens = [t for t in tokens if t]
    if not tokens:
        return None
    start, pos = None, 0
    for t in tokens:
        m = re.search(rf"(?<![A-Za-z0-9]){re.escape(t)}(?![A-Za-z0-9])", en_sentence[pos:])
        if m is None:
            return None
        if start is None:
            start = pos + m.start()
        pos += m.end()
    span = en_sentence[start:pos]
    return span if len(span.split()) <= 8 else None


def _name_span(zh_answer: str, en_sentence: str, embed_p: Embed) -> str | None:
    """A Chinese numeral one to ten as its English word, or the capitalised run of ``en_sentence``
    closest in meaning to ``zh_answer`` (cosine ≥ NAME_FLOOR, 0.03 clear of the next)."""
    word = _NUMERALS.get(zh_answer.strip())
    if word:
        m = re.search(rf"\b{word}\b", en_sentence, re.IGNORECASE)
        return m.group(0) if m else None
    names = list(dict.fromkeys(m.group(0).strip() for m in _NAME.finditer(en_sentence)))
    names = [re.sub(r"^(?:The|A|An)\s+", "", n) for n in names]
    names = [n for n in names if len(n.split()) <= 6 and n.lower() not in _STOP]
    if not names:
        return None
    sims = embed_p(names) @ embed_p([zh_answer])[0]
    order = np.argsort(-sims)
    if sims[order[0]] < NAME_FLOOR or (len(order) > 1 and sims[order[0]] - sims[order[1]] < 0.03):
        return None
    return names[int(order[0])]


_WORD = re.compile(r"\d+(?:[.,]\d+)+%?|[^\s()\[\]\"“”;:,]+")
_BREAK = re.compile(r"[,;:()\[\]\"“”–—]")  # a word run does not cross these
_EDGE = _STOP | {"of", "and", "or", "to", "is", "was", "were", "are", "be", "been", "has", "had", "have", "which",
                 "who", "not", "than", "into", "about", "such", "also", "only", "their", "his", "her", "s", "rather"}


def _phrases(en_sentence: str) -> list[tuple[int, int]]:
    """Character spans of the sentence's word runs (1 to PHRASE_WORDS words, within one clause)
    that neither start nor end with a small word."""
    words = [(m.start(), m.start() + len(m.group(0).rstrip(".'"))) for m in _WORD.finditer(en_sentence)]
    out = []
    for i, (a, first_end) in enumerate(words):
        if en_sentence[a:first_end].lower() in _EDGE:
            continue
        for j in range(i, min(len(words), i + PHRASE_WORDS)):
            if j > i and _BREAK.search(en_sentence[words[j - 1][1]:words[j][0]]):
                break
            b = words[j][1]
            if b > a and en_sentence[words[j][0]:b].lower() not in _EDGE:
                out.append((a, b))
    return out


def _phrase_span(zh_answer: str, en_sentence: str, embed_p: Embed) -> str | None:
    """The word run of ``en_sentence`` closest in meaning to ``zh_answer`` (cosine ≥ PHRASE_FLOOR
    and PHRASE_MARGIN clear of every run that does not overlap it): what the Latin-letter and name
    matches miss, a translated common word ("氧气" → "oxygen")."""
    spans = _phrases(en_sentence)
    if not spans:
        return None
    sims = embed_p([en_sentence[a:b] for a, b in spans]) @ embed_p([zh_answer])[0]
    best = int(np.argmax(sims))
    a, b = spans[best]
    rivals = [float(s) for (c, d), s in zip(spans, sims, strict=True) if d <= a or c >= b]
    if sims[best] < PHRASE_FLOOR or (rivals and sims[best] - max(rivals) < PHRASE_MARGIN):
        return None
    return en_sentence[a:b]


def _sentences(text: str) -> list[tuple[int, int]]:
    return sentence_spans(text) or [(0, len(text))]


def _align_paragraph(zp: dict, ep: dict, embed_q: Embed, embed_p: Embed,
                     agree: list[tuple[str, str | None]] | None = None,
                     read: Read | None = None) -> list[tuple[dict, str, bool]]:
    """(the English question, its English answer span or "", answerable) for aligned questions.
    ``agree`` (a check) collects (the span found by string, the phrase match's) where the first is found.
    ``read`` is asked last, where neither match finds a span: (the English question, its aligned
    sentence, the Chinese answer) → a span or "" (data version 6: training/aligned_spans.py)."""
    zq, eq = zp["qas"], ep["qas"]
    pairs = _mutual(embed_q([q["question"] for q in zq]), embed_q([q["question"] for q in eq]), QUESTION_FLOOR)
    zs, es = _sentences(zp["context"]), _sentences(ep["context"])
    if len(zs) == len(es):  # a sentence-by-sentence translation: the same order
        smatch = {k: k for k in range(len(zs))}
    else:
        smatch = dict(_mutual(embed_p([zp["context"][a:b] for a, b in zs]),
                              embed_p([ep["context"][a:b] for a, b in es]), SENTENCE_FLOOR))
    out = []
    for i, j in pairs:
        q = zq[i]
        if q.get("is_impossible") or not q.get("answers"):
            out.append((eq[j], "", False))
            continue
        ans = q["answers"][0]
        k = next((n for n, (a, b) in enumerate(zs) if a <= ans["answer_start"] < b), None)
        if k is None or k not in smatch:
            continue
        a, b = es[smatch[k]]
        sentence = ep["context"][a:b]
        span = _english_span(ans["text"], sentence) or _name_span(ans["text"], sentence, embed_p)
        if span and agree is not None:
            agree.append((span, _phrase_span(ans["text"], sentence, embed_p)))
        span = span or _phrase_span(ans["text"], sentence, embed_p)
        if not span and read is not None:
            span = read(eq[j], sentence, ans["text"])
        if span:
            out.append((eq[j], span, True))
    return out


def aligned_english(root: Path, embed_q: Embed, embed_p: Embed, log: Callable[[str], None] = print,
                    agree: list[tuple[str, str | None]] | None = None, read: Read | None = None) -> QADataset:
    """The English half as a labelled :class:`QADataset` (only what aligned; ``read``: see
    :func:`_align_paragraph`)."""
    zh = json.loads((root / "chinesesquad_zh.json").read_text(encoding="utf-8"))
    en_path = root / "squad2_testhalf_en_unlabelled.json"
    en = {a["title"]: a for a in json.loads(en_path.read_text(encoding="utf-8"))["data"]}
    corpus: dict[str, Document] = {}
    items: list[QAItem] = []
    counts = {"paragraphs": 0, "answerable": 0, "unanswerable": 0}
    for za in zh["data"]:
        title = TITLES.get(za["title"])
        if title not in en:
            continue
        ea = en[title]
        zparas, eparas = za["paragraphs"], ea["paragraphs"]
        for i, j in _mutual(embed_p([p["context"] for p in zparas]), embed_p([p["context"] for p in eparas]), PARA_FLOOR):
            ep = eparas[j]
            doc_id = f"squad-en-{title}-{j}"
            titled = None if read is None else (lambda q, s, zh, t=title: read({**q, "title": t}, s, zh))
            rows = _align_paragraph(zparas[i], ep, embed_q, embed_p, agree, titled)
            if not rows:
                continue
            corpus[doc_id] = Document(doc_id, title.replace("_", " "), ep["context"])
            counts["paragraphs"] += 1
            for q, span, answerable in rows:
                items.append(QAItem(q["id"], q["question"], (span,) if answerable else (), doc_id, answerable, {}))
                counts["answerable" if answerable else "unanswerable"] += 1
    log(f"[align] {counts}")
    digest = hashlib.sha1(json.dumps(counts).encode()).hexdigest()
    return QADataset(root, "squad_en_aligned", tuple(items), corpus, digest)


def onnx_embedders(folder: Path) -> tuple[Embed, Embed]:
    from desktop_kb.backends.embed_onnx_e5 import OnnxE5Embedder

    model = OnnxE5Embedder(folder, threads=2, max_batch=16)

    def queries(texts: Sequence[str]) -> np.ndarray:
        return np.stack([model.embed_query(t) for t in texts]) if texts else np.zeros((0, model.dim))

    def passages(texts: Sequence[str]) -> np.ndarray:
        return model.embed_passages(list(texts)) if texts else np.zeros((0, model.dim))

    return queries, passages

def _agreement(agree: list[tuple[str, str | None]]) -> str:
    """How the phrase match does where the string match found the span: exact, overlapping, wrong, none."""
    exact = sum(1 for a, b in agree if b is not None and a.lower() == b.lower())
    overlap = sum(1 for a, b in agree if b is not None and a.lower() != b.lower()
                  and (a.lower() in b.lower() or b.lower() in a.lower()))
    found = sum(1 for _, b in agree if b is not None)
    return (f"[align] phrase match where the string match found the span: {len(agree)} spans, {found} found, "
            f"{exact} the same, {overlap} nested, {found - exact - overlap} other")


if __name__ == "__main__":  # a look at what aligns, and the phrase check: python -m training.align_en MODELS_DIR
    from training.common import shared_train

    q, p = onnx_embedders(Path(sys.argv[1]) / "multilingual-e5-small-onnx-fp32")
    checked: list[tuple[str, str | None]] = []
    ds = aligned_english(shared_train(), q, p, agree=checked)
    print(_agreement(checked), file=sys.stderr)
    for a, b in checked:
        if b is not None and a.lower() != b.lower():
            print("  string:", a, "| phrase:", b, file=sys.stderr)
    for item in ds.items:
        if item.answerable:
            print(item.question, "→", item.answers, file=sys.stderr)
