"""Conditions travel with figures.

A passage sentence that gives a figure under a condition often gives another figure for another
case: "住宿费用每晚不超过五百元，一线城市不超过六百元" (500 a night, 600 in first-tier cities). A
small model answers "500元 [1]" and drops the second case, which is the answer for part of the
people asking. When a cited sentence of the answer gives one figure of such a passage sentence and
leaves out its others of the same unit, the passage's own sentence is quoted after it, so the
condition is there in the document's words (and the quote is checked like any quote).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..text.numbers import Quantity, quantities, same_value
from ..types import Citation, Hit
from .support import PassageView

__all__ = ["QUOTED", "dropped_cases", "quote_cases"]

_ENDED = re.compile(r"[.!?。！？]\s*(?:\[[\d,\s]+\])?$|[.!?。！？]$")
QUOTE = {"en": " The passage says: \u201c{sentence}\u201d [{n}]", "zh": "原文：“{sentence}”[{n}]"}
# the quote as :func:`quote_cases` appends it, found again (its [n] left to the caller): each template's
# text before the sentence, the sentence, its closing mark
QUOTED = re.compile(r"\s*(?:" + "|".join(re.escape(t.split("{sentence}")[0].strip()) + "[^\u201d]*\u201d"
                                            for t in QUOTE.values()) + ")")


def _given(q: Quantity, said: Sequence[Quantity]) -> bool:
    return any(s.unit == q.unit and any(same_value(a, b) for a in q.values for b in s.values) for s in said)


def dropped_cases(answer: str, citations: Sequence[Citation], passages: Sequence[Hit]) -> list[tuple[int, str]]:
    """(n, the passage sentence) for each cited passage sentence holding a figure the answer gives
    and another of the same unit the answer does not give (each sentence once)."""
    said = quantities(answer)
    if not said:
        return []
    found: list[tuple[int, str]] = []
    for n in dict.fromkeys(c.n for c in citations if 1 <= c.n <= len(passages)):
        view = PassageView(passages[n - 1])
        for (start, end, _), figures in zip(view.sentences, view.sentence_quantities, strict=True):
            priced = [q for q in figures if q.unit]
            if len(priced) < 2 or not any(_given(q, said) for q in priced):
                continue
            units = {q.unit for q in priced if _given(q, said)}
            if any(q.unit in units and not _given(q, said) for q in priced):
                sentence = " ".join(view.text[start:end].split())
                if sentence not in answer and (n, sentence) not in found:
                    found.append((n, sentence))
    return found


def quote_cases(answer: str, cases: Sequence[tuple[int, str]], lang: str) -> str:
    """``answer`` with each case's passage sentence quoted at its end."""
    text = answer.rstrip()
    if lang == "en" and not _ENDED.search(text):
        text += "."
    for n, sentence in cases:
        text += QUOTE[lang].format(sentence=sentence, n=n)
    return text
