"""The figures a question takes for granted, and whether the cited passages state them.

A question the documents do not answer often names the right topic with one detail changed:
another year ("Who led the reinforcements in 1765?" over a passage on 1756), another count ("the
83 MSPs"). Its words are all in the passage, so the key-term check sees nothing; the question's
figures written in digits are looked for by value (``1,765`` = ``1765``). Decades, centuries and
ordinals ("the 1600s", "17th") are said too many ways to look for, and number words count the
answer ("what two forms"), so neither is a detail of the premise.

What is unstated is a signal, not a verdict: the answer check raises the score the judge's
verdict must reach when no cited passage states one (:mod:`.answer_check`), since a passage cut
from a longer document may give the year only in another chunk.

Names of several words were looked for as phrases too ("Tamara de Maria" over "Tamara de
Lempicka … born Maria Górska") and left out: a name said in another order ("the Lisbon Treaty"
over "the Treaty of Lisbon") withheld a right answer, and the judge's score on the traps they
caught was far above any margin (docs/history/meaning-check.md, session 15).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from ..text.numbers import quantities, same_value

__all__ = ["question_figures", "unstated_details"]

# what follows a figure said many ways: decades, ordinals, centuries ("1600s", "17th", "19世纪")
_SAID_MANY_WAYS = re.compile(r"^(?:s\b|'s\b|th\b|st\b|nd\b|rd\b|\s*(?:century|centuries|年代|世纪))", re.IGNORECASE)


def question_figures(question: str) -> list[tuple[str, frozenset[float]]]:
    """The question's figures written in digits, with their values ("1765", "83"); not decades,
    centuries or ordinals, and not number words."""
    text = unicodedata.normalize("NFKC", question)
    out = []
    for q in quantities(text):
        if not re.search(r"\d", q.text) or _SAID_MANY_WAYS.match(text[q.end:q.end + 12]):
            continue
        out.append((q.text.strip(), q.values))
    return out


def unstated_details(question: str, passages: Sequence[str]) -> list[str]:
    """The question's figures that none of ``passages`` (their text with headings) states, by value."""
    values = {v for p in passages for q in quantities(unicodedata.normalize("NFKC", p)) for v in q.values}
    return [text for text, vs in question_figures(question)
            if not any(same_value(v, w) for v in vs for w in values)]
