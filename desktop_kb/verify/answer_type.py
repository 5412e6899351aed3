"""The kind of answer a question asks for, and an answer of another kind (no LLM).

A question asks for a person, a place or a reason ("Who …", "Where …", "Why …", 谁, 哪里, 为什么,
原因) or for a figure ("How many …", "In what year …", 多少, 几个, 哪一年). A bare figure ("1889年",
"约2.8公里", "17") or only the titles of works (《劝导》) do not answer the first kind, and an answer
without any figure does not answer the second: the answer to another question about the same
passage, given to this one. Only these plain cases are read; "What …" questions, durations and
"how much" (answered in words as often as in figures) are left to the meaning check.

An answer all of whose words stand in the wh-question it answers (:func:`echoes_question`:
"testosterone" for "What is the effect of testosterone on the immune system?", "脱发" for
"男性的脱发问题可以由什么药物处理？") names what is asked about, not what is asked.
"""

from __future__ import annotations

import re

from ..text.numbers import quantities
from ..text.tokenize import tokenize
from .claim_terms import FILLER

__all__ = ["answer_kind_mismatch", "echoes_question"]

_EN_WH_WORDS = r"who|whom|whose|where|why|what|which|when|how"
# the question's first wh-word asks for a person, a place or a reason
_EN_WH = re.compile(rf"\b({_EN_WH_WORDS})\b", re.I)
_EN_NOT_FIGURE = {"who", "whom", "whose", "where", "why"}
# 为什么 read as "as what" (被称为什么, 叫作为什么) asks for a name, not a reason
_ZH_NOT_FIGURE = re.compile(r"谁|哪里|哪儿|什么地方|何地|何处|何人|什么人|哪国|哪个国家|(?<![作称成认视])为什么|什么原因|原因是什么")
_EN_FIGURE = re.compile(r"\bhow many\b|\b(?:what|which) (?:year|percentage|percent)\b|\bin what year\b", re.I)
_ZH_FIGURE = re.compile(r"多少|几[个年次人岁位名种家条项届倍]|哪一?年|何年|百分之几")
_FIGURE_WORDS = re.compile(
    r"\b(?:one|once|zero|none|no|several|few|many|dozens?|hundreds|thousands|millions|billions|half|"
    r"first|second|third|both|all|most)\b|\d|[零〇一二两三四五六七八九十百千万亿半]|若干|数", re.I)
# words that only qualify a figure ("about 300", "约2.8公里")
_APPROX = frozenset(tokenize("约 大约 近 逾 超过 将近 左右 多 余 about around approximately roughly nearly over almost "
                             "some more than less under"))
_TITLE = re.compile(r"《[^《》]{1,60}》")
# a question that asks for something (not yes/no), and one that offers the answers to choose from
_WH = re.compile(rf"\b(?:{_EN_WH_WORDS})\b|什么|哪|谁|几|多少|怎么|怎样|如何|为什么|为何|何时|何地|何处|何人|何种|何年|有何",
                 re.I)
# … or a yes/no question whatever words it holds (任何员工都可以申请吗？), or offers its answers to choose from
_CHOICE = re.compile(r"\b(?:or|whether|either)\b|还是|或者|或是|或|是否|[吗嘛][？?]?\s*$", re.I)
# a question that asks for another form of a name it gives (简称 "现代货箱码头" of 现代货箱码头有限公司)
_NAMING = re.compile(r"简称|全称|别称|别名|又称|又名|缩写|称为|称作|叫作|叫做|名称|名字|abbreviat|acronym|short for|"
                     r"stands? for|full name|nickname|also (?:called|known)|called|named", re.I)


def _words(text: str) -> set[str]:
    """What ``text`` says: its words, without the filler ones."""
    return set(tokenize(text)) - FILLER


def _asks(question: str) -> str:
    """'figure', 'not_figure' or '' (anything else)."""
    if _EN_FIGURE.search(question) or _ZH_FIGURE.search(question):
        return "figure"
    first = _EN_WH.search(question)
    if first and first.group(1).lower() in _EN_NOT_FIGURE:
        return "not_figure"
    if _ZH_NOT_FIGURE.search(question):
        return "not_figure"
    return ""


def _only_figures(answer: str) -> bool:
    """The answer says nothing but figures ("1889年", "约2.8公里", "17")."""
    found = quantities(answer)
    if not found:
        return False
    rest = answer
    for q in sorted(found, key=lambda q: q.start, reverse=True):
        rest = rest[:q.start] + " " + rest[q.end:]
    return not (_words(rest) - _APPROX)


def _only_titles(answer: str) -> bool:
    """The answer names only works (《劝导》, 《朱学论集》、《…》等): no person, place or reason."""
    return bool(_TITLE.search(answer)) and not (_words(_TITLE.sub(" ", answer)) - {"等"})


def answer_kind_mismatch(question: str, answer: str) -> str:
    """What the question asks for that the answer is not ("a figure", "a person, place or
    reason"), or "" when the answer may be of the kind asked."""
    asks = _asks(question)
    if asks == "not_figure" and (_only_figures(answer) or _only_titles(answer)):
        return "a person, place or reason"
    if asks == "figure" and not (_FIGURE_WORDS.search(answer) or quantities(answer)):
        return "a figure"
    return ""


def echoes_question(claim: str, question: str) -> bool:
    """Every word the claim says is a word of the question, a wh-question that offers no choice:
    the claim repeats what is asked about and answers nothing. (A yes/no question's answer may
    repeat it: "Is the tower in Paris?" — "The tower is in Paris."; so may another form of a
    name the question gives: "现代货箱码头有限公司的简称是什么？" — "现代货箱码头".)"""
    if not _WH.search(question) or _CHOICE.search(question) or _NAMING.search(question):
        return False
    said = _words(claim)
    return bool(said) and said <= set(tokenize(question))
