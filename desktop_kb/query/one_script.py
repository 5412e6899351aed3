"""An English answer over Chinese passages, written in English.

Told to translate what it takes from Chinese passages, the 1.5B model still leaves Chinese words
in: "a station on the Beijing地铁10号线 and the planned 16号线", or a bare "2005年2月5日". Each run
of Chinese characters outside quotes and brackets (with the figures inside it) is put into English
and followed by the passage's own words in brackets, so the sentence reads in one script and the
words can still be found in the passage: "Beijing Subway Line 10 (地铁10号线)". A quoted Chinese
sentence (the condition check's "The passage says: “…一线城市不超过六百元。”") stays quoted and is
followed by its English in brackets, so the condition reaches a reader who reads no Chinese.

Dates, metro lines and measures are put by rule; a run of everyday words (each among jieba's
20,000 commonest) by the small model, in one call as a numbered list; any other run may be a name,
which the small model renames ("白朗宁" became "William Shakespeare"), so it is romanised in pinyin
("Bailangning (白朗宁)"). A reply with Chinese in it, or whose figures are not the source's by value
(五百元 = 500), is not used: that run or sentence stays as it was. An answer written in Chinese
altogether is left as it is (the check notes its language).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..progress import CancelToken
from ..protocols import Generator
from ..text.common_words import chinese_rank
from ..text.numbers import quantities
from ..text.tokenize import cjk_ratio, is_chinese, is_cjk_char, reads_as_chinese, segment

__all__ = ["ENGLISH_NOTE", "ENGLISH_NOTED", "by_rule", "chinese_runs", "has_chinese", "in_one_script", "romanised"]

_CJK = "\u3400-\u9fff\uf900-\ufaff"
_RUN = re.compile(rf"\d*[{_CJK}](?:[{_CJK}\d·・.]*[{_CJK}])?")
# where Chinese belongs in an English answer: quoted, or in brackets after its translation
_KEPT = re.compile(r"“[^”]*”|\"[^\"]*\"|「[^」]*」|《[^》]*》|\([^)]*\)|（[^）]*）")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_DATE = re.compile(r"(\d{1,4})年(?:(\d{1,2})月(?:(\d{1,2})[日号])?)?")
_UNITS = {"公里": "km", "千米": "km", "公尺": "m", "米": "m", "公分": "cm", "厘米": "cm", "毫米": "mm", "公斤": "kg",
          "千克": "kg", "克": "g", "吨": "tonnes", "岁": "years old", "人": "people", "元": "yuan", "倍": "times",
          "天": "days", "个月": "months", "小时": "hours", "分钟": "minutes"}
_MEASURE = re.compile(r"(\d+(?:\.\d+)?)(" + "|".join(sorted(_UNITS, key=len, reverse=True)) + ")")
_CITIES = {"北京": "Beijing", "上海": "Shanghai", "广州": "Guangzhou", "深圳": "Shenzhen", "香港": "Hong Kong"}
_LINE = re.compile(r"(北京|上海|广州|深圳|香港)?(地铁)?(\d+)号线")
_NUMBERED = re.compile(r"^\s*(\d+)[.)、:：]\s*(.+?)\s*$")
_QUOTE = re.compile(r"“([^”]+)”")
_QUOTE_MIN = 6  # characters: a sentence, not a term quoted as it is written ("厚壳仔")
_SENTENCE_END = re.compile(r"[。.!?！？]$")
MAX_RUNS = 6
# a quoted Chinese sentence's English, after the quote; ENGLISH_NOTED finds it again (a later turn's
# history leaves it out, as it leaves out the quote: the model copied both as a way to answer)
ENGLISH_NOTE = " (in English: {english})"
ENGLISH_NOTED = re.compile(r"\s*\(in English: [^()]*(?:\([^()]*\)[^()]*)*\)")
_CJK_CHAR = re.compile(rf"[{_CJK}]")
_CHINESE_SENTENCE = 8  # characters: fewer is a value given bare ("2005年2月5日"), put into English
EVERYDAY_RANK = 20_000  # jieba's commonest words: beyond them a run may be a name
_FIRST_SYLLABLE = 3  # letters: a word's first syllable that another name's pinyin shares (jiang, nan)


def by_rule(run: str) -> str | None:
    """A date, a metro line or a measure in English ("5 February 2005", "Line 16", "42 cm"); None
    for anything else."""
    m = _DATE.fullmatch(run)
    if m:
        year, month, day = m.groups()
        if month and not 1 <= int(month) <= 12:
            return None
        parts = [day, _MONTHS[int(month) - 1] if month else None, year]
        return " ".join(p for p in parts if p)
    m = _LINE.fullmatch(run)
    if m:
        city, subway, n = m.groups()
        return " ".join(w for w in (_CITIES.get(city or ""), "Subway" if subway else "", f"Line {n}") if w)
    m = _MEASURE.fullmatch(run)
    if m:
        return f"{m.group(1)} {_UNITS[m.group(2)]}"
    return None


def chinese_runs(text: str) -> list[tuple[int, int]]:
    """The spans of the Chinese runs an English ``text`` has outside quotes and brackets."""
    kept = [(m.start(), m.end()) for m in _KEPT.finditer(text)]
    return [(m.start(), m.end()) for m in _RUN.finditer(text)
            if not any(s <= m.start() < e for s, e in kept)]


def _messages(runs: Sequence[str]) -> list[dict[str, str]]:
    listed = "\n".join(f"{i}. {r}" for i, r in enumerate(runs, 1))
    return [
        {"role": "system", "content": "You translate Chinese phrases into English: a name by its usual English "
                                      "name or in pinyin, figures as they are. Reply with the numbered list only, "
                                      "one English phrase per line, no Chinese characters."},
        {"role": "user", "content": "1. 北京故宫\n2. 长江大桥"},
        {"role": "assistant", "content": "1. the Forbidden City in Beijing\n2. the Yangtze River Bridge"},
        {"role": "user", "content": listed},
    ]


def _same_figures(english: str, chinese: str) -> bool:
    """The translation states the figures the Chinese does, by value (五百元 = 500), and no others."""
    def values(text: str) -> list[float]:
        return sorted(v for q in quantities(text) for v in q.values)

    return values(english) == values(chinese)


def _by_model(phrases: Sequence[str], generator: Generator, cancel: CancelToken | None) -> dict[str, str]:
    if not phrases:
        return {}
    budget = sum(2 * len(p) + 8 for p in phrases) + 16
    reply = generator.chat(_messages(phrases), max_tokens=budget, temperature=0, cancel=cancel)
    out: dict[str, str] = {}
    for line in reply.splitlines():
        m = _NUMBERED.match(line)
        if not m or not 1 <= int(m.group(1)) <= len(phrases):
            continue
        phrase, english = phrases[int(m.group(1)) - 1], m.group(2).strip()
        english = english.rstrip(".") if not _SENTENCE_END.search(phrase) else english
        if english and cjk_ratio(english) == 0 and _same_figures(english, phrase):
            out[phrase] = english
    return out


def _unrepeated(before: str, english: str) -> str:
    """``english`` without its first words where the text before it ends with them ("the the
    Huanghe dragon", "the Beijing Beijing Subway")."""
    said, words = before.lower().split(), english.split()
    for k in (2, 1):
        if len(words) > k and said[-k:] == [w.lower() for w in words[:k]]:
            return " ".join(words[k:])
    return english


def _quoted_chinese(text: str) -> list[tuple[int, int]]:
    """The quoted Chinese sentences of an English answer (the passage's words a condition check
    appended: "The passage says: “…五百元，一线城市不超过六百元。”"), as the spans of their words."""
    return [(m.start(1), m.end(1)) for m in _QUOTE.finditer(text)
            if len(m.group(1)) >= _QUOTE_MIN and is_chinese(m.group(1))]


def has_chinese(text: str) -> bool:
    """Whether an English answer has Chinese runs or quoted Chinese sentences to put into English."""
    return bool(chinese_runs(text) or _quoted_chinese(text))


def _everyday(run: str) -> bool:
    """A run made only of everyday words (each among jieba's :data:`EVERYDAY_RANK` commonest: 一线城市,
    药物), which the small model translates well; anything else may be a name, which it renames
    ("白朗宁" became "William Shakespeare", "邵宸妃" "Queen Jia Zhen"), so it is romanised instead."""
    words = [w for w in segment(run) if is_cjk_char(w[0])]
    return bool(words) and all((chinese_rank(w) or EVERYDAY_RANK) < EVERYDAY_RANK for w in words)


def romanised(run: str, *, by_word: bool = False) -> str:
    """A run in pinyin, a capitalised word per name, figures kept apart ("Yuehan Bailangning");
    ``by_word``: a capitalised word per word of it ("Jiangxi Nanchang" for 江西南昌)."""
    try:
        from pypinyin import lazy_pinyin
    except ImportError:  # pragma: no cover - a dependency; without it the run stays as written
        return run
    parts = re.findall(rf"[{_CJK}]+|[^{_CJK}·・]+", run)  # a name's middle dot parts its names
    if by_word:
        parts = [w for p in parts for w in (segment(p) if is_cjk_char(p[0]) else [p])]
    return " ".join("".join(lazy_pinyin(p)).capitalize() if is_cjk_char(p[0]) else p.strip()
                    for p in parts if p.strip())


def _misspelled(english: str, run: str) -> bool:
    """The model's English writes a word of ``run`` as another name's pinyin: a capitalised word
    that begins with that word's first syllable (of three letters or more) without spelling it
    ("Jiangsu Province, Jiangnan" for 江西南昌; "Zhejiang" for 浙江省 spells it)."""
    from pypinyin import lazy_pinyin

    written = [w.lower() for w in re.findall(r"\b[A-Z][a-z]+", english)]
    for word in segment(run):
        if not is_cjk_char(word[0]):
            continue
        syllables = lazy_pinyin(word)
        spelled = "".join(syllables)
        if len(syllables[0]) >= _FIRST_SYLLABLE and any(
                w.startswith(syllables[0]) and not (spelled.startswith(w) or w.startswith(spelled)) for w in written):
            return True
    return False


def in_one_script(text: str, generator: Generator | None, *, cancel: CancelToken | None = None) -> str:
    """``text`` (an English answer) with each Chinese run put into English, its own words kept in
    brackets after it, and each quoted Chinese sentence followed by its English in brackets;
    unchanged when it has neither, or when none could be put into English."""
    own = _KEPT.sub(" ", text)  # the answer's own words, without what it quotes
    if reads_as_chinese(own) and len(_CJK_CHAR.findall(own)) >= _CHINESE_SENTENCE:
        return text  # an answer written in Chinese: said so by the check's note, not cut into pieces
    spans = chinese_runs(text)[:MAX_RUNS]
    quoted = _quoted_chinese(text)
    if not spans and not quoted:
        return text
    runs, sentences = [text[s:e] for s, e in spans], [text[s:e] for s, e in quoted]
    english = {r: e for r in runs if (e := by_rule(r)) is not None}
    english |= {r: roman for r in runs if r not in english and not _everyday(r) and (roman := romanised(r)) != r}
    rest = list(dict.fromkeys([*(r for r in runs if r not in english), *sentences]))
    if rest and generator is not None:
        got = _by_model(rest, generator, cancel)
        # a name the model turned into another name's pinyin ("Jiangsu" for 江西) goes in pinyin
        english |= {r: romanised(r, by_word=True) if r in runs and _misspelled(e, r) else e for r, e in got.items()}
    edits: list[tuple[int, int, str]] = []
    for (s, e), run in zip(spans, runs, strict=True):
        if run in english:
            before = text[:s]
            space = "" if not before or before[-1] in " (“\"·・" else " "
            after = text[e:e + 1]
            tail = "" if not after or after in " .,;:!?)]”\"" else " "
            edits.append((s, e, f"{space}{_unrepeated(before, english[run])} ({run}){tail}"))
    for (_, e), sentence in zip(quoted, sentences, strict=True):
        if sentence in english:  # after the closing quote
            edits.append((e + 1, e + 1, ENGLISH_NOTE.format(english=english[sentence])))
    out, last = [], 0
    for s, e, new in sorted(edits):
        out.append(text[last:s] + new)
        last = e
    out.append(text[last:])
    return "".join(out)
