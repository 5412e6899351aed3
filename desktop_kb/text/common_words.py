"""The commonest words of English and of Chinese, as :func:`~desktop_kb.text.tokenize.tokenize`
gives them.

A word that few documents of a small knowledge base contain is rare *there*, but "anything",
"assumed" or "capable" (想, 一段, 样子) are still no entity a question asks about: a paraphrased
question uses them where the passage says "if a problem can be solved". The English list is
wordninja's (a dependency, shipped with the app): English words ordered by frequency in a large web
corpus; the first :data:`COMMON_RANK` of them count as common. The Chinese list is jieba's own
dictionary (shipped too), by its word frequencies; the first :data:`COMMON_RANK_ZH` count.
"""

from __future__ import annotations

import gzip
import importlib.util
from functools import cache
from pathlib import Path

from .tokenize import tokenize

__all__ = ["COMMON_RANK", "COMMON_RANK_ZH", "chinese_rank", "common_chinese", "common_english"]

COMMON_RANK = 10_000
# fewer than English: the 5,000th word is 称呼 / 官职's neighbourhood, beyond it come the content
# words a question asks about (演化, 体长); measured on held-out `eval answers` (docs/history/meaning-check.md)
COMMON_RANK_ZH = 5_000


@cache
def common_english(limit: int = COMMON_RANK) -> frozenset[str]:
    """The tokens (stemmed) of the ``limit`` commonest English words; empty when the list is
    missing (the checks then treat every word by the knowledge base's statistics alone)."""
    spec = importlib.util.find_spec("wordninja")
    if spec is None or spec.origin is None:
        return frozenset()
    path = Path(spec.origin).parent / "wordninja" / "wordninja_words.txt.gz"
    try:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            words = fh.read().split()[:limit]
    except (OSError, EOFError, UnicodeDecodeError):
        return frozenset()
    return frozenset(tokenize(" ".join(words)))  # stemmed once per process (~0.5–1.5 s)


@cache
def _chinese_ranks() -> dict[str, int]:
    """jieba's dictionary words by their rank in its frequencies (0 the commonest); empty when the
    dictionary is missing."""
    spec = importlib.util.find_spec("jieba")
    if spec is None or spec.origin is None:
        return {}
    try:
        with (Path(spec.origin).parent / "dict.txt").open(encoding="utf-8") as fh:
            rows = [line.split() for line in fh]
    except (OSError, UnicodeDecodeError):
        return {}
    counted = sorted(((r[0], int(r[1])) for r in rows if len(r) >= 2 and r[1].isdigit()), key=lambda r: -r[1])
    return {w: i for i, (w, _) in enumerate(counted)}


def chinese_rank(word: str) -> int | None:
    """A Chinese word's rank in jieba's dictionary by frequency; None when the dictionary lacks it
    (a name the segmenter guessed: 线蚓, 潘淑)."""
    return _chinese_ranks().get(word)


@cache
def common_chinese(limit: int = COMMON_RANK_ZH) -> frozenset[str]:
    """The ``limit`` commonest Chinese words of jieba's dictionary (by its frequencies); empty
    when the dictionary is missing."""
    return frozenset(w for w, i in _chinese_ranks().items() if i < limit)
