"""A faithfulness test set built from QA gold data, and the claim checker's score on it (no LLM).

For every answerable item whose gold answer is in its context, the *gold sentence* is the
context sentence that holds the answer. From it:

* ``verbatim``      the gold sentence cited to its passage                        → accept
* ``paraphrased``   the question restated with the gold answer in place of the
                    question word ("William Pitt increased British military …")  → accept
* ``changed_number`` the gold sentence with one figure changed (24 → 31)          → reject
* ``swapped_answer`` the gold sentence with the answer replaced by another item's → reject
* ``negated``       the gold sentence with a negation inserted (is → is not, 是 → 不是) → reject
* ``wrong_passage`` the gold sentence cited to another document's passage         → reject

The hard kinds, built where a context has several questions (SQuAD 2.0 and CMRC do): every
word of such a claim is in its passage, only the binding is wrong, so only a check of meaning
(the judge, :mod:`desktop_kb.verify.judge`) can stop them:

* ``in_passage_swap`` the gold sentence with the answer replaced by another question's answer
                    on the same context                                           → reject
* ``swapped_roles`` the gold sentence with the gold answer and another question's answer in
                    it exchanged ("signed by Lin, approved by Park" → "signed by Park, approved
                    by Lin"), where the sentence holds both                       → reject
* ``short_right``   the bare gold answer cited to its passage ("Ms. Lin [1].")    → accept
* ``short_wrong``   the bare answer of another question on the same context       → reject

and for the unanswerable items of SQuAD 2.0 (``trap``): the sentence holding the plausible
(wrong) answer, cited to its passage, for the adversarial question → reject (only the question
check can see this one; it is reported, not a target). ``off_passage`` (both sets, reported, not
a target): the sentence that shares most words with the question, of the gold passage (away from
the answer) or of another passage of the same article without it, cited to its passage: what
retrieval brings when the documents do not answer, and the negatives the answerability judge is
calibrated on where a set has no unanswerable questions (CMRC).

Each claim is checked by :func:`desktop_kb.verify.citations.validate` with the knowledge base's
term statistics built from all the set's contexts, as the product does after ingesting them.
The gold data (answers, contexts) decide what is faithful, not the checker.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..text.numbers import quantities
from ..text.tokenize import is_chinese, tokenize
from ..types import Chunk, Hit
from .datasets import QADataset

__all__ = ["ACCEPT", "HARD", "REJECT", "FaithClaim", "build_claims", "score_claims", "to_records"]

ACCEPT = ("verbatim", "paraphrased", "short_right")
REJECT = ("changed_number", "swapped_answer", "negated", "wrong_passage", "trap", "off_passage",
          "in_passage_swap", "swapped_roles", "short_wrong")
HARD = ("in_passage_swap", "swapped_roles", "short_right", "short_wrong")

_WH_EN = re.compile(r"^(?:what|which|who|whom|whose|where|when|how many|how much|how)\b\s*", re.IGNORECASE)
_WH_ZH = re.compile(r"(?:什么时候|哪一年|哪些|哪个|哪位|哪里|哪儿|多少|什么|是谁|谁|哪|几)[^，。？?的]{0,3}?(?=[，。？?的]|$)")
_AUX_EN = re.compile(r"\b(is|was|are|were|has|have|had|can|will|could|would|did|does)\b")


@dataclass(frozen=True)
class FaithClaim:
    kind: str
    item_id: str
    question: str
    answer: str  # the claim with its [n]
    passages: tuple[Hit, ...]
    context_ids: tuple[str, ...]

    @property
    def faithful(self) -> bool:
        return self.kind in ACCEPT


def _hit(doc_id: str, title: str, text: str) -> Hit:
    return Hit(Chunk(doc_id, doc_id, f"/eval/{doc_id}.md", 0, text, (title,) if title else (), 0, len(text)),
               "eval", 1.0)


def _sentence_with(text: str, answer: str) -> str | None:
    from ..verify.support import sentence_spans

    at = text.find(answer)
    if at < 0:
        return None
    for s, e in sentence_spans(text):
        if s <= at < e:
            return text[s:e] if e - s >= 8 else None
    return None


def _cite(sentence: str, n: int) -> str:
    body = sentence.rstrip(" 。.!?！？")
    end = "。" if is_chinese(sentence) else "."
    return f"{body} [{n}]{end}"


def _paraphrase(question: str, answer: str) -> str | None:
    q = question.strip().rstrip("?？ ")
    if is_chinese(q):
        out, k = _WH_ZH.subn(lambda _: answer, q, count=1)  # the answer is text, not a template
        return out if k else None
    out, k = _WH_EN.subn("", q, count=1)
    if not k:
        return None
    return f"{answer} — {out}"


def _change_number(sentence: str, context: str) -> str | None:
    present = {v for q in quantities(context) for v in q.values}
    for q in quantities(sentence):
        raw = re.search(r"\d[\d,.]*", sentence[q.start:q.end])
        if raw is None:
            continue
        digits = raw.group(0).rstrip(".,")
        value = float(digits.replace(",", ""))
        for delta in (7, 3, 11, 1):
            new = value + delta
            if new not in present:
                fresh = str(int(new)) if new == int(new) else f"{new:g}"
                at = q.start + raw.start()
                return sentence[:at] + fresh + sentence[at + len(digits):]
    return None


def _negate(sentence: str) -> str | None:
    if is_chinese(sentence):
        for word, neg in (("是", "不是"), ("有", "没有"), ("能", "不能"), ("会", "不会")):
            i = sentence.find(word)
            if i > 0 and sentence[i - 1] not in "不没":
                return sentence[:i] + neg + sentence[i + len(word):]
        return None
    m = _AUX_EN.search(sentence)
    if m is None or re.match(r"\s+(?:not|never|no)\b", sentence[m.end():]):
        return None
    return sentence[: m.end()] + " not" + sentence[m.end():]


def _off_passage(question: str, answers: Sequence[str], own: str, others: Sequence[str],
                 ds: QADataset) -> tuple[str, str] | None:
    """(passage id, sentence): the sentence that shares most words (at least two) with the
    question among the sentences of ``own`` whose neighbours hold no gold answer either, and of
    the passages ``others`` that hold none."""
    from ..verify.support import sentence_spans

    asked = set(tokenize(question))
    best: tuple[int, str, str] | None = None
    for d in (own, *others):
        text = ds.corpus[d].text
        spans = sentence_spans(text)
        if d != own and any(a and a in text for a in answers):
            continue
        for k, (s, e) in enumerate(spans):
            around = text[spans[max(0, k - 1)][0]:spans[min(len(spans) - 1, k + 1)][1]]
            if e - s < 8 or any(a and a in around for a in answers):
                continue
            shared = len(asked & set(tokenize(text[s:e])))
            if shared >= 2 and (best is None or shared > best[0]):
                best = (shared, d, text[s:e])
    return (best[1], best[2]) if best else None


def _overlaps(a: str, b: str) -> bool:
    fa, fb = "".join(a.lower().split()), "".join(b.lower().split())
    return not fa or not fb or fa in fb or fb in fa


def _siblings(item: Any, answer: str, peers: Sequence[Any], text: str) -> list[str]:
    """Answers of the other questions on ``item``'s context (the plausible answers of its
    unanswerable ones too) that the context holds and that are not this question's answer."""
    out: list[str] = []
    for p in peers:
        if p.id == item.id:
            continue
        pool = list(p.answers) if p.answerable else list(p.extra.get("plausible_answers") or [])
        other = next((a for a in pool if a and a in text), None)
        if (other and len(other.strip()) >= 2 and not any(_overlaps(other, g) for g in (answer, *item.answers))
                and not re.search(r"[。！？!?；;]", other) and len(other.split()) <= 8 and other not in out):
            out.append(other)
    return out


def _exchange(sentence: str, a: str, b: str) -> str | None:
    """``sentence`` with ``a`` and ``b`` (both in it, apart) put in each other's place."""
    i, j = sentence.find(a), sentence.find(b)
    if i < 0 or j < 0 or (i < j + len(b) and j < i + len(a)):
        return None
    first, second = (a, b) if i < j else (b, a)
    lo, hi = min(i, j), max(i, j)
    return sentence[:lo] + second + sentence[lo + len(first):hi] + first + sentence[hi + len(second):]


def _hard(add: Any, item: Any, answer: str, sentence: str, pair: list[str], siblings: Sequence[str]) -> None:
    add("short_right", item.id, item.question, _cite(answer, 1), pair)
    if not siblings:
        return
    other = siblings[0]
    add("short_wrong", item.id, item.question, _cite(other, 1), pair)
    add("in_passage_swap", item.id, item.question, _cite(sentence.replace(answer, other, 1), 1), pair)
    inside = next((o for o in siblings if o in sentence), None)
    swapped = _exchange(sentence, answer, inside) if inside else None
    if swapped:
        add("swapped_roles", item.id, item.question, _cite(swapped, 1), pair)


def build_claims(ds: QADataset, limit: int | None = None, seed: int = 7) -> list[FaithClaim]:
    """The set for ``ds`` (deterministic for a seed): up to ``limit`` items per kind."""
    rng = random.Random(seed)
    items = [i for i in ds.items if i.context_id in ds.corpus]
    answers_pool = [a for i in items for a in i.answers[:1] if a.strip()]
    by_title: dict[str, list[str]] = {}
    for doc in ds.corpus.values():
        by_title.setdefault(doc.title, []).append(doc.id)
    other_docs = sorted(ds.corpus)
    by_context: dict[str, list[Any]] = {}
    for i in items:
        by_context.setdefault(i.context_id, []).append(i)
    out: dict[str, list[FaithClaim]] = {k: [] for k in (*ACCEPT, *REJECT)}

    def add(kind: str, item_id: str, question: str, claim: str, ctx_ids: list[str]) -> None:
        if limit is None or len(out[kind]) < limit:
            hits = tuple(_hit(c, ds.corpus[c].title, ds.corpus[c].text) for c in ctx_ids)
            out[kind].append(FaithClaim(kind, item_id, question, claim, hits, tuple(ctx_ids)))

    for item in items:
        doc = ds.corpus[item.context_id]
        if not item.answerable:
            traps = item.extra.get("plausible_answers") or []
            sentence = _sentence_with(doc.text, traps[0]) if traps else None
            if sentence:
                add("trap", item.id, item.question, _cite(sentence, 1), [doc.id])
            continue
        answer = next((a for a in item.answers if a and a in doc.text), None)
        sentence = _sentence_with(doc.text, answer) if answer else None
        if not answer or not sentence:
            continue
        # a passage of another article, so [2] exists and is wrong
        elsewhere = [d for d in other_docs if ds.corpus[d].title != doc.title]
        distractor = elsewhere[rng.randrange(len(elsewhere))] if elsewhere else doc.id
        pair = [doc.id, distractor]
        add("verbatim", item.id, item.question, _cite(sentence, 1), pair)
        para = _paraphrase(item.question, answer)
        if para:
            add("paraphrased", item.id, item.question, _cite(para, 1), pair)
        changed = _change_number(sentence, doc.text)
        if changed:
            add("changed_number", item.id, item.question, _cite(changed, 1), pair)
        for _ in range(20):
            other = answers_pool[rng.randrange(len(answers_pool))]
            if (other not in doc.text and answer not in other and len(other) >= 2
                    and not re.search(r"[。！？!?；;]|\.\s", other)):
                add("swapped_answer", item.id, item.question, _cite(sentence.replace(answer, other, 1), 1), pair)
                break
        negated = _negate(sentence)
        if negated:
            add("negated", item.id, item.question, _cite(negated, 1), pair)
        add("wrong_passage", item.id, item.question, _cite(sentence, 2), pair)
        _hard(add, item, answer, sentence, pair, _siblings(item, answer, by_context[doc.id], doc.text))
        near = _off_passage(item.question, item.answers, doc.id,
                            [d for d in by_title[doc.title] if d != doc.id], ds)
        if near:
            add("off_passage", item.id, item.question, _cite(near[1], 1), [near[0]])
    return [c for kind in out.values() for c in kind]


def score_claims(claims: list[FaithClaim], ds: QADataset, similarity: Any = None) -> dict[str, Any]:
    """Per kind: how many claims validate ("accepted") and the share that was judged right."""
    from ..verify.citations import validate
    from ..verify.support import TermStats

    stats = TermStats.from_texts(f"{d.title} {d.text}" for d in ds.corpus.values())
    kinds: dict[str, dict[str, Any]] = {}
    wrong: dict[str, list[dict[str, str]]] = {}
    for c in claims:
        v = validate(c.answer, list(c.passages), c.question, stats=stats, similarity=similarity)
        k = kinds.setdefault(c.kind, {"claims": 0, "accepted": 0})
        k["claims"] += 1
        k["accepted"] += int(v.valid)
        if v.valid != c.faithful:
            wrong.setdefault(c.kind, []).append({"id": c.item_id, "question": c.question, "claim": c.answer,
                                                 "errors": "; ".join(v.errors)[:300]})
    for kind, k in kinds.items():
        rate = k["accepted"] / k["claims"] if k["claims"] else 0.0
        k["accept_rate" if kind in ACCEPT else "reject_rate"] = round(rate if kind in ACCEPT else 1 - rate, 4)
    return {"dataset": ds.name, "kinds": kinds, "misjudged": {k: v[:10] for k, v in wrong.items()}}


def to_records(claims: Sequence[FaithClaim], ds: QADataset) -> Iterator[dict[str, Any]]:
    """The claims as ``desktop-kb eval claims`` reads them (one JSON object a line). The whole
    answer check repairs a ``wrong_passage`` claim (the sentence is re-cited to the passage that
    says it), so there it is expected to be accepted, with the right [n]."""
    for c in claims:
        expect = "accept" if c.faithful or c.kind == "wrong_passage" else "reject"
        yield {"id": f"{c.item_id}:{c.kind}", "question": c.question, "answer": c.answer,
               "passages": [{"title": ds.corpus[d].title, "text": ds.corpus[d].text} for d in c.context_ids],
               "kind": c.kind, "expect": expect}


def iter_kinds() -> Iterator[str]:
    yield from (*ACCEPT, *REJECT)
