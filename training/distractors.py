"""Typed distractors: a wrong answer of the right *kind*, taken from the answer's own passage.

``build_claims`` makes its hard negatives from other questions' answers on the same paragraph, so a
paragraph with one question gives none, and the English half (few labelled questions a paragraph)
gives few: the verifier did not learn to tell a bare wrong answer (``short_wrong``) from a right
one. Here every answerable question gets one distractor of the answer's shape, found in its own
passage and absent from the question:

* a figure → another figure of the passage put in its place ("1,200 people" → "300 people");
* an English name (capitalised) → another capitalised name of the passage;
* a Chinese name, place, organisation or time (jieba's ``nr ns nt nz t`` tags) → another word of
  the passage with the same tag.

Each becomes up to two negatives: ``typed_short`` (the distractor alone, read with the sentence that
holds it) and, from the answer's own sentence, ``typed_swap`` (the answer replaced by the
distractor) or, when that sentence holds both, ``typed_roles`` (the two exchanged). Every word of
them is in the passage, so only the meaning of the binding can reject them.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Iterator
from typing import Any

from desktop_kb.eval.faithfulness import _exchange, _sentence_with
from desktop_kb.text.tokenize import cjk_ratio
from training.align_en import _STOP as _ALIGN_STOP

__all__ = ["candidates", "shape", "typed_claims"]

_NUM = re.compile(r"\d(?:[\d,.]*\d)?")
_NAME = re.compile(r"[A-Z][A-Za-z0-9'\-]*(?:\s+(?:of|the|de|von|and|la|du)?\s*[A-Z][A-Za-z0-9'\-]*)*")
_ZH_TAGS = ("nr", "ns", "nt", "nz", "t")
# words a capitalised run starts with that are no name (align_en's, and a few more)
_STOP = _ALIGN_STOP | {"his", "her", "their", "if", "but", "and", "or", "not", "also", "today", "we", "i", "one",
                      "two"}


@functools.lru_cache(maxsize=1)
def _posseg() -> Any:
    import jieba.posseg

    return jieba.posseg


def _zh_words(text: str) -> list[tuple[str, str]]:
    return [(p.word, p.flag) for p in _posseg().cut(text)]


def shape(answer: str) -> str | None:
    """"number", "name" (English), a jieba tag (Chinese), or None: only for a short answer (at most
    5 words, 10 Chinese characters) that is mostly the one figure or name."""
    zh = cjk_ratio(answer) > 0.3
    if len(answer) < 2 or (len(answer) > 10 if zh else len(answer.split()) > 5):
        return None
    if _NUM.search(answer):
        return "number"
    if zh:
        return next((f for w, f in _zh_words(answer) if f in _ZH_TAGS and 2 * len(w) >= len(answer)), None)
    return "name" if answer[:1].isupper() else None


def _clash(a: str, b: str) -> bool:
    fa, fb = "".join(a.lower().split()), "".join(b.lower().split())
    return not fa or not fb or fa in fb or fb in fa


def candidates(answer: str, kind: str, passage: str, question: str, golds: tuple[str, ...]) -> list[str]:
    """Wrong answers of ``kind`` from ``passage``: not a gold answer (nor part of one), not in the
    question, each once, in passage order."""
    if kind == "number":
        m = _NUM.search(answer)
        assert m is not None
        found = [answer[:m.start()] + n.group(0) + answer[m.end():] for n in _NUM.finditer(passage)
                 if n.group(0) != m.group(0)]
    elif kind == "name":
        names = (re.sub(r"^(?:The|A|An)\s+", "", n.group(0).strip()) for n in _NAME.finditer(passage))
        found = [n for n in names if n.lower() not in _STOP and len(n) >= 2 and len(n.split()) <= 6]
    else:
        found = [w for w, f in _zh_words(passage) if f == kind and len(w) >= 2]
    q = question.lower()
    out = [c for c in dict.fromkeys(found)
           if c.strip() and c.lower() not in q and not any(_clash(c, g) for g in (answer, *golds))]
    return out


def typed_claims(item: Any, passage: str, rng: random.Random) -> Iterator[tuple[str, str]]:
    """(kind, claim) negatives for an answerable ``item`` (a QAItem) over its ``passage``."""
    # the answer where it stands once in the passage (its sentence is then the answer's)
    answer = next((a for a in item.answers if a and passage.count(a) == 1), None)
    kind = shape(answer) if answer else None
    if not answer or not kind:
        return
    pool = candidates(answer, kind, passage, item.question, item.answers)
    sentence = _sentence_with(passage, answer)  # the answer stands once: its own sentence
    if not pool or not sentence:
        return
    near = [c for c in pool if c in sentence]
    other = near[0] if near and rng.random() < 0.5 else rng.choice(pool)
    yield "typed_short", other
    if other in sentence:
        roles = _exchange(sentence, answer, other)
        if roles:
            yield "typed_roles", roles
    else:
        yield "typed_swap", sentence.replace(answer, other, 1)
