"""The chat transcript as HTML: each turn's question, streamed Markdown answer with ``[n]``
footnote links, notes and sources (no widgets here; :mod:`desktop_kb.gui.chat` shows it)."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from pathlib import Path

from ..types import Citation
from .conversations import Turn
from .core_messages import localize
from .i18n import tr
from .markdown import cite_href, markdown_to_html

_DRAFT_BLOCK = re.compile(r"<(p|li|h\d)>")

__all__ = ["citation_label", "citing_sentence", "parse_action_href", "transcript_html", "turn_html", "turn_notes"]

_ACTION = re.compile(r"act:(copy|again|edit)#(\d+)")


def parse_action_href(href: str) -> tuple[str, int] | None:
    """("copy" | "again" | "edit", turn index) for a turn's action link, else None."""
    m = _ACTION.fullmatch(href)
    return (m.group(1), int(m.group(2))) if m else None


def _actions_html(index: int, turn: Turn, last: bool) -> str:
    """Under a finished turn: how long it took, Copy (with sources), Ask again (the last), Edit."""
    links = []
    if turn.status in ("answered", "refused", "clarify"):
        links.append((tr("Copy"), "copy"))
    if last:
        links.append((tr("Ask again"), "again"))
    links.append((tr("Edit question"), "edit"))
    shown = [html.escape(tr("{seconds} s", seconds=f"{turn.seconds:.0f}"))] if turn.seconds else []
    shown += [f'<a href="act:{a}#{index}" style="text-decoration:none;">{html.escape(t)}</a>' for t, a in links]
    return f'<p style="color:#777; font-size:small;">{" &nbsp;·&nbsp; ".join(shown)}</p>'


def citation_label(c: Citation) -> str:
    """``file.pdf · p. 3 · Heading › Sub`` (plain text)."""
    parts = [Path(c.path).name or c.path]
    if c.pages:
        parts.append(tr("p. {pages}", pages=str(c.pages[0]) if len(c.pages) == 1 else f"{c.pages[0]}–{c.pages[-1]}"))
    if c.heading_path:
        parts.append(" › ".join(c.heading_path))
    return " · ".join(parts)


def citing_sentence(answer: str, n: int) -> str:
    """The sentence of ``answer`` that carries the first ``[n]`` ("" if none)."""
    m = re.search(rf"\[(?:\d+\s*[,，]\s*)*{n}(?:\s*[,，]\s*\d+)*\]", answer)
    if m is None:
        return ""
    head = answer[: m.start()].rstrip()
    if head and head[-1] in ".!?。！？":  # "Claim. [1]": the mark follows the sentence's full stop
        head = head[:-1]
    start = max((head.rfind(p) for p in ".!?。！？\n"), default=-1) + 1
    return answer[start : m.end()].strip()


def turn_notes(turn: Turn) -> list[str]:
    """The lines shown in italics under an answer: the filter, why there is no answer, what was
    left uncited or removed, a failed reranker."""
    notes = [tr("Searched only: {filter}", filter=turn.filter)] if turn.filter else []
    if turn.status == "refused" and not turn.answer:
        # (a refusal's text is its one reason: nothing relevant found, none states it, or not supported)
        notes.append(tr("No answer: your documents do not seem to cover this question."))
    elif turn.status == "clarify":
        notes.append(tr("The question is ambiguous — please clarify or rephrase."))
    elif turn.status == "stopped":
        notes.append(tr("Stopped — not checked; the draft is not shown."))
    if turn.scope:
        notes.append(localize(f"Answered from {turn.scope}."))
    # (older files kept "Answered from …" among the notes, in English: shown in the UI's language)
    notes.extend(localize(n) for n in turn.notes if n and n not in turn.answer)
    if turn.uncited:
        notes.append(tr("Not backed by a cited passage: {sentences}",
                        sentences=" ".join(f"“{u}”" for u in turn.uncited)))
    if turn.uncertain:
        notes.append(tr("Uncertain — the cited passage may not state this; click its [n] to check: {sentences}",
                        sentences=" ".join(f"“{u}”" for u in turn.uncertain)))
    if turn.removed:
        notes.append(tr("Removed, because no cited passage supports it: {sentences}",
                        sentences=" ".join(f"“{r}”" for r in turn.removed)))
    if turn.rerank_degraded:
        notes.append(tr("The reranker failed: passages were ranked without it, so the answer may be less precise."))
    return notes


def turn_html(index: int, turn: Turn, last: bool = True) -> str:
    """One turn (question, answer, notes, sources) as transcript HTML; ``index`` goes into its links."""
    q = html.escape(turn.question, quote=False).replace("\n", "<br>")
    parts = [
        '<table width="100%" cellspacing="0" cellpadding="8" style="background-color:#eaf1fb; margin-top:10px;">'
        f'<tr><td><b>{html.escape(tr("You"))}</b><br>{q}</td></tr></table>'
    ]
    if turn.status == "pending" and turn.answer:
        # a draft whose citations are not checked yet: grey, its [n] not links, labelled as such
        parts.append(f'<p style="color:#8a6d00;"><i>{html.escape(tr("Draft — checking its citations…"))}</i></p>')
        parts.append(_DRAFT_BLOCK.sub(r'<\1 style="color:#8a8a8a;">', markdown_to_html(turn.answer, valid_citations=(),
                                                                                   turn=index)))
    elif turn.answer and turn.status != "stopped":  # (a stopped draft was never checked: not shown)
        parts.append(markdown_to_html(turn.answer, valid_citations={c.n for c in turn.citations}, turn=index))
    elif turn.status == "pending":
        parts.append(f'<p style="color:#888;"><i>{html.escape(tr("Thinking…"))}</i></p>')
    for note in turn_notes(turn):
        parts.append(f'<p style="color:#9a5b00;"><i>{html.escape(note, quote=False)}</i></p>')
    if turn.citations:
        rows = "".join(
            f'<tr><td valign="top"><a href="{cite_href(c.n, index)}" style="text-decoration:none;">[{c.n}]</a></td>'
            f'<td>{html.escape(citation_label(c), quote=False)}</td></tr>'
            for c in sorted(turn.citations, key=lambda c: c.n))
        parts.append(f'<p style="color:#555; margin-bottom:2px;"><b>{html.escape(tr("Sources"))}</b></p>'
                     f'<table cellspacing="2" cellpadding="1" style="color:#444;">{rows}</table>')
    elif turn.passages:
        rows = "".join(
            f'<tr><td valign="top"><a href="passage:{p.n}#{index}" style="text-decoration:none;">{p.n}.</a></td>'
            f'<td>{html.escape(citation_label(p), quote=False)}</td></tr>' for p in turn.passages)
        parts.append(f'<p style="color:#555; margin-bottom:2px;"><b>{html.escape(tr("Passages found"))}</b></p>'
                     f'<table cellspacing="2" cellpadding="1" style="color:#444;">{rows}</table>')
    if turn.finished:
        parts.append(_actions_html(index, turn, last))
    return "\n".join(parts)


def transcript_html(turns: Sequence[Turn]) -> str:
    """The whole transcript (a hint on how to ask when there are no turns yet)."""
    if not turns:
        return ('<p style="color:#777;">' + html.escape(
            tr("Ask a question about the documents in the selected knowledge bases. Answers cite their "
               "sources as [1], [2]…; click one to see the passage.")) + "</p>")
    return "\n".join(turn_html(i, t, i == len(turns) - 1) for i, t in enumerate(turns))
