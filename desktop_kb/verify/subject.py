"""The thing a question asks about, and whether the cited passages name it at all.

Asked "线蚓鳗的体长是多少？" over documents that no longer hold 线蚓鳗's article, the model read a
passage on another eel and answered "蟒鳗的体长可达42公分"; asked who made 《掌故王》, it answered
with the maker of another snack. The judge passed both (a passage does state a length, a maker),
and the key-term check could not see it: a word no document has is no rare word of the knowledge
base (:meth:`~desktop_kb.text.term_stats.TermStats.rare` leaves it out). The named subject of a
question — a title in 《》, or the name a Chinese question opens with — must stand in a passage
cited for it, or the answer is about something else.

The name is read from the question's first words up to its first common word, particle or
question word (线蚓鳗 from 线蚓鳗的体长是多少), and counts as one only when a word of it is rare or
unknown in jieba's dictionary: 出差住宿费用 opens a question with a policy's everyday words. A
passage names it when its text, headings or file name hold the name, or at least its first three
characters (长齿锯 of 长齿锯犁鳗). ``benchmarks/calibrate_subject.py`` on the 250 answerable CMRC
2018 dev questions outside the ``eval answers --limit 50`` sample: a name is read for 124, the rule
would stop 2 (0.8%) over their own article and 107 (42.8%) over any other; on 1,995 DRCD
(traditional) questions of ``../shared/train`` it stops none.

Only questions in simplified Chinese over passages in simplified Chinese are read this way: over
English or traditional passages the name would be spelled otherwise, and a traditional question's
everyday words are unknown to the (simplified) dictionary that tells a name from them.

An English question over Chinese passages names its subject in pinyin or not at all for this
check: "When did Anzhenmen station open?" over a base without 安贞门站's article was answered with
another station's date (the search's translation had made it 安德门站). Its names spelled in pinyin
(:func:`~desktop_kb.text.pinyin_names.pinyin_names`: two syllables or more, not common English)
must be written by a cited passage, read back through its characters' readings; names spelled
otherwise ("Kuo Chih-yuan", "St. Paul's Parish") are not read.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from ..text.common_words import chinese_rank, common_chinese
from ..text.pinyin_names import name_glossary, pinyin_names
from ..text.tokenize import is_chinese, segment
from .claim_terms import FILLER, QUESTION_WORDS

__all__ = ["absent_subject", "question_subjects"]

_TITLE = re.compile(r"《([^》]{2,40})》")
_LEAD = re.compile(r"^(?:请问|请你|请|麻烦|简述一下|简述|介绍一下|介绍|说说|讲讲|告诉我)+")
_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff·・]+")
# one-character words that end a name: particles, copulas, prepositions, adverbs
_BREAK = frozenset("的是有在于为被由和与曾又哪几最共所及从对把将到以当自因还也都已会能可要各")
# characters written one way in traditional Chinese and another in simplified, among the commonest
_TRADITIONAL = frozenset("這個來於為說時國會們後學發對與從經動長開業區間關機過種現實點體當產電無頭問還進歲東車門書")
_SIMPLIFIED = frozenset("这个来于为说时国会们后学发对与从经动长开业区间关机过种现实点体当产电无头问还进岁东车门书")
# more of them, for a short question: jieba's dictionary is simplified, so a traditional question's
# everyday words (什麼, 擁有) would read as names
_TRADITIONAL_MORE = _TRADITIONAL | frozenset(
    "麼擁別場須該臺灣歐記錄愛計讓贏網參戰結賽勝盤較決韓稱號處傳統線權歷應變寫讀聽見視覺親華語義論設術藝黨軍議員"
    "聯組織屬報紙數據總選舉鐵館醫藥銀錢貨價買賣費資財稅險證條規則協隊級類夠樣雙單達運輸環境護衛團隨態壓濟衝擊導"
    "題萬億幾將並給難辦燈熱氣溫風雲鳥魚馬龍龜鳳雞麥黃齊齒廣廠廳歡興舊蘭豐薩蘇羅維紀紅絲綠練細終絕續編繼績纖"
)
_MIN_PREFIX = 3
# a word rarer than this in jieba's dictionary (or not in it) makes the opening words a name:
# 靳云鹏, 牛肝菌 are beyond it; 出差, 住宿费, 差旅费 (a policy's own words) are not
NAME_RANK = 100_000


def _fold(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).lower().split())


def _leading_name(question: str) -> str:
    run = _RUN.match(_LEAD.sub("", question.strip()))
    if run is None:
        return ""
    common, words = common_chinese(), []
    for word in segment(run.group(0)):
        if word in common or word in QUESTION_WORDS or word in FILLER or word in _BREAK:
            break
        if words and word[0] in _BREAK:  # 退款|会退: a particle the segmenter glued to the next word
            break
        if len(word) == 3 and word[-1] in _BREAK and not words:  # 潘淑是: a name the segmenter glued on
            words = [word[:-1]]
            break
        words.append(word)
    name = "".join(words)
    if len(name) < 2 or not any((chinese_rank(w) or NAME_RANK) >= NAME_RANK for w in words):
        return ""  # no name: the question opens with everyday words (出差住宿费用)
    return name


def question_subjects(question: str) -> tuple[str, ...]:
    """What a Chinese question is about, by name: its titles in 《》, else the name it opens with
    (empty for an English question, or when it opens with no name)."""
    if not is_chinese(question) or any(ch in _TRADITIONAL_MORE for ch in question):
        return ()  # English, or traditional characters (read with a simplified dictionary)
    titles = tuple(t.strip() for t in _TITLE.findall(question) if t.strip())
    if titles:
        return titles
    name = _leading_name(question)
    return (name,) if name else ()


def _traditional(text: str) -> bool:
    """Written in traditional characters, by the commonest ones that differ from simplified."""
    trad = sum(ch in _TRADITIONAL for ch in text)
    return trad >= 3 and trad > 2 * sum(ch in _SIMPLIFIED for ch in text)


def _names(name: str, text: str) -> bool:
    """Whether a (folded) passage text holds the name, or at least its first three characters."""
    return _fold(name)[:_MIN_PREFIX] in text


def absent_subject(question: str, texts: Sequence[str]) -> str:
    """The question's named subject that none of ``texts`` (the cited passages, with their headings
    and file names) holds; empty when each is named, when the question names none, or when the
    passages are not Chinese in the question's script. An English question over Chinese passages:
    its first name spelled in pinyin when the passages write none of them (:func:`_unwritten`)."""
    if not is_chinese(question):
        return _unwritten(question, texts)
    subjects = question_subjects(question)
    if not subjects:
        return ""
    if not texts or any(not is_chinese(t) or _traditional(t) for t in texts):
        return ""  # a passage in another language or script may name it otherwise
    folded = [_fold(t) for t in texts]
    return next((s for s in subjects if not any(_names(s, t) for t in folded)), "")


def _unwritten(question: str, texts: Sequence[str]) -> str:
    """An English question's names spelled in pinyin ("When did Anzhenmen station open?") that
    Chinese passages write none of (their characters' readings spell none: 安德门 is Andemen): the
    first of them; empty when one is written, when the question spells none, or when a passage is
    not Chinese."""
    names = pinyin_names(question)
    if not names or not texts or not all(is_chinese(t) for t in texts):
        return ""
    return "" if any(name_glossary(name, texts) for name in names) else names[0]
