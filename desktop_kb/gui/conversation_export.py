"""A conversation, or one answer, as Markdown with its sources: file, pages, heading, and the
sentence of the passage that supports it (the quote, else the evidence the check aligned).

No Qt here: the chat copies the text to the clipboard or writes it to a file.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable

from ..types import Citation
from .chat_render import citation_label
from .conversations import Conversation, Turn
from .i18n import tr

__all__ = ["answer_markdown", "conversation_markdown", "supporting_text"]

# (kb, doc_id) -> the document's converted Markdown, which citation offsets point into
DocumentText = Callable[[str, str], str]


def supporting_text(c: Citation, document_text: DocumentText | None) -> str:
    """The passage's own words behind citation ``c`` ("" when they cannot be read)."""
    if c.quote:
        return c.quote
    if document_text is None or not c.evidence:
        return ""
    try:
        text = document_text(c.kb, c.doc_id)
    except Exception:  # a removed document or a closed base: the export goes on without the quote
        return ""
    return " ".join(" ".join(text[a:b].split()) for a, b in c.evidence if 0 <= a < b <= len(text))


def _read_once(document_text: DocumentText | None) -> DocumentText | None:
    """``document_text`` reading each document once for one export (answers cite the same files)."""
    if document_text is None:
        return None
    read: dict[tuple[str, str], str] = {}

    def text(kb: str, doc_id: str) -> str:
        if (kb, doc_id) not in read:
            read[kb, doc_id] = document_text(kb, doc_id)
        return read[kb, doc_id]

    return text


def _sources(turn: Turn, document_text: DocumentText | None) -> list[str]:
    lines = []
    for c in sorted(turn.citations, key=lambda c: c.n):
        quote = supporting_text(c, document_text)
        lines.append(f"[{c.n}] {citation_label(c)}" + (f" — “{quote}”" if quote else ""))
    return lines


def answer_markdown(turn: Turn, document_text: DocumentText | None = None) -> str:
    """One answer with its sources under it (what "Copy" puts on the clipboard)."""
    body = turn.answer.strip() if turn.status in ("answered", "refused", "clarify") else ""
    if not body:
        body = tr("(no answer: {status})", status=turn.status)
    sources = _sources(turn, _read_once(document_text))
    return body + ("\n\n" + tr("Sources") + ":\n" + "\n".join(f"- {s}" for s in sources) if sources else "")


def conversation_markdown(conv: Conversation, document_text: DocumentText | None = None) -> str:
    """The whole conversation: a title, then each question and its answer with sources."""
    when = _dt.datetime.fromtimestamp(conv.created_at).strftime("%Y-%m-%d %H:%M") if conv.created_at else ""
    out = [f"# {conv.title or tr('Conversation')}", "",
           tr("Knowledge bases: {kbs}", kbs=", ".join(conv.kbs)) + (f" · {when}" if when else ""), ""]
    document_text = _read_once(document_text)
    for turn in conv.turns:
        out += [f"## {turn.question.strip()}", "", answer_markdown(turn, document_text), ""]
    return "\n".join(out).rstrip() + "\n"
