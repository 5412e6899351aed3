"""OpenDocument text, spreadsheets and presentations (.odt .ods .odp) → Markdown, with odfpy.

Text: headings keep their outline level, lists become ``-`` items, tables Markdown tables.
Spreadsheets: one ``##`` section per sheet with its table. Presentations: one page per slide.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

from ..errors import CorruptFile, PasswordProtected
from ..types import ConvertedDocument
from .pdf import join_pages

__all__ = ["ODF_EXTENSIONS", "convert_odf"]

ODF_EXTENSIONS = frozenset({".odt", ".ods", ".odp"})
_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_DRAW = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
_MAX_REPEAT = 50  # a repeated row or cell (ODF's run-length) counts at most this often
_MAX_CELLS = 200_000


def convert_odf(path: Path) -> ConvertedDocument:
    name = path.name
    _check_container(path)
    from odf.opendocument import load

    try:
        doc = load(str(path))
    except Exception as exc:  # odfpy raises whatever its XML parser raises
        raise CorruptFile(f"{name} is damaged or not a real OpenDocument file.") from exc
    ext = path.suffix.lower()
    if ext == ".odp":
        slides = [n for n in _children(doc.presentation) if n.qname == (_DRAW, "page")]
        markdown, pages = join_pages([(i, "\n\n".join(_blocks(s))) for i, s in enumerate(slides, start=1)])
        return ConvertedDocument(markdown, pages, path.stem)
    body = doc.spreadsheet if ext == ".ods" else doc.text
    if ext == ".ods":
        sheets = [n for n in _children(body) if n.qname == (_TABLE, "table")]
        parts = [f"## {_attr(s, _TABLE, 'name') or 'Sheet'}\n\n{_table(s)}" for s in sheets]
        return ConvertedDocument("\n\n".join(p for p in parts if p.strip()), (), path.stem)
    return ConvertedDocument("\n\n".join(_blocks(body)), (), path.stem)


def _check_container(path: Path) -> None:
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            manifest = zf.read("META-INF/manifest.xml") if "META-INF/manifest.xml" in names else b""
    except (zipfile.BadZipFile, ValueError, EOFError):
        raise CorruptFile(f"{path.name} is damaged or not a real OpenDocument file.") from None
    if b"encryption-data" in manifest:
        raise PasswordProtected(f"{path.name} is password-protected.", "Remove the password and add it again.")
    if "content.xml" not in names:
        raise CorruptFile(f"{path.name} is damaged or not a real OpenDocument file.")


def _children(node: Any) -> list[Any]:
    return [n for n in getattr(node, "childNodes", []) if getattr(n, "qname", None)]


def _attr(node: Any, ns: str, name: str) -> str:
    return str(node.attributes.get((ns, name), "") or "")


def _text(node: Any) -> str:
    from odf import teletype

    return " ".join(teletype.extractText(node).split())


def _blocks(node: Any, depth: int = 0) -> list[str]:
    """Markdown blocks of a text body, a section or a slide, in document order."""
    out: list[str] = []
    for child in _children(node):
        ns, tag = child.qname
        if (ns, tag) == (_TEXT, "h"):
            level = min(max(int(_attr(child, _TEXT, "outline-level") or 1), 1), 6)
            if text := _text(child):
                out.append("#" * level + " " + text)
        elif (ns, tag) == (_TEXT, "p"):
            if text := _text(child):
                out.append(text)
        elif (ns, tag) == (_TEXT, "list"):
            items = [_list_item(i, depth) for i in _children(child) if i.qname[1] in ("list-item", "list-header")]
            if items := [i for i in items if i]:
                out.append("\n".join(items))
        elif (ns, tag) == (_TABLE, "table"):
            if table := _table(child):
                out.append(table)
        elif tag in ("section", "frame", "text-box", "g", "custom-shape", "table-of-content", "index-body"):
            out.extend(_blocks(child, depth))
    return out


def _list_item(item: Any, depth: int) -> str:
    lines = []
    for block in _blocks(item, depth + 1):
        prefix = "  " * depth + "- " if not lines else "  " * (depth + 1)
        lines.append(block if block.lstrip().startswith("- ") else prefix + block)
    return "\n".join(lines)


def _table(table: Any) -> str:
    rows: list[list[str]] = []
    cells = 0
    for row in _rows(table):
        values: list[str] = []
        for cell in _children(row):
            if cell.qname[1] not in ("table-cell", "covered-table-cell"):
                continue
            repeat = min(int(_attr(cell, _TABLE, "number-columns-repeated") or 1), _MAX_REPEAT)
            values.extend([_text(cell).replace("|", "\\|")] * repeat)
        while values and not values[-1]:
            values.pop()
        repeat = min(int(_attr(row, _TABLE, "number-rows-repeated") or 1), _MAX_REPEAT)
        if values:
            rows.extend([values] * repeat)
            cells += len(values) * repeat
        if cells > _MAX_CELLS:
            break
    if not rows:
        return ""
    width = max(len(r) for r in rows)

    def line(row: list[str]) -> str:
        return "| " + " | ".join(row + [""] * (width - len(row))) + " |"

    return "\n".join([line(rows[0]), "| " + " | ".join(["---"] * width) + " |", *map(line, rows[1:])])


def _rows(table: Any) -> list[Any]:
    out = []
    for child in _children(table):
        if child.qname[1] == "table-row":
            out.append(child)
        elif child.qname[1] in ("table-rows", "table-header-rows", "table-row-group"):
            out.extend(_rows(child))
    return out
