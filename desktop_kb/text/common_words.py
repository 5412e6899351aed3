"""The commonest words of English, as :func:`~desktop_kb.text.tokenize.tokenize` gives them.

A word that few documents of a small knowledge base contain is rare *there*, but "anything",
"assumed" or "capable" are still no entity a question asks about: a paraphrased question uses
them where the passage says "if a problem can be solved". The list is wordninja's (a dependency,
shipped with the app): English words ordered by frequency in a large web corpus; the first
:data:`COMMON_RANK` of them count as common.
"""

from __future__ import annotations

import gzip
import importlib.util
from functools import cache
from pathlib import Path

from .tokenize import tokenize

__all__ = ["COMMON_RANK", "common_english"]

COMMON_RANK = 10_000


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
