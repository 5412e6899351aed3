"""Chinese names an English question spells in pinyin, found in the passages that hold them.

The 1.5B model translates a romanised name by guessing: "Where was Pan Shu from?" became
"潘书是从哪里来的？" (the passage: 潘淑), "the mathematician Zeng Jiong" became 陈景润 (曾炯). The
judge then reads a question about someone the passage does not name and refuses a right answer.
A name written in pinyin can be read back exactly: :func:`name_glossary` finds, in the passages'
Chinese, the characters whose readings spell each capitalised word run of the question ("Zeng
Jiong" → 曾炯, "Kaifeng" → 开封), tones and spaces aside, every reading of a character allowed
(曾 is céng and zēng). A translation is then asked to write those names so.

Only what a passage holds is read back, at least two characters for at least two syllables; an
English word that happens to spell pinyin ("Long", "Song") stays one syllable and is not read.
Names spelled otherwise (Wade–Giles "Kuo Chih-yuan", Cantonese "Leung") are not found.

:func:`pinyin_names` tells which capitalised runs are names in pinyin at all, for the checks that
ask a passage to write them (``verify/support.py``, ``verify/subject.py``): two or more syllables,
no common English word (389 of SQuAD's 3,000 commonest capitalised words spell pinyin: China,
Canada, Palace). A rarer foreign name can spell pinyin too (the Japanese "Tanaka", "Yamada"); over
Chinese passages that write it 田中 it is then not found, and the answer is refused.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from .common_words import common_english
from .tokenize import is_cjk_char, tokenize

__all__ = ["PINYIN_COMMON_RANK", "is_pinyin_name", "name_glossary", "name_runs", "pinyin_names", "readings",
           "spelled_in_pinyin"]

PINYIN_COMMON_RANK = 30_000  # English words this common are English even when they spell pinyin (China, Canada)

# capitalised words in a row; a hyphen's second part may be lower-case (Jian-ye, Chih-yuan)
_CAPITALISED = re.compile(r"[A-Z][a-z]+(?:[ '][A-Z][a-z]+|-[A-Za-z][a-z]*)*")
_MAX_CHARS = 4  # a name of at most four characters (姓 + 名, 复姓 + 名)


@lru_cache(maxsize=8192)
def readings(char: str) -> tuple[str, ...]:
    """Every toneless pinyin reading of one character (empty for a character pypinyin lacks)."""
    from pypinyin import Style, pinyin

    got = pinyin(char, style=Style.NORMAL, heteronym=True, errors="ignore")
    return tuple(dict.fromkeys(r.replace("ü", "v") for r in got[0])) if got else ()


def name_runs(question: str) -> list[str]:
    """Each run of capitalised words of ``question`` and each of its word sub-runs, longest first
    ("Zeng Jiong", "Zeng", "Jiong")."""
    out: list[str] = []
    for m in _CAPITALISED.finditer(question):
        words = re.split(r"(?<=[a-z])[- ']", m.group(0))
        for size in range(len(words), 0, -1):
            for i in range(len(words) - size + 1):
                out.append(" ".join(words[i: i + size]))
    return list(dict.fromkeys(w for w in out if len(_spelling(w)) >= 4))


def _spelling(run: str) -> str:
    return re.sub(r"[^a-z]", "", run.lower())


def _spelled_from(text: str, start: int, target: str) -> list[int]:
    """The ends of the character runs from ``start`` whose readings spell ``target`` exactly."""
    ends: list[int] = []
    stack = [(start, 0)]
    while stack:
        i, done = stack.pop()
        if done == len(target):
            if i - start >= 2:
                ends.append(i)
            continue
        if i >= len(text) or i - start >= _MAX_CHARS or not is_cjk_char(text[i]):
            continue
        stack.extend((i + 1, done + len(r)) for r in readings(text[i]) if r and target.startswith(r, done))
    return ends


def name_glossary(question: str, texts: Sequence[str]) -> dict[str, str]:
    """{name as the question writes it: the Chinese the passages write it with} for each capitalised
    word run that the passages spell one way only (the commonest spelling when several characters
    read alike, none when it is a tie); a longer run's words are not looked up again."""
    glossary: dict[str, str] = {}
    for run in name_runs(question):
        if any(run in longer for longer in glossary):
            continue
        target = _spelling(run)
        found: Counter[str] = Counter()
        for text in texts:
            for start, ch in enumerate(text):
                if is_cjk_char(ch) and any(target.startswith(r) for r in readings(ch) if r):
                    found.update(text[start:end] for end in _spelled_from(text, start, target))
        top = found.most_common(2)
        if top and (len(top) == 1 or top[0][1] > top[1][1]):
            glossary[run] = top[0][0]
    return glossary


@lru_cache(maxsize=1)
def _syllables() -> frozenset[str]:
    """Every toneless pinyin syllable (about 420), read off the characters pypinyin knows."""
    return frozenset(r for code in range(0x4E00, 0x9FA6) for r in readings(chr(code)) if r)


def spelled_in_pinyin(word: str) -> bool:
    """Whether ``word`` is made of two or more pinyin syllables and nothing else ("Guizhou",
    "Nanchang"; not "Munich"). English words can be too ("China", "Canada"): callers leave out the
    common ones."""
    target = _spelling(word)
    syllables = _syllables()
    ends = {0: 0}  # position -> the fewest syllables that reach it
    for i in range(len(target)):
        if i not in ends:
            continue
        for j in range(i + 1, min(len(target), i + 6) + 1):
            if target[i:j] in syllables:
                ends[j] = min(ends.get(j, 99), ends[i] + 1)
    return ends.get(len(target), 0) >= 2


def pinyin_names(text: str, runs: Sequence[str] | None = None) -> list[str]:
    """The names ``text`` spells in pinyin ("Pan Shu", "Anzhenmen"): the longest capitalised runs
    (or the given ``runs``) made of two or more pinyin syllables that are not common English, by
    wordninja's :data:`PINYIN_COMMON_RANK` commonest words (China, Canada, Palace spell pinyin too:
    389 of SQuAD's 3,000 commonest capitalised words do; see :func:`is_pinyin_name`)."""
    out: list[str] = []
    for run in name_runs(text) if runs is None else runs:
        if not any(run in longer for longer in out) and is_pinyin_name(run):
            out.append(run)
    return out


def is_pinyin_name(run: str) -> bool:
    """Two or more pinyin syllables that are not common English: not one of wordninja's
    :data:`PINYIN_COMMON_RANK` commonest words ("China", "Tanaka"), nor words all among its
    :data:`~.common_words.COMMON_RANK` commonest ("Hong Kong"); a given name is often a word of
    the web too ("Pan Shu": shu is its 10,671st, "Sun Quan"). See :func:`pinyin_names`."""
    if not spelled_in_pinyin(run) or set(tokenize(_spelling(run))) <= common_english(PINYIN_COMMON_RANK):
        return False
    words = run.split()
    return len(words) == 1 or not all(set(tokenize(word)) <= common_english() for word in words)
