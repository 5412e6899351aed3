"""Tidy converted Markdown (stage 2 of ingestion) without breaking page spans.

What :func:`clean` does, outside fenced code blocks:

* characters: NFC, no-break and ideographic spaces → " ", zero-width and bidi marks and soft hyphens
  dropped (ZWJ/ZWNJ are kept: they matter in Persian, Indic scripts and emoji), control characters
  dropped except newline and tab, any line ending → "\\n". Full-width forms and CJK punctuation
  (。！？；，「」) are left alone.
* HTML comments removed; navigation runs (3 or more consecutive lines made mostly of links) removed;
  ``![alt](src)`` → alt when the alt text says something, else nothing; ``[text](url)`` → text.
* whitespace: runs of spaces/tabs inside a line → one space (leading indentation kept), trailing
  spaces stripped, 3+ newlines → one blank line, no blank lines at the start or end.

Inside fenced code blocks only trailing spaces are stripped. Headings stay as they are.

Pages: each page's text is cleaned on its own and the pages are joined again with a blank line, so
``markdown[p.start:p.end]`` is exactly the cleaned text of page ``p``. A page that becomes empty keeps
a zero-length span at the place where it was (it is not dropped, so page numbers stay complete).
Text between or around page spans (none for our converters) is cleaned and kept, outside any span.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata

from ..types import ConvertedDocument, Page

__all__ = ["clean", "clean_text"]

_SPACES = re.compile(r"[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]")
_INVISIBLE = re.compile(r"[\u00ad\u180e\u200b\u200e\u200f\u2060-\u2064\u206a-\u206f\ufeff]")
_CONTROLS = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")
_LINE_BREAKS = re.compile(r"\r\n?|[\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
# A link target: <anything>, or a URL with balanced one-level parentheses; then an optional title.
_TARGET = r"""\s*(?:<[^<>\n]*>|(?:[^()\s]|\([^()\s]*\))*)(?:\s+(?:"[^"]{0,500}"|'[^']{0,500}'|\([^()]{0,500}\)))?\s*"""
_IMAGE = re.compile(r"!\[([^\[\]]{0,1000})\]\(" + _TARGET + r"\)")
_LINK = re.compile(r"\[([^\[\]]{0,1000})\]\(" + _TARGET + r"\)")
_NOISE_ALT = re.compile(
    r"^(?:image|img|picture|pic|photo|graphic|figure|icon|logo|alt|null|none|undefined|see more)"
    r"[\s_\-]*\d*$|^[\w\-. ]+\.(?:png|jpe?g|gif|svg|webp|bmp|tiff?|emf|wmf|ico)$",
    re.IGNORECASE,
)
_ANCHOR_TEXT = frozenset({"", "¶", "#", "§", "🔗"})
_LIST_MARK = re.compile(r"^\s*(?:[-*+•·>]|\d+[.)])\s+")
_WORD_CHARS = re.compile(r"\w", re.UNICODE)
_INNER_SPACES = re.compile(r"[ \t]{2,}|\t")
_MANY_NEWLINES = re.compile(r"\n{3,}")
_NAV_MIN_LINES = 3


def clean(doc: ConvertedDocument) -> ConvertedDocument:
    """Cleaned copy of ``doc``; page spans are rebuilt to point into the cleaned text."""
    if not doc.pages:
        return dataclasses.replace(doc, markdown=clean_text(doc.markdown))
    text = doc.markdown
    segments: list[tuple[int | None, str]] = []  # (page number or None, raw text)
    pos = 0
    for page in sorted(doc.pages, key=lambda p: (p.start, p.end)):
        start = min(max(page.start, pos), len(text))  # overlapping/out-of-range spans are clamped
        end = min(max(page.end, start), len(text))
        if start > pos:
            segments.append((None, text[pos:start]))
        segments.append((page.number, text[start:end]))
        pos = end
    if pos < len(text):
        segments.append((None, text[pos:]))

    out: list[str] = []
    pages: list[Page] = []
    length = 0
    for number, raw in segments:
        cleaned = clean_text(raw)
        if cleaned and out:
            out.append("\n\n")
            length += 2
        if number is not None:
            pages.append(Page(number, length, length + len(cleaned)))
        if cleaned:
            out.append(cleaned)
            length += len(cleaned)
    pages.sort(key=lambda p: p.number)
    return dataclasses.replace(doc, markdown="".join(out), pages=tuple(pages))


def clean_text(text: str) -> str:
    """Clean one piece of Markdown (see the module docstring)."""
    text = _normalise_chars(text)
    out: list[str] = []
    prose: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if fence is None:
            if match:
                out.extend(_clean_prose(prose))
                prose = []
                fence = match.group(1)
                out.append(line.rstrip())
            else:
                prose.append(line)
        else:
            out.append(line.rstrip())
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                if not line.strip().strip(fence[0]):
                    fence = None
    out.extend(_clean_prose(prose))
    return _MANY_NEWLINES.sub("\n\n", "\n".join(out)).strip("\n")


def _normalise_chars(text: str) -> str:
    text = _LINE_BREAKS.sub("\n", text)
    text = unicodedata.normalize("NFC", text)
    text = _SPACES.sub(" ", text)
    text = _INVISIBLE.sub("", text)
    return _CONTROLS.sub("", text)


def _clean_prose(lines: list[str]) -> list[str]:
    if not lines:
        return []
    text = _HTML_COMMENT.sub("", "\n".join(lines))
    text = "\n".join(_drop_nav_runs(text.split("\n")))
    text = _IMAGE.sub(_image_replacement, text)
    text = _LINK.sub(_link_replacement, text)
    result = []
    for line in text.split("\n"):
        body = line.lstrip(" \t")
        indent = line[: len(line) - len(body)]
        result.append((indent + _INNER_SPACES.sub(" ", body)).rstrip() if body else "")
    return result


def _image_replacement(match: re.Match[str]) -> str:
    alt = " ".join(match.group(1).split())
    return "" if len(alt) < 2 or _NOISE_ALT.match(alt) else alt


def _link_replacement(match: re.Match[str]) -> str:
    label = match.group(1)
    return "" if label.strip() in _ANCHOR_TEXT else label


def _line_kind(line: str) -> str:
    """'nav' for a line made mostly of links, 'neutral' for blank/image-only lines, else 'text'."""
    stripped = line.strip()
    if not stripped:
        return "neutral"
    if stripped.startswith(("#", "|")):  # headings and table rows are never navigation
        return "text"
    without_images = _IMAGE.sub("", stripped)
    if not without_images.strip():
        return "neutral"
    links = list(_LINK.finditer(without_images))
    if not links:
        return "text"
    link_chars = sum(len(_WORD_CHARS.findall(m.group(1))) for m in links)
    residual = _LINK.sub(" ", _LIST_MARK.sub("", without_images))
    residual_chars = len(_WORD_CHARS.findall(residual))
    return "nav" if residual_chars <= max(3, link_chars // 2) else "text"


def _drop_nav_runs(lines: list[str]) -> list[str]:
    kinds = [_line_kind(line) for line in lines]
    keep = [True] * len(lines)
    i = 0
    while i < len(lines):
        if kinds[i] != "nav":
            i += 1
            continue
        j, last, count = i, i, 0
        while j < len(lines) and kinds[j] != "text":
            if kinds[j] == "nav":
                count, last = count + 1, j
            j += 1
        if count >= _NAV_MIN_LINES:
            for k in range(i, last + 1):
                keep[k] = False
        i = last + 1
    return [line for line, k in zip(lines, keep, strict=True) if k]
