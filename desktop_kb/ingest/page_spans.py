"""The page spans of a document's Markdown, kept beside it (``<doc_id>.pages.json``), so that
``kb repair`` can chunk the stored Markdown again with its page numbers when the index is lost."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from ..diskspace import write_text_atomic
from ..types import Page

__all__ = ["load_page_spans", "save_page_spans"]


def save_page_spans(path: Path, pages: Sequence[Page]) -> None:
    if not pages:
        path.unlink(missing_ok=True)
        return
    write_text_atomic(path, json.dumps([[p.number, p.start, p.end] for p in pages], separators=(",", ":")))


def load_page_spans(path: Path) -> tuple[Page, ...]:
    """The spans written by :func:`save_page_spans`; none when absent or unreadable."""
    try:
        return tuple(Page(int(n), int(s), int(e)) for n, s, e in json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return ()
