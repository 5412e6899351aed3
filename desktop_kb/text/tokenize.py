"""Lexical tokenisation for BM25: Chinese segmentation + Latin stemming + stop words.

Chinese runs are segmented with rjieba (falling back to jieba) in search mode, which emits both
long words and their sub-words (中华人民共和国 → 中华, 人民, 共和国, …), so a two-character query
word matches inside a longer run. Latin words are lower-cased and Snowball-stemmed.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache

__all__ = ["CHINESE_SHARE", "cjk_ratio", "is_chinese", "is_cjk_char", "language_of", "lone_surrogate", "reads_as_chinese",
           "segment", "token_id", "tokenize"]

# A compact English list (function words only): large lists drop content words such as
# "research", "system" or "information", which hurts retrieval.
_EN_STOP = frozenset(
    """a an and are as at be been being but by can could did do does doing for from had has have
    having he her hers him his how i if in into is it its itself me my no nor not of on or our ours
    she should so such than that the their theirs them then there these they this those through to
    too very was we were what when where which while who whom why will with would you your yours
    about above after again against all am any because before below between both down during each
    few further here just more most off once only other over own same some under until up s t don
    also may might must shall""".split()
)

_CJK_RANGES = (
    (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2FA1F),  # Han
    (0x3040, 0x30FF),  # kana
    (0xAC00, 0xD7AF),  # hangul
)
_WORD = re.compile(r"[^\W_]+(?:[.\-+][^\W_]+)*", re.UNICODE)


def is_cjk_char(ch: str) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _CJK_RANGES)


_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds half of a UTF-16 pair (JSON can carry one): not text, which no store
    or tokenizer can encode."""
    return _SURROGATE.search(text) is not None


def reads_as_chinese(text: str) -> bool:
    """Whether a sentence is Chinese: mostly CJK letters, or a Chinese sentence carrying Latin
    names ("发票在采购制度.md、travel-policy.md和it-faq.txt中提到": a quarter of its letters CJK, but
    eight or more of them). An English sentence quoting a short Chinese name stays English."""
    ratio = cjk_ratio(text)
    return ratio > 0.5 or (ratio > 0.25 and sum(map(is_cjk_char, text)) >= 8)


CHINESE_SHARE = 0.3  # of its letters CJK: a question, answer or passage is read as Chinese above it


def is_chinese(text: str) -> bool:
    """Whether a question, answer or passage is Chinese for the pipeline's language choices (more
    than :data:`CHINESE_SHARE` of its letters CJK); :func:`reads_as_chinese` judges a sentence."""
    return cjk_ratio(text) > CHINESE_SHARE


def language_of(text: str) -> str:
    """"zh" for a Chinese text (:func:`is_chinese`), else "en"."""
    return "zh" if is_chinese(text) else "en"


def cjk_ratio(text: str) -> float:
    """Share of CJK characters among the letters of ``text`` (0.0 when it has no letters)."""
    letters = cjk = 0
    for ch in text:
        if ch.isalpha():
            letters += 1
            if is_cjk_char(ch):
                cjk += 1
    return cjk / letters if letters else 0.0


@lru_cache(maxsize=1)
def _segmenter() -> Callable[[str], list[str]]:
    try:
        import rjieba

        return rjieba.cut_for_search
    except ImportError:  # pragma: no cover - depends on the platform's wheels
        import logging

        import jieba

        jieba.setLogLevel(logging.WARNING)
        return lambda text: list(jieba.cut_for_search(text))


@lru_cache(maxsize=1)
def _words() -> Callable[[str], list[str]]:
    try:
        import rjieba

        return rjieba.cut
    except ImportError:  # pragma: no cover - depends on the platform's wheels
        import jieba

        return lambda text: list(jieba.cut(text))


def segment(text: str) -> list[str]:
    """A Chinese run cut into words, each once and in order (no sub-words, unlike
    :func:`tokenize`): 线蚓鳗的体长 → 线蚓, 鳗, 的, 体长."""
    return [w for w in _words()(text) if w.strip()]


@lru_cache(maxsize=1)
def _zh_stop() -> frozenset[str]:
    try:
        import stopwordsiso

        return frozenset(stopwordsiso.stopwords("zh"))
    except ImportError:  # pragma: no cover
        return frozenset("的 了 是 在 和 与 及 或 也 都 就 而 之 其 这 那 我们 你们 他们".split())


@lru_cache(maxsize=1)
def _stemmer() -> Callable[[str], str]:
    import snowballstemmer

    stem = snowballstemmer.stemmer("english")
    return stem.stemWord


@lru_cache(maxsize=50_000)
def _latin(token: str) -> str | None:
    if token in _EN_STOP:
        return None
    if token.isascii() and token.isalpha() and len(token) > 2:
        return _stemmer()(token)
    return token


def tokenize(text: str) -> list[str]:
    """Tokens for BM25 (documents and queries alike), in text order, duplicates kept."""
    text = unicodedata.normalize("NFKC", text).lower()
    tokens: list[str] = []
    zh_stop = _zh_stop()
    for piece in _segmenter()(text):
        piece = piece.strip()
        if not piece:
            continue
        if is_cjk_char(piece[0]):
            if piece not in zh_stop and any(is_cjk_char(c) for c in piece):
                tokens.append(piece)
            continue
        # Non-CJK pieces: keep word-like runs (llama.cpp, v2.1.0, bge-m3); split the rest.
        for m in _WORD.finditer(piece):
            word = m.group(0)
            if any(is_cjk_char(c) for c in word):
                tokens.extend(w for w in _segmenter()(word) if w.strip() and w not in zh_stop)
                continue
            normal = _latin(word)
            if normal:
                tokens.append(normal)
    return tokens


@lru_cache(maxsize=200_000)
def token_id(token: str) -> int:
    """A stable 31-bit id for a token (same on every machine and run)."""
    digest = hashlib.blake2b(token.encode("utf-8"), digest_size=4).digest()
    return int.from_bytes(digest, "little") & 0x7FFFFFFF
