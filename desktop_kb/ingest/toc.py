"""Table of contents per document, built at ingest without an LLM.

From the Markdown heading tree (Markdown, DOCX and HTML headings, PPTX slide titles, XLSX sheet
names all arrive as headings), or, for a PDF with an outline (bookmarks), from the outline
mapped onto its pages. Each node has its title, level, character span, page range, a token
estimate of its whole section (children included) and the ids of the chunks that hold it, in
reading order. Saved beside the document's Markdown (``<doc_id>.toc.json``); a document without
headings gets one node for the whole document.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..text.budget import estimate_tokens
from ..types import Chunk, Page
from .chunk import headings

__all__ = ["TocNode", "build_toc", "flatten", "format_toc", "load_toc", "save_toc", "toc_from_json", "toc_to_json"]

MAX_NODES = 2000  # a generated document with thousands of headings keeps the first ones


@dataclass(frozen=True)
class TocNode:
    title: str
    level: int  # 1 = top
    start: int  # character span in the document's Markdown (the heading line included)
    end: int
    pages: tuple[int, ...] = ()  # (first, last) page, empty when the format has no pages
    tokens: int = 0  # estimated LLM tokens of the whole section, children included
    chunk_ids: tuple[str, ...] = ()  # chunks overlapping the section, in reading order
    children: tuple[TocNode, ...] = field(default_factory=tuple)


def _marks(markdown: str, pages: Sequence[Page], outline: Sequence[tuple[int, str, int]]) -> list[tuple[int, str, int]]:
    """(level, title, offset) of each section start: the PDF outline when there is one, else the
    Markdown headings."""
    if outline and pages:
        at = {p.number: p.start for p in pages}
        marks = [(max(1, int(level)), " ".join(str(title).split())[:200], at[page])
                 for level, title, page in outline if page in at and str(title).strip()]
        if marks:
            return sorted(marks, key=lambda m: m[2])  # outlines are not always in page order
    return [(h.level, h.title, h.start) for h in headings(markdown)]


def build_toc(
    markdown: str, chunks: Sequence[Chunk], *, title: str = "", pages: Sequence[Page] = (),
    outline: Sequence[tuple[int, str, int]] = (),
) -> tuple[TocNode, ...]:
    """The document's table of contents (top-level nodes). ``outline`` is (level, title, page)."""
    marks = _marks(markdown, pages, outline)[:MAX_NODES]
    if not marks:
        return (_node(title or "Document", 1, 0, len(markdown), markdown, chunks, pages, ()),) if markdown.strip() else ()
    # text before the first heading is a section of its own when it says anything
    lead = markdown[:marks[0][2]].strip()
    flat: list[tuple[int, str, int, int]] = []
    for i, (level, name, start) in enumerate(marks):
        end = len(markdown)
        for later in marks[i + 1:]:
            if later[0] <= level:
                end = later[2]
                break
        flat.append((level, name, start, end))
    top = min(level for level, *_ in flat)

    def subtree(i: int) -> tuple[TocNode, int]:
        level, name, start, end = flat[i]
        kids: list[TocNode] = []
        j = i + 1
        while j < len(flat) and flat[j][2] < end and flat[j][0] > level:
            child, j = subtree(j)
            kids.append(child)
        return _node(name, level - top + 1, start, end, markdown, chunks, pages, tuple(kids)), j

    roots: list[TocNode] = []
    if lead:
        roots.append(_node(title or "Introduction", 1, 0, marks[0][2], markdown, chunks, pages, ()))
    i = 0
    while i < len(flat):
        node, i = subtree(i)
        roots.append(node)
    return tuple(roots)


def _node(name: str, level: int, start: int, end: int, markdown: str, chunks: Sequence[Chunk],
          pages: Sequence[Page], children: tuple[TocNode, ...]) -> TocNode:
    inside = [c for c in chunks if c.start < end and c.end > start]
    inside.sort(key=lambda c: (c.start, c.index))
    # pages from the page spans when known (a chunk can run over several short pages)
    page_numbers = sorted({p.number for p in pages if p.start < end and p.end > start} if pages
                          else {p for c in inside for p in c.pages})
    pages = (page_numbers[0], page_numbers[-1]) if page_numbers else ()
    return TocNode(name, level, start, end, pages, estimate_tokens(markdown[start:end]),
                   tuple(c.chunk_id for c in inside), children)


def flatten(nodes: Sequence[TocNode]) -> list[TocNode]:
    """Every node, depth first (reading order)."""
    out: list[TocNode] = []
    for n in nodes:
        out.append(n)
        out.extend(flatten(n.children))
    return out


def format_toc(nodes: Sequence[TocNode]) -> str:
    """Indented lines: title, pages, ~tokens, chunks."""
    lines = []
    for n in flatten(nodes):
        pages = "" if not n.pages else (f", p. {n.pages[0]}" if n.pages[0] == n.pages[1]
                                        else f", pp. {n.pages[0]}–{n.pages[1]}")
        lines.append(f"{'  ' * (n.level - 1)}{n.title}{pages} (~{n.tokens} tokens, {len(n.chunk_ids)} chunks)")
    return "\n".join(lines)


def toc_to_json(nodes: Sequence[TocNode]) -> list[dict[str, Any]]:
    return [{"title": n.title, "level": n.level, "start": n.start, "end": n.end, "pages": list(n.pages),
             "tokens": n.tokens, "chunk_ids": list(n.chunk_ids), "children": toc_to_json(n.children)}
            for n in nodes]


def toc_from_json(raw: Sequence[dict[str, Any]]) -> tuple[TocNode, ...]:
    return tuple(TocNode(str(d["title"]), int(d["level"]), int(d["start"]), int(d["end"]),
                         tuple(int(p) for p in d.get("pages") or ()), int(d.get("tokens", 0)),
                         tuple(str(c) for c in d.get("chunk_ids") or ()), toc_from_json(d.get("children") or ()))
                 for d in raw)


def save_toc(path: Path, nodes: Sequence[TocNode]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"version": 1, "nodes": toc_to_json(nodes)}, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


def load_toc(path: Path) -> tuple[TocNode, ...] | None:
    """The saved table of contents, or ``None`` when there is none (or it cannot be read)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return toc_from_json(raw["nodes"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
