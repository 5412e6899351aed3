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
from collections.abc import Callable, Sequence

from ..progress import timed
from ..protocols import Generator
from ..types import Citation, Hit
from ..verify.answer_check import Checked, language, with_conditions
from ..verify.citations import Validation, find_in_passage, mark_numbers
from .translate import named, translate

__all__ = ["judge_question", "other_passages", "passage_answer", "renumber"]

_MARK = re.compile(r"\[(\d+(?:\s*[,，-]\s*\d+)*)\]")


def other_passages(draft: str, cited: Sequence[Citation], n_passages: int) -> list[int]:
    """The passage numbers (rank order) that neither the refused draft's marks nor its
    citations name."""
    named = {c.n for c in cited} | set(mark_numbers(draft))
    return [n for n in range(1, n_passages + 1) if n not in named]


def renumber(text: str, n: int) -> str:
    """An answer written from one passage (numbered [1] in its prompt) cited as passage ``n``."""
    return _MARK.sub(lambda m: f"[{n}]" if set(re.findall(r"\d+", m.group(1))) == {"1"} else m.group(0), text)


def _zh(text: str) -> bool:
    return language(text) == "zh"


def judge_question(question: str, queries: Sequence[str], cited: Sequence[Hit], generator: Generator | None,
                   cache: dict[str, str]) -> str:
    """The question as the judge should read it over the ``cited`` passages: as asked when they are
    in its language, else a query already in theirs (the search's translation), else translated by
    ``generator`` (once per answer, kept in ``cache``); as asked when none can be had. A name
    the question spells in pinyin is translated as the passages write it (:mod:`~desktop_kb.text.
    pinyin_names`: "Pan Shu" is 潘淑 there, not the model's 潘书)."""
    if not cited:
        return question
    zh = sum(_zh(h.chunk.text) for h in cited) * 2 > len(cited)
    if _zh(question) == zh:
        return question
    # a name the question spells in pinyin, written as the passages write it
    question, names = named(question, cited) if zh else (question, [])
    same = next((q for q in queries if _zh(q) == zh), None)
    if same is not None and all(name in same for name in names):
        return same
    key = ("zh" if zh else "en") + (f":{question}" if names else "")
    if key not in cache:
        cache[key] = (translate(question, key[:2], generator) if generator is not None else None) or question
    return cache[key]


PASSAGE_ANSWERED = {
    "en": "answered with the cited passage's own words: the draft said something else ({draft})",
    "zh": "以所引段落的原话作答：初稿的说法与之不同（{draft}）",
}


def passage_answer(question: str, refused: Checked, passages: Sequence[Hit],
                   validate_text: Callable[[str], Validation], timings: dict[str, float]) -> Checked | None:
    """A draft the judge refused because the cited passage answers the question otherwise, with a
    score that says it does answer it ("六百元" read, "500元" drafted): the passage's own words,
    cited, are the answer when they stand the word checks (None: they do not). The pipeline asks
    this after a refusal; :func:`~desktop_kb.verify.answer_check.check_answer` does not, so
    ``eval claims`` still measures the decision on the answer given."""
    signals, withheld = refused.answerability, refused.withheld
    if signals is None or withheld is None or signals.bound or not signals.span.strip():
        return None
    if signals.judge_score is None or signals.threshold is None or signals.judge_score < signals.threshold:
        return None
    span = signals.span.strip().rstrip(".。")
    n = next((c.n for c in withheld.citations if 1 <= c.n <= len(passages)
              and find_in_passage(span, passages[c.n - 1].chunk.text) is not None), None)
    if n is None:
        return None
    lang = language(question)
    text = f"{span}[{n}]。" if lang == "zh" else f"{span} [{n}]."
    with timed(timings, "validate"):
        check = validate_text(text)
    if not check.valid:
        return None
    note = PASSAGE_ANSWERED[lang].format(draft=withheld.text)
    answered = Checked("answered", text, check, check.citations, problems=(note,), judge_score=signals.judge_score,
                       withheld=withheld, answerability=signals)
    return with_conditions(question, answered, passages, validate_text, timings)
