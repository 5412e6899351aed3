"""Answer normalisation for "the answer contains a gold answer".

English (SQuAD convention): lower-case, drop punctuation and the articles a/an/the, collapse
whitespace; containment respects word boundaries. Chinese (when the answer or the gold has CJK
characters): drop
whitespace and punctuation and compare substrings (CMRC is scored by characters). Both start with
NFKC so full-width letters, digits and punctuation compare equal to their ASCII forms.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from ..text.tokenize import is_cjk_char

__all__ = ["contains_answer", "has_cjk", "normalize_cjk", "normalize_en"]

_ARTICLES = re.compile(r"\b(a|an|the)\b")


def has_cjk(text: str) -> bool:
    return any(is_cjk_char(ch) for ch in text)


def _is_punct(ch: str) -> bool:
    cat = unicodedata.category(ch)
    return cat.startswith("P") or cat.startswith("S")


def normalize_en(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(" " if _is_punct(ch) else ch for ch in text)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def normalize_cjk(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(ch for ch in text if not ch.isspace() and not _is_punct(ch))


def contains_answer(prediction: str, golds: Iterable[str]) -> bool:
    """True when the normalised prediction contains any normalised gold answer (by characters when
    either side has CJK text: Chinese has no word boundaries to respect)."""
    cjk_prediction = has_cjk(prediction)
    for gold in golds:
        if cjk_prediction or has_cjk(gold):
            g = normalize_cjk(gold)
            if g and g in normalize_cjk(prediction):
                return True
        else:
            g = normalize_en(gold)
            if g and f" {g} " in f" {normalize_en(prediction)} ":
                return True
    return False
