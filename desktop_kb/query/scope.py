"""Scope: is the question about a section, a whole document, or the library, rather than a fact?

Top-5 chunks answer a pointed question; "summarise chapter 3", "总结一下第三章" or "list the
obligations in this contract" need a section or a document in reading order, and "which of my
documents mention invoices" needs one passage per document. Ordinary questions pay nothing for
this: scope cues are cheap patterns, and only when one fires is the target looked up in the tables
of contents of the documents retrieval found (a section named by number or title, a document named
by title or file name, else the document the best passages come from).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..ingest.toc import TocNode, flatten
from ..text.numbers import zh_value
from ..types import Hit

__all__ = ["Scope", "library_passages", "resolve_scope", "scope_cue"]

_LIBRARY = re.compile(
    r"\bwhich (?:of (?:my|the|these) )?(?:documents|files|reports|papers|notes|pdfs)\b"
    r"|\bwhat(?: is|'s| do i have) in (?:this|my|the) (?:knowledge base|library|collection|documents)\b"
    r"|哪些(?:文档|文件|资料|报告)|哪(?:个|份|篇)(?:文档|文件|资料|报告)|(?:知识库|资料库|文档库)里有什么",
    re.IGNORECASE)
_SECTION = re.compile(
    r"\b(?:chapter|section|part|appendix|annex)\s+(\d+(?:\.\d+)*|[ivxlc]+\b|[a-z]\b)"
    r"|第\s*([0-9一二两三四五六七八九十百]+)\s*[章节部分篇条]", re.IGNORECASE)
_WHOLE = re.compile(
    r"\b(?:summari[sz]e|summary|overview|gist|tl;?dr|outline)\b|\b(?:list|enumerate)\s+(?:all\s+|every\s+|each\s+)?"
    r"(?:of\s+)?the\s+\w+|总结|概括|概述|摘要|归纳|梳理|列出(?:所有|全部)?", re.IGNORECASE)
_LEAD_NUMBER = re.compile(
    r"^\s*(?:(?:chapter|section|part|appendix|annex)\s+)?(\d+(?:\.\d+)*|[ivxlc]+\b|[a-z]\b)[.):]?"
    r"|^\s*(?:第\s*([0-9一二两三四五六七八九十百]+)\s*[章节部分篇条]|([一二两三四五六七八九十百]+)\s*、"
    r"|[（(]\s*([一二两三四五六七八九十百]+)\s*[)）])", re.IGNORECASE)  # "第三章", "三、付款", "（三）"
# a yes/no question ("Does the policy list …?", "是否需要…", "…吗？") is answered and judged as a
# pointed one, whatever else its wording says ("Summarise: do employees need …?")
_YES_NO = re.compile(
    r"^\W*(?:(?:summari[sz]e|summary|overview|briefly)\W+)?(?:do|does|did|is|are|was|were|can|could|may|must|"
    r"should|will|would|has|have|had)\b|是否|有没有|能否|可否|吗[？?。.！!\s]*$", re.IGNORECASE)
_ROMAN = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100}


@dataclass(frozen=True)
class Scope:
    kind: str  # "section" | "document" | "library"
    kb: str = ""
    doc_id: str = ""
    path: str = ""
    title: str = ""  # the section's title, or the document's
    chunk_ids: tuple[str, ...] = ()  # reading order

    def describe(self) -> str:
        name = Path(self.path).name
        if self.kind == "section":
            return f"section “{self.title}” of {name}"
        return f"the whole of {name}" if self.kind == "document" else "the library"


def scope_cue(question: str) -> str | None:
    """"library", "section" or "document" when the question's wording asks for one; else None (a
    yes/no question is a pointed one)."""
    if _YES_NO.search(question):
        return None
    if _LIBRARY.search(question):
        return "library"
    if _SECTION.search(question):
        return "section"
    if _WHOLE.search(question):
        return "document"
    return None


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _number(raw: str) -> str:
    """"3", "3.2", "iii" → "3", "3.2", "3"; "三" → "3"; a letter stays a letter."""
    raw = raw.strip().lower()
    if re.fullmatch(r"\d+(?:\.\d+)*", raw):
        return ".".join(str(int(p)) for p in raw.split("."))
    if re.fullmatch(r"[ivxlc]+", raw):
        values = [_ROMAN[c] for c in raw]
        return str(sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values)))
    value = zh_value(raw)
    return str(int(value)) if value is not None else raw


def _reference(question: str) -> str | None:
    m = _SECTION.search(question)
    return _number(m.group(1) or m.group(2)) if m else None


def _node_number(title: str) -> str | None:
    m = _LEAD_NUMBER.match(title)
    return _number(next(g for g in m.groups() if g)) if m else None


def _named(question: str, nodes: Sequence[TocNode]) -> TocNode | None:
    """The node whose title the question names (with or without its number, at least 4
    characters); the deepest such node, so "the Leave section of the handbook" is Leave."""
    q = _fold(question)

    def forms(title: str) -> set[str]:
        bare = _LEAD_NUMBER.sub("", title, count=1)
        return {f for f in (_fold(title), _fold(bare)) if len(f) >= 4}

    named = [n for n in nodes if any(f in q for f in forms(n.title))]
    return max(named, key=lambda n: (n.level, len(n.title))) if named else None


def _documents(hits: Sequence[Hit]) -> list[Hit]:
    """The best hit of each document, best document first."""
    seen: set[tuple[str, str]] = set()
    out = []
    for h in hits:
        key = (h.kb, h.chunk.doc_id)
        if key not in seen:
            seen.add(key)
            out.append(h)
    return out


def _doc_named(question: str, docs: Sequence[Hit], titles: Callable[[Hit], str]) -> Hit | None:
    q = _fold(question)
    for h in docs:
        for name in (Path(h.chunk.path).stem, titles(h)):
            if len(_fold(name)) >= 3 and _fold(name) in q:
                return h
    return None


def resolve_scope(
    question: str, cue: str, hits: Sequence[Hit], toc_of: Callable[[str, str], Sequence[TocNode]],
    title_of: Callable[[Hit], str] = lambda h: "",
) -> Scope | None:
    """The section or document ``cue`` points at, among the documents of ``hits``; ``None`` when
    nothing matches (the question is then answered as a pointed one)."""
    docs = _documents(hits)
    if not docs:
        return None
    if cue == "library":
        return Scope("library")
    named_doc = _doc_named(question, docs, title_of)
    order = [named_doc] + [d for d in docs if d is not named_doc] if named_doc else docs
    ref = _reference(question) if cue == "section" else None
    for doc in order[:5]:
        nodes = flatten(toc_of(doc.kb, doc.chunk.doc_id))
        node = None
        if ref is not None:
            node = next((n for n in nodes if _node_number(n.title) == ref), None)
        node = node or _named(question, nodes)
        if node is not None and node.chunk_ids:
            return Scope("section", doc.kb, doc.chunk.doc_id, doc.chunk.path, node.title, node.chunk_ids)
        if named_doc is not None and doc is named_doc and cue == "document":
            break
    if cue != "document":
        return None
    doc = order[0]
    nodes = toc_of(doc.kb, doc.chunk.doc_id)
    ids = tuple(dict.fromkeys(c for n in nodes for c in n.chunk_ids))
    return Scope("document", doc.kb, doc.chunk.doc_id, doc.chunk.path, title_of(doc) or Path(doc.chunk.path).stem,
                 ids) if ids else None


def library_passages(hits: Sequence[Hit], limit: int = 8) -> list[Hit]:
    """One passage per document (its best), for questions about which documents say something."""
    return _documents(hits)[:limit]
