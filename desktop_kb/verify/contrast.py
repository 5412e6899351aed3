"""Opposites: a claim or a question that uses one word of a contrasting pair where its passage
uses only the other ("a weak response" over a passage about a strong one, "before" where the
passage says "after") is not supported by that passage.

This is what SQuAD 2.0's adversarial unanswerable questions do: the passage is on topic and one
property is turned round. Only pairs whose words are rarely used loosely are listed; a word that
the passage also uses (in any sense) never fires.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["contrast"]

# Not converse relations: "A before B" is "B after A", "larger than" is "smaller than" the other
# way round, "A won against B" is "B lost to A" — such pairs are left out, or a faithful
# paraphrase would be refused.
_EN_PAIRS = (
    ("weak", "strong"), ("weakest", "strongest"), ("increase", "decrease"), ("increased", "decreased"),
    ("increases", "decreases"), ("increasing", "decreasing"), ("earliest", "latest"),
    ("highest", "lowest"), ("largest", "smallest"), ("maximum", "minimum"), ("positive", "negative"),
    ("success", "failure"), ("successful", "unsuccessful"), ("accepted", "rejected"),
    ("allowed", "prohibited"), ("northern", "southern"), ("eastern", "western"), ("rose", "fell"),
    ("male", "female"), ("private", "public"), ("ancient", "modern"), ("legal", "illegal"),
    ("internal", "external"), ("oldest", "youngest"), ("longest", "shortest"), ("known", "unknown"),
    ("agree", "disagree"), ("include", "exclude"), ("included", "excluded"), ("major", "minor"),
    ("majority", "minority"), ("gain", "loss"), ("wet", "dry"),
)
_ZH_PAIRS = (
    ("增加", "减少"), ("上升", "下降"), ("增长", "下降"), ("最早", "最晚"), ("最高", "最低"),
    ("最大", "最小"), ("最多", "最少"), ("成功", "失败"), ("允许", "禁止"), ("合法", "非法"),
    ("内部", "外部"), ("北部", "南部"), ("东部", "西部"), ("男性", "女性"), ("加强", "削弱"),
    ("增强", "减弱"),
)
_OPPOSITE: dict[str, str] = {}
for _a, _b in _EN_PAIRS + _ZH_PAIRS:
    _OPPOSITE.setdefault(_a, _b)
    _OPPOSITE.setdefault(_b, _a)
_ZH_WORDS = tuple(w for pair in _ZH_PAIRS for w in pair)
_WORD = re.compile(r"[a-z]+")


def _words(text: str) -> tuple[set[str], str]:
    low = text.lower()
    return set(_WORD.findall(low)), low


def contrast(text: str, passages: Iterable[str]) -> tuple[str, str] | None:
    """(word of ``text``, the opposite the passages use instead) for the first word of a pair that
    ``text`` uses, no passage uses, and some passage uses the opposite of; else None."""
    words, low = _words(text)
    used = [w for w in words if w in _OPPOSITE] + [w for w in _ZH_WORDS if w in low]
    if not used:
        return None
    seen = [_words(p) for p in passages]

    def has(word: str) -> bool:
        return any(word in ws if word.isascii() else word in lw for ws, lw in seen)

    for word in sorted(used):
        if not has(word) and has(_OPPOSITE[word]):
            return word, _OPPOSITE[word]
    return None
