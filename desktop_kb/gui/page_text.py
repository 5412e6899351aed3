"""Text matching for the page view: finding a passage's lines in a PDF page's own text."""

from __future__ import annotations

import re

__all__ = ["find_on_page", "stripped_with_map", "utf16_offset", "words_of"]

_IGNORED = re.compile(r"[\s#*_|>`]")


def utf16_offset(text: str, index: int) -> int:
    """Qt counts positions in UTF-16 code units; Python in code points."""
    index = max(0, min(index, len(text)))
    return index + sum(1 for ch in text[:index] if ord(ch) > 0xFFFF)


def stripped_with_map(text: str) -> tuple[str, list[int]]:
    """``text`` without whitespace and Markdown marks, and each kept char's index in ``text``."""
    chars, where = [], []
    for i, ch in enumerate(text):
        if not _IGNORED.match(ch):
            chars.append(ch)
            where.append(i)
    return "".join(chars), where


def find_on_page(page_text: str, needle: str, *, prefix: bool = False) -> tuple[int, int] | None:
    """(start, length) of ``needle`` in ``page_text`` ignoring whitespace and Markdown marks (and,
    with ``prefix``, of its first 40 significant chars when the whole does not match), or None."""
    hay, where = stripped_with_map(page_text)
    want, _ = stripped_with_map(needle)
    for probe in (want, want[:40]) if prefix else (want,):
        if len(probe) < 4:
            continue
        i = hay.find(probe)
        if i >= 0:
            start, end = where[i], where[i + len(probe) - 1] + 1
            return start, end - start
    return None


def words_of(text: str) -> set[str]:
    """Lower-case words of 3+ letters/digits, and CJK character pairs (for page matching)."""
    text = text.lower()
    words = set(re.findall(r"[^\W\d_]{3,}|\d+%?", text))
    cjk = re.findall(r"[\u4e00-\u9fff]+", text)
    words.update(run[i : i + 2] for run in cjk for i in range(len(run) - 1))
    return words
