"""One refusal, one reason, in the documents' words.

An answer is refused for one of three reasons, each said its own way:

- ``nothing_found``: no passage relevant to the question (the search's fallback says so);
- ``not_stated``: passages were found, but none states the answer — the refusal names what they
  do speak of, and calls them "about this" only when the search's scores and the question's key
  terms say so;
- ``unsupported``: an answer was drafted, but the passage it cites does not say it — the refusal
  says what the passage says (its own answer, or its words), never the invented draft as if it
  were a claim about the passage.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..text.tokenize import is_chinese, is_cjk_char, language_of, tokenize
from ..types import Hit
from .citations import mark_numbers
from .claim_terms import FILLER, QUESTION_WORDS
from .support import PassageView

__all__ = ["NOTHING_FOUND", "NOT_STATED", "UNSUPPORTED", "best_sentence", "drafted_wrong", "not_stated",
           "passage_words", "topics", "uncovered", "unsupported"]

NOTHING_FOUND, NOT_STATED, UNSUPPORTED = "nothing_found", "not_stated", "unsupported"


def topics(passages: Sequence[Hit], at_most: int = 3) -> list[str]:
    """What the passages speak of, by their documents' names and headings ("travel-policy.md ›
    Expenses"), the best ranked first, each once."""
    named: list[str] = []
    for h in passages:
        heading = h.chunk.heading_path[-1] if h.chunk.heading_path else ""
        label = " › ".join(p for p in (Path(h.chunk.path).name, heading) if p)
        if label and label not in named:
            named.append(label)
        if len(named) == at_most:
            break
    return named


def passage_words(text: str, limit: int = 200) -> str:
    """A passage's own words as the judge read them: its first line, without the heading in
    parentheses, cut at a word near ``limit`` characters."""
    words = text.split("\n", 1)[0]
    if words.startswith("(") and ") " in words:
        words = words.split(") ", 1)[1]
    if len(words) > limit:
        cut = words[:limit]
        words = (cut.rsplit(" ", 1)[0] if " " in cut else cut) + " …"
    return words.strip()


def best_sentence(question: str, hit: Hit, limit: int = 200) -> str:
    """The passage's sentence sharing most words with the question (its first on a tie)."""
    view = PassageView(hit)
    asked = set(tokenize(question))
    spans = view.sentences
    if not spans:
        return passage_words(hit.chunk.text, limit)
    start, end, _ = max(spans, key=lambda s: len(s[2] & asked))
    return passage_words(" ".join(view.text[start:end].split()), limit)


def not_stated(lang: str, passages: Sequence[Hit], *, related: bool, absent: str = "") -> str:
    """Passages were found, none states the answer: what they speak of, "about this" only when
    ``related`` (strong retrieval, every key term of the question in them); with ``absent``, the
    name the question asks about that the passages answered from do not hold."""
    names = topics(passages)
    if lang == "zh":
        listed = "、".join(f"“{n}”" for n in names)
        if absent:
            return f"找到的段落讲的是{listed}，都没有提到“{absent}”，因此不作猜测。"
        if related:
            return f"找到的段落（{listed}）与此相关，但没有一段说明这个问题的答案，因此不作猜测。"
        return f"找到的段落讲的是{listed}，没有一段回答这个问题，因此不作猜测。"
    listed = "; ".join(names)
    if absent:
        return f"The passages found speak of {listed}; none of them names \u201c{absent}\u201d, so I won't guess."
    if related:
        return (f"The passages found ({listed}) are about this, but none of them states the answer to the "
                "question as asked, so I won't guess.")
    return f"The passages found speak of {listed}; none of them answers this question, so I won't guess."


def unsupported(lang: str, cited: int | None, *, answer: str = "", words: str = "") -> str:
    """An answer was drafted but its passage does not say it: what passage ``cited`` says instead
    (its own ``answer`` to the question, else its ``words``), or, with no cited passage, that the
    draft could not be tied to one."""
    if lang == "zh":
        if cited is None:
            return "起草的答案无法对应到任何一段说明它的文字，因此不给出。"
        said = f"段落[{cited}]对这个问题的回答是“{answer}”。" if answer else (
            f"段落[{cited}]写的是：“{words}”。" if words else "")
        return f"起草的答案与所引段落的内容不符，因此不给出。{said}"
    if cited is None:
        return "The answer I drafted could not be tied to a passage that says it, so I won't give it."
    said = (f" Passage [{cited}] answers it with \u201c{answer}\u201d" if answer
            else f" Passage [{cited}] says: \u201c{words}\u201d" if words else "")
    if said and not said.rstrip("\u201d").endswith((".", "!", "?", "…")):
        said += "."
    return f"The answer I drafted is not what the cited passage says, so I won't give it.{said}"


def uncovered(question: str, passages: Sequence[Hit]) -> bool:
    """Whether half or more of the question's content words (not its question words or fillers;
    Latin ones of three letters or more) are in no passage found in its language: "parental" and
    "leave" over passages on flights and meals. Looser than the key terms, whose common words may
    be paraphrased: it only chooses how a refusal is worded."""
    zh = is_chinese(question)
    views = [v for v in (PassageView(h) for h in passages) if v.cjk == zh]
    words = [w for w in set(tokenize(question)) - QUESTION_WORDS - FILLER if len(w) >= 3 or is_cjk_char(w[0])]
    if not views or not words:
        return False
    absent = [w for w in words if not any(v.has(w) for v in views)]
    return len(absent) * 2 >= len(words)


def drafted_wrong(question: str, text: str, passages: Sequence[Hit]) -> str:
    """The refusal of a draft the word checks could not make stand: what the passage it cites
    first says of the question (none cited: that it could not be tied to a passage)."""
    cited = next((n for n in mark_numbers(text) if 1 <= n <= len(passages)), None)
    words = best_sentence(question, passages[cited - 1]) if cited is not None else ""
    return unsupported(language_of(question), cited, words=words)
