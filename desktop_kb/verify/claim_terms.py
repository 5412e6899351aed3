"""The words and patterns the claim checks (:mod:`.support`) read a text with: filler and question
words, negations, names and codes, sentence ends, and the kinds of question (how many, when, who)."""

from __future__ import annotations

import re

from ..text.tokenize import tokenize

__all__ = [
    "CODE",
    "FILLER",
    "NAME",
    "NEGATION_EN",
    "NEGATION_ZH",
    "NOT_AFTER",
    "OR_NOT",
    "PERCENT_Q",
    "PERSON_Q",
    "QUANTITY_Q",
    "QUESTION_WORDS",
    "SENTENCE_END",
    "TIME_Q",
    "VAGUE",
]

# Words an answer uses to talk about passages and questions, not about the world, and the
# connectives it adds when it answers a why-question (是因为).
FILLER = frozenset(tokenize(
    "passage passages document documents text according states stated says said mentions mentioned "
    "answer question provided information based following given described indicates shown "
    "根据 段落 文档 文中 提到 指出 表示 说明 资料 答案 问题 内容 以上 描述 记载 所述 显示 "
    "是因为 之所以 是由于 因为 由于 所以 因此"
))
# Question words that are no key terms (stemmed the way tokenize stems them).
QUESTION_WORDS = frozenset(tokenize(
    "many much long old far often kind type name called named year years time number percentage "
    "什么 哪 哪个 哪些 哪里 哪年 哪一年 多少 几 谁 何时 什么时候 为什么 如何 怎么 怎样 是否 多久 多长 哪位 "
    "叫什么 名字 称为 被称为 主要 介绍 一下 请问 可以 简述 描述 讲讲 说说 告诉 知道 有关 关于 具体"
))
NEGATION_EN = re.compile(r"\b(?:not|no|never|none|neither|nor|without|cannot)\b|n't\b", re.IGNORECASE)
NEGATION_ZH = re.compile(r"(?<![不])(?:不|没|未|无|非|别|勿)(?!同|断|少|久|仅|过|管|论|常|来|数|但|时|止|定|限|得不)")
OR_NOT = re.compile(r"\b(?:or|if|whether)(?: \w+)? not\b|是否|与否", re.IGNORECASE)  # "may or may not": no negation
# Latin letters and digits only (\w would glue a name to the Chinese text around it: 授勋了MBE)
_L = "0-9A-Za-z\u00c0-\u024f"
NAME = re.compile(rf"(?<![{_L}.])(?:[A-Z][{_L}'’-]*[A-Za-z0-9]|[A-Z]{{2,}}|[{_L}]*\d[{_L}]*[A-Za-z][{_L}]*)")
CODE = re.compile(r"^(?:[A-Z0-9]{2,}[-/.]?\w*|\w*\d\w*)$")
# a full stop after an initial ("T. S. Eliot") or a title ("Ms. Lin", "Dr. Chen") ends no sentence
NOT_AFTER = (r"(?<!\b[A-Z])(?<!\bMr)(?<!\bMs)(?<!\bDr)(?<!\bSt)(?<!\bJr)(?<!\bSr)(?<!\bMrs)(?<!\bProf)(?<!\bGen)(?<!\bvs)"
             r"(?<!\ba\.m)(?<!\bp\.m)(?<!\be\.g)(?<!\bi\.e)")  # "at 3 p.m. every day" is one sentence
SENTENCE_END = re.compile(rf"[。！？!?；]+|{NOT_AFTER}\.(?=\s+[^a-z\s])|\n+")
_PERCENT_Q = r"\bwhat (?:percentage|percent)\b|百分之几|百分比"
PERCENT_Q = re.compile(_PERCENT_Q, re.IGNORECASE)
QUANTITY_Q = re.compile(r"\bhow (?:many|much|long|old|far|often)\b|\bwhat (?:year|number)\b|"
                         rf"多少|几(?:个|年|次|名|位|种|天|岁)|哪一?年|多久|多长|{_PERCENT_Q}", re.IGNORECASE)
# amounts without digits: "thousands", and a price of nothing ("free", "免费")
VAGUE = re.compile(r"\b(?:thousands|hundreds|millions|billions|dozens|several|free|no charge|数千|数百|数万|上千|上百)\b"
                   r"|免费|不收费")
TIME_Q = re.compile(r"\bwhen\b|何时|什么时候|哪个时期|哪个朝代", re.IGNORECASE)
PERSON_Q = re.compile(r"\bwho(?:m|se)?\b|谁|哪位", re.IGNORECASE)
