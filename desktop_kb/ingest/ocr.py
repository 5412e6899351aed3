"""OCR stage of conversion: scanned pages and photos → text in reading order, with line boxes.

The engine (an :class:`~desktop_kb.protocols.OcrEngine`) reads lines; this module drops
low-confidence lines, orders the rest (rows top to bottom, boxes in a row left to right, a blank
line where the vertical gap says a new paragraph starts), caps the pages per file, reports progress
per page, and, once the document's text is final (after cleaning), anchors every line's box to its
offsets in the Markdown so a citation can show its lines on the page.
"""

from __future__ import annotations

import dataclasses
import json
import re
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from ..progress import CancelToken
from ..protocols import OcrEngine, OcrRead
from ..text.tokenize import is_cjk_char
from ..types import ConvertedDocument, OcrLine, OcrPage
from .clean import clean_text

__all__ = ["OcrMode", "OcrOptions", "anchor_lines", "lines_in", "load_pages", "needs_ocr", "page_text",
           "read_page", "save_pages"]

OcrMode = Literal["auto", "off", "force"]
# A PDF page with fewer characters than this in its text layer is treated as scanned.
MIN_TEXT_CHARS = 16
_LATIN_RUN = re.compile(r"(?<![A-Za-z])[A-Za-z]{10,}(?![A-Za-z])")
_SHORT_WORDS = frozenset(
    "a i an as at be by do go he if in is it me my no of on or so to up us we am are and any but can did "
    "due for get had has her him his how its let may new nor not now off old one our out own per put say "
    "see set she the too two use was way who why yes yet you all few".split()
)


@dataclass(frozen=True)
class OcrOptions:
    engine: OcrEngine | None  # None: OCR is not installed
    mode: OcrMode = "auto"
    max_pages: int = 100  # per file; pages beyond are not read (the file is indexed partly)
    dpi: int = 200
    min_confidence: float = 0.5
    on_page: Callable[[int, int, float], None] | None = None  # (pages read, pages to read, s/page)
    cancel: CancelToken | None = None

    @property
    def enabled(self) -> bool:
        return self.mode != "off" and self.engine is not None


class PageCounter:
    """Counts the OCR'd pages of one file against the cap and reports each page with its speed."""

    def __init__(self, options: OcrOptions, total: int) -> None:
        self.options = options
        self.total = min(total, options.max_pages)
        self.done = 0
        self.started = time.monotonic()

    @property
    def full(self) -> bool:
        return self.done >= self.options.max_pages

    def read(self, number: int, image: np.ndarray) -> OcrPage:
        if self.options.cancel is not None:
            self.options.cancel.raise_if_cancelled()
        assert self.options.engine is not None
        page = read_page(number, self.options.engine.read(image), self.options.min_confidence)
        self.done += 1
        if self.options.on_page is not None:
            per_page = (time.monotonic() - self.started) / self.done
            self.options.on_page(self.done, self.total, per_page)
        return page


def needs_ocr(text: str) -> bool:
    """A text layer with (almost) nothing in it: none, or a few stray characters."""
    return sum(1 for ch in text if not ch.isspace()) < MIN_TEXT_CHARS


def read_page(number: int, read: OcrRead, min_confidence: float) -> OcrPage:
    """Keep the confident lines of ``read``, in reading order, with boxes as page fractions."""
    w, h = max(read.width, 1), max(read.height, 1)
    cleaned = ((clean_text(text).replace("\n", " "), conf, box) for text, conf, box in read.lines
               if conf >= min_confidence)
    lines = [OcrLine(restore_spaces(text), x / w, y / h, bw / w, bh / h, conf)
             for text, conf, (x, y, bw, bh) in cleaned if text.strip()]
    return OcrPage(number, read.rotation, tuple(_reading_order(lines)))


def restore_spaces(text: str) -> str:
    """Put back the spaces the recogniser often drops between English words on tightly set lines
    ("Patientpresentswithheadaches" → "Patient presents with headaches"), with wordninja's word
    frequencies. A part counts as a word when it has 4+ letters or is a common short word; the
    parts that do not (a name cut into pieces: "Lis in opr il") stay joined in the middle. Only
    lines that lost their spaces are touched (more than 12 Latin letters per space): a normally
    spaced line keeps its long words ("anisotropy", "hematopoiesis") whole."""
    letters = sum(1 for ch in text if "a" <= ch.lower() <= "z")
    if letters < 20 or letters <= 12 * (text.count(" ") + 1):
        return text
    try:
        import wordninja
    except ImportError:
        return text

    def split(match: re.Match[str]) -> str:
        run = match.group(0)
        parts = wordninja.split(run)
        if len(parts) < 2 or "".join(parts) != run:
            return run
        good = [len(p) >= 4 or p.lower() in _SHORT_WORDS for p in parts]
        head = next((i for i, g in enumerate(good) if not g), len(parts))
        tail = next((i for i, g in enumerate(reversed(good)) if not g), 0)
        if head == len(parts):
            return " ".join(parts)
        middle = "".join(parts[head : len(parts) - tail])
        return " ".join([*parts[:head], middle, *parts[len(parts) - tail :]])

    return _LATIN_RUN.sub(split, text)


def _reading_order(lines: list[OcrLine]) -> list[OcrLine]:
    """Rows by vertical overlap (top to bottom), then left to right within a row."""
    rows: list[list[OcrLine]] = []
    for line in sorted(lines, key=lambda ln: (ln.y + ln.h / 2, ln.x)):
        if rows and _same_row(rows[-1], line):
            rows[-1].append(line)
        else:
            rows.append([line])
    return [ln for row in rows for ln in sorted(row, key=lambda ln: ln.x)]


def _same_row(row: list[OcrLine], line: OcrLine) -> bool:
    centre = statistics.fmean(ln.y + ln.h / 2 for ln in row)
    height = statistics.fmean(ln.h for ln in row)
    return abs(line.y + line.h / 2 - centre) < 0.5 * min(height, line.h)


def page_text(page: OcrPage) -> str:
    """The page's lines as text: a row's boxes joined by a space (none between CJK characters),
    rows by a newline, and a blank line where the gap above a row is larger than a line's height."""
    if not page.lines:
        return ""
    heights = [ln.h for ln in page.lines]
    typical = statistics.median(heights)
    out: list[str] = []
    prev: OcrLine | None = None
    for line in page.lines:
        if prev is None:
            out.append(line.text)
        elif abs(line.y + line.h / 2 - (prev.y + prev.h / 2)) < 0.5 * min(line.h, prev.h):
            joiner = "" if is_cjk_char(prev.text[-1]) and is_cjk_char(line.text[0]) else " "
            out.append(joiner + line.text)
        else:
            gap = line.y - (prev.y + prev.h)
            out.append("\n\n" + line.text if gap > 1.2 * typical else "\n" + line.text)
        prev = line
    return "".join(out)


def anchor_lines(doc: ConvertedDocument) -> ConvertedDocument:
    """Give each OCR line the offsets of its text in the (cleaned) Markdown of its page.

    Lines are looked up in order inside their page's span, so the offsets survive cleaning; a line
    the cleaner changed beyond recognition keeps -1 (it is then not highlighted).
    """
    if not doc.ocr:
        return doc
    spans = {p.number: (p.start, p.end) for p in doc.pages}
    pages = []
    for page in doc.ocr:
        start, end = spans.get(page.number, (0, len(doc.markdown)))
        pos = start
        lines = []
        for line in page.lines:
            at = doc.markdown.find(line.text, pos, end)
            if at < 0:
                lines.append(dataclasses.replace(line, start=-1, end=-1))
                continue
            lines.append(dataclasses.replace(line, start=at, end=at + len(line.text)))
            pos = at + len(line.text)
        pages.append(dataclasses.replace(page, lines=tuple(lines)))
    return dataclasses.replace(doc, ocr=tuple(pages))


def lines_in(pages: Sequence[OcrPage], start: int, end: int) -> list[tuple[int, int, OcrLine]]:
    """(page number, rotation, line) for every anchored line overlapping ``[start, end)``."""
    return [(p.number, p.rotation, ln) for p in pages for ln in p.lines
            if ln.start >= 0 and ln.start < end and ln.end > start]


def save_pages(path: Path, pages: Sequence[OcrPage]) -> None:
    """Write the OCR pages of a document beside its Markdown (``<doc_id>.ocr.json``)."""
    data = [{"page": p.number, "rotation": p.rotation,
             "lines": [[ln.start, ln.end, round(ln.x, 5), round(ln.y, 5), round(ln.w, 5), round(ln.h, 5),
                        round(ln.confidence, 3)] for ln in p.lines if ln.start >= 0]} for p in pages]
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
    tmp.replace(path)


def load_pages(path: Path, markdown: str = "") -> tuple[OcrPage, ...]:
    """The OCR pages written by :func:`save_pages` (none when the file is absent or unreadable)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return tuple(OcrPage(int(p["page"]), int(p["rotation"]), tuple(
            OcrLine(markdown[s:e], x, y, w, h, c, s, e) for s, e, x, y, w, h, c in p["lines"]))
            for p in data)
    except (OSError, ValueError, KeyError, TypeError):
        return ()
