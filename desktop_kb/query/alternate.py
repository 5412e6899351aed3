"""A refused draft tries the passage that holds the answer.

The model reads the top passages together and can answer from the wrong one: asked "How much may
I spend on a hotel per night?", it read the meal allowance of [1] and said "60 euros per day [1]";
the hotel allowance stood in [2], in Chinese, and nothing tried it. When the check refuses a draft,
the passages it did not cite are read one at a time, the best ranked first (at most
``query.alternate_passages``), each answered from alone and checked over all the passages like any
answer. The first that stands is the answer; when none does, the first refusal stands.

The judge reads a question in the language of the passage it judges: an English question over a
Chinese passage is judged in Chinese (the search's translation when it made one, else one made
here), as the judge's span call was calibrated on same-language pairs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..protocols import Generator
from ..text.tokenize import cjk_ratio
from ..types import Citation, Hit
from .translate import translate

__all__ = ["judge_question", "other_passages", "renumber"]

_MARK = re.compile(r"\[(\d+(?:\s*[,，-]\s*\d+)*)\]")


def other_passages(draft: str, cited: Sequence[Citation], n_passages: int) -> list[int]:
    """The passage numbers (rank order) that neither the refused draft's marks nor its
    citations name."""
    named = {c.n for c in cited}
    for group in _MARK.findall(draft):
        named.update(int(n) for n in re.findall(r"\d+", group))
    return [n for n in range(1, n_passages + 1) if n not in named]


def renumber(text: str, n: int) -> str:
    """An answer written from one passage (numbered [1] in its prompt) cited as passage ``n``."""
    return _MARK.sub(lambda m: f"[{n}]" if set(re.findall(r"\d+", m.group(1))) == {"1"} else m.group(0), text)


def _zh(text: str) -> bool:
    return cjk_ratio(text) > 0.3


def judge_question(question: str, queries: Sequence[str], cited: Sequence[Hit], generator: Generator | None,
                   cache: dict[str, str]) -> str:
    """The question as the judge should read it over the ``cited`` passages: as asked when they are
    in its language, else a query already in theirs (the search's translation), else translated by
    ``generator`` (once per answer, kept in ``cache``); as asked when none can be had."""
    if not cited:
        return question
    zh = sum(_zh(h.chunk.text) for h in cited) * 2 > len(cited)
    if _zh(question) == zh:
        return question
    same = next((q for q in queries if _zh(q) == zh), None)
    if same is not None:
        return same
    target = "zh" if zh else "en"
    if target not in cache:
        cache[target] = (translate(question, target, generator) if generator is not None else None) or question
    return cache[target]
