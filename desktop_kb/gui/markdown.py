"""A small, safe Markdown → Qt rich-text converter for answers.

Everything is HTML-escaped first (answers quote documents, which are data), so no HTML from a
model or a document is ever interpreted. Supported: paragraphs, line breaks, headings, bullet and
numbered lists, fenced code, inline code, **bold**, *italic*; Markdown links are shown as text
(never clickable). Citation marks ``[n]`` (also ``[1, 2]`` and ``[1][2]``) become
``<a href="cite:n">[n]</a>`` links (full size, on a tinted chip; a mark that names no passage
stays a plain superscript).
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection

__all__ = ["CITE_RE", "cite_href", "markdown_to_html", "parse_cite_href"]

CITE_RE = re.compile(r"\[(\d{1,3}(?:\s*[,，]\s*\d{1,3})*)\]")
_CODE = re.compile(r"`([^`\n]+)`")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
_ITALIC = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_LINK = re.compile(r"\[([^\[\]\n]+)\]\(([^()\s]+)\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^\s*[-*+•]\s+(.*)$")
_NUMBERED = re.compile(r"^\s*(\d{1,3})[.)]\s+(.*)$")


def cite_href(n: int, turn: int | None = None) -> str:
    """``cite:n`` (the latest answer) or ``cite:n#turn`` for an earlier answer in the transcript."""
    return f"cite:{n}" if turn is None else f"cite:{n}#{turn}"


def parse_cite_href(href: str, scheme: str = "cite") -> tuple[int, int | None] | None:
    """``(n, turn)`` from a ``cite:`` link (or another ``scheme``), or None for any other link."""
    m = re.fullmatch(re.escape(scheme) + r":(\d+)(?:#(\d+))?", href.strip())
    if not m:
        return None
    return int(m.group(1)), (int(m.group(2)) if m.group(2) else None)


def _cite_links(text: str, valid: Collection[int] | None, turn: int | None) -> str:
    def repl(m: re.Match[str]) -> str:
        parts = []
        for raw in re.split(r"\s*[,，]\s*", m.group(1)):
            n = int(raw)
            if valid is None or n in valid:
                # full size on a tinted chip, padded: a mark a finger or a shaky hand can hit (≥ 16 px)
                parts.append(f'<a href="{cite_href(n, turn)}" style="text-decoration:none; '
                             f'background-color:#e3ecfa; font-size:large;">&nbsp;[{n}]&nbsp;</a>')
            else:
                parts.append(f"<sup>[{n}]</sup>")
        return "".join(parts)

    return CITE_RE.sub(repl, text)


def _inline(raw: str, valid: Collection[int] | None, turn: int | None) -> str:
    """Escape one line and apply inline formatting; code spans are left untouched."""
    out: list[str] = []
    pos = 0
    for m in _CODE.finditer(raw):
        out.append(_inline_text(raw[pos : m.start()], valid, turn))
        out.append(f"<code>{html.escape(m.group(1), quote=False)}</code>")
        pos = m.end()
    out.append(_inline_text(raw[pos:], valid, turn))
    return "".join(out)


def _inline_text(raw: str, valid: Collection[int] | None, turn: int | None) -> str:
    text = _LINK.sub(lambda m: m.group(1), raw)  # links: keep the label, drop the target
    text = html.escape(text, quote=False)
    text = _BOLD.sub(lambda m: f"<b>{m.group(1) or m.group(2)}</b>", text)
    text = _ITALIC.sub(lambda m: f"<i>{m.group(1)}</i>", text)
    return _cite_links(text, valid, turn)


def markdown_to_html(md: str, *, valid_citations: Collection[int] | None = None, turn: int | None = None) -> str:
    """Rich text (a Qt-supported HTML subset) for ``md``. ``valid_citations``: the numbers that
    become links (None = all); ``turn``: which answer of the transcript the links belong to."""
    lines = md.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    out: list[str] = []
    para: list[str] = []
    list_tag = ""
    in_code = False
    code: list[str] = []

    def flush_para() -> None:
        if para:
            out.append("<p>" + "<br>".join(para) + "</p>")
            para.clear()

    def close_list() -> None:
        nonlocal list_tag
        if list_tag:
            out.append(f"</{list_tag}>")
            list_tag = ""

    for line in lines:
        if line.strip().startswith("```"):
            if in_code:
                out.append("<pre>" + html.escape("\n".join(code), quote=False) + "</pre>")
                code.clear()
                in_code = False
            else:
                flush_para()
                close_list()
                in_code = True
            continue
        if in_code:
            code.append(line)
            continue
        if not line.strip():
            flush_para()
            close_list()
            continue
        h = _HEADING.match(line)
        b = _BULLET.match(line)
        n = _NUMBERED.match(line)
        if h:
            flush_para()
            close_list()
            level = min(6, len(h.group(1)) + 2)  # answers are small: # → h3
            out.append(f"<h{level}>{_inline(h.group(2), valid_citations, turn)}</h{level}>")
        elif b or n:
            flush_para()
            tag = "ul" if b else "ol"
            if list_tag != tag:
                close_list()
                out.append(f"<{tag}>")
                list_tag = tag
            item = b.group(1) if b else n.group(2)  # type: ignore[union-attr]
            out.append(f"<li>{_inline(item, valid_citations, turn)}</li>")
        else:
            close_list()
            para.append(_inline(line.strip(), valid_citations, turn))
    if in_code:  # an unfinished fence while streaming
        out.append("<pre>" + html.escape("\n".join(code), quote=False) + "</pre>")
    flush_para()
    close_list()
    return "\n".join(out)
