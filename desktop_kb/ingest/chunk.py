"""Chunking: split Markdown by its heading tree, then a sliding window inside long sections.

Each chunk's ``text`` is exactly ``markdown[start:end]`` so a viewer can highlight it; the heading
path is carried separately (and prepended only for embedding, see :func:`embed_text`).
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

from ..settings import ChunkSettings
from ..types import Chunk, Page

__all__ = ["Heading", "chunk_document", "embed_text", "headings", "sections"]

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_NAMESPACE = uuid.UUID("6f1c7a52-3d0e-4c55-9a0b-2b8e1b7d9c41")
# Preferred cut points, best first: paragraph, line, sentence end (CJK and Latin), clause, space.
_CUTS = (
    re.compile(r"\n[ \t]*\n"),
    re.compile(r"\n"),
    re.compile(r"(?<=[。！？；!?])|(?<=[.;:])(?=\s)"),
    re.compile(r"(?<=[，、,])"),
    re.compile(r"\s"),
)


@dataclass(frozen=True)
class Section:
    heading_path: tuple[str, ...]
    start: int  # body start (after the heading line)
    end: int


@dataclass(frozen=True)
class Heading:
    level: int  # 1–6
    title: str
    start: int  # the heading line's offset
    body_start: int  # just after the heading line


def headings(markdown: str) -> list[Heading]:
    """The ATX headings of ``markdown`` in order (none inside code fences)."""
    out: list[Heading] = []
    pos = 0
    in_fence = False
    for line in markdown.splitlines(keepends=True):
        stripped = line.rstrip("\r\n")
        if _FENCE.match(stripped):
            in_fence = not in_fence
        m = None if in_fence else _HEADING.match(stripped)
        if m:
            out.append(Heading(len(m.group(1)), _clean_title(m.group(2)), pos, pos + len(line)))
        pos += len(line)
    return out


def sections(markdown: str) -> list[Section]:
    """Body spans of the heading tree (text before the first heading has an empty path)."""
    out: list[Section] = []
    path: list[tuple[int, str]] = []
    body_start = 0
    for h in headings(markdown):
        out.append(Section(tuple(t for _, t in path), body_start, h.start))
        while path and path[-1][0] >= h.level:
            path.pop()
        path.append((h.level, h.title))
        body_start = h.body_start
    out.append(Section(tuple(t for _, t in path), body_start, len(markdown)))
    return [s for s in out if markdown[s.start:s.end].strip()]


def _clean_title(title: str) -> str:
    title = re.sub(r"[*_`]+", "", title).strip()
    return title[:200]


def _best_cut(text: str, lo: int, hi: int) -> int:
    """A cut position in (lo, hi], preferring the strongest boundary nearest to hi."""
    window = text[lo:hi]
    for pattern in _CUTS:
        positions = [m.end() for m in pattern.finditer(window)]
        positions = [p for p in positions if p > 0]
        if positions:
            return lo + positions[-1]
    return hi


def _snap_forward(text: str, lo: int, hi: int) -> int:
    """The first boundary (line, sentence, clause or space) in text[lo:hi], else lo."""
    for pattern in _CUTS[1:]:
        m = pattern.search(text, lo, hi)
        if m is not None and m.end() < hi:
            return m.end()
    return lo


def _windows(text: str, start: int, end: int, size: int, overlap: int) -> Iterator[tuple[int, int]]:
    """Windows of at most ``size`` chars over text[start:end], overlapping by about ``overlap``."""
    pos = start
    while end - pos > size:
        # cut in the last 40% of the window so chunks stay close to ``size``
        cut = _best_cut(text, pos + int(size * 0.6), pos + size)
        yield pos, cut
        nxt = max(cut - overlap, pos + 1)
        pos = _snap_forward(text, nxt, min(cut, nxt + overlap // 2)) if overlap else cut
    yield pos, end


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def chunk_id(path: str, doc_id: str, index: int, text: str) -> str:
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()
    return str(uuid.uuid5(_NAMESPACE, f"{path}\x00{doc_id}\x00{index}\x00{digest}"))


def chunk_document(
    markdown: str, *, doc_id: str, path: str, pages: tuple[Page, ...] = (), settings: ChunkSettings | None = None
) -> list[Chunk]:
    settings = settings or ChunkSettings()
    chunks: list[Chunk] = []
    for sec in sections(markdown):
        for lo, hi in _windows(markdown, sec.start, sec.end, settings.size, settings.overlap):
            lo, hi = _trim(markdown, lo, hi)
            if hi - lo <= 0:
                continue
            text = markdown[lo:hi]
            page_numbers = tuple(p.number for p in pages if p.start < hi and p.end > lo)
            chunks.append(Chunk(
                chunk_id=chunk_id(path, doc_id, len(chunks), text), doc_id=doc_id, path=path,
                index=len(chunks), text=text, heading_path=sec.heading_path, start=lo, end=hi,
                pages=page_numbers,
            ))
    return chunks


def embed_text(chunk: Chunk, title: str = "") -> str:
    """What the embedders see: the heading path (or the title) as context, then the text."""
    context = " › ".join(chunk.heading_path) or title
    return f"{context}\n{chunk.text}" if context else chunk.text
