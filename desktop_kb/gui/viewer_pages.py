"""The footnote viewer's "Page" tab: the cited page of a PDF (QtPdf) or a scanned image, with the
passage, its supporting sentence and the quote marked on it; zoom and paging. A mixin of
:class:`~desktop_kb.gui.viewer.ViewerPane`, which holds the citation, the document text and the
widgets these methods draw into.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPointF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPixmap, QPolygonF
from PySide6.QtPdf import QPdfDocument

from ..types import Citation, OcrPage
from .i18n import tr
from .page_text import find_on_page, stripped_with_map, words_of
from .scan_page import best_scan_page, is_image, load_scan, paint_scan, scan_boxes

__all__ = ["EVIDENCE_BG", "PASSAGE_BG", "QUOTE_BG", "PageView"]

PASSAGE_BG = QColor("#fff3a3")
QUOTE_BG = QColor("#ffb347")
EVIDENCE_BG = QColor("#ffd166")  # the supporting sentence(s): between the passage and the quote


class PageView:
    """The page tab's methods; the attributes are the viewer's."""

    citation: Citation | None
    page_index: int
    page_highlighted: bool
    zoom: float
    tabs: Any
    page_label: Any
    page_info: Any
    prev_btn: Any
    next_btn: Any
    page_scroll: Any
    _pdf: QPdfDocument | None
    _pdf_path: str
    _page_rendered: bool
    _ocr: list[OcrPage]
    _text: str
    _context: str
    devicePixelRatioF: Any  # QWidget's

    def _on_tab(self, index: int) -> None:
        if index == 1 and not self._page_rendered:
            self.render_page()

    def show_page_view(self) -> bool:
        if not self.tabs.isTabEnabled(1):
            return False
        self.tabs.setCurrentIndex(1)
        return self._page_rendered

    def _load_pdf(self, path: str) -> bool:
        if self._pdf is None or self._pdf_path != path:
            self._pdf = QPdfDocument(self)
            self._pdf_path = path
            if self._pdf.load(path) != QPdfDocument.Error.None_:
                self._pdf = None
                return False
        return True

    def _marks(self) -> list[tuple[str, QColor]]:
        """What to look for on the page: each line of the passage, then the quote (stronger)."""
        c = self.citation
        assert c is not None
        marks = [(line, QColor(PASSAGE_BG)) for line in self._text[c.start : c.end].splitlines()
                 if len(stripped_with_map(line)[0]) >= 6]
        marks += [(self._text[s:e], QColor(EVIDENCE_BG)) for s, e in c.evidence if e > s]
        if c.quote_start is not None and c.quote_end is not None and c.quote_end > c.quote_start:
            marks.append((self._text[c.quote_start : c.quote_end], QColor(QUOTE_BG)))
        return marks

    def _best_page(self) -> int:
        """The cited page that holds the quote, else the one sharing most words with the citing
        sentence, else the one with most of the passage (0-based)."""
        c = self.citation
        assert c is not None and self._pdf is not None
        pages = [p - 1 for p in c.pages if 0 < p <= self._pdf.pageCount()] or [0]
        on_scan = best_scan_page(self._ocr, c)
        if on_scan is not None and on_scan - 1 in pages:
            return on_scan - 1
        marks = self._marks()
        texts = {p: self._pdf.getAllText(p).text() for p in pages}
        strong = ([marks[-1][0]] if c.quote_start is not None and marks else []) + [
            self._text[s:e] for s, e in c.evidence]
        for mark in strong:  # the page with the quote, else with the supporting sentence
            for p in pages:
                if find_on_page(texts[p], mark) is not None:
                    return p
        words = words_of(self._context)

        def score(p: int) -> tuple[int, int]:
            on_page = words_of(texts[p])
            return len(words & on_page), sum(find_on_page(texts[p], m) is not None for m, _ in marks)

        return max(pages, key=score)

    def render_page(self, index: int | None = None) -> bool:
        """Render a page of the cited PDF (default: the best cited page) with the passage marked."""
        c = self.citation
        if c is None or not c.pages:
            return False
        if is_image(c.path):
            return self._render_image(index)
        if not self._load_pdf(c.path):
            self.page_label.setText(tr("This PDF cannot be shown."))
            return False
        assert self._pdf is not None
        page = self._best_page() if index is None else index
        scanned = {p.number: p for p in self._ocr}
        if not 0 <= page < self._pdf.pageCount():
            self.page_label.setText(tr("Page {page} is not in this PDF.", page=page + 1))
            return False
        self.page_index = page
        size_pt = self._pdf.pagePointSize(page)
        dpr = self.devicePixelRatioF()
        width = self._page_width() * dpr
        scale = width / max(1.0, size_pt.width())
        size = QSize(int(width), int(size_pt.height() * scale))
        rendered = self._pdf.render(page, size)
        image = QImage(size, QImage.Format.Format_ARGB32)
        image.fill(QColor("white"))  # pages render on a transparent background
        painter = QPainter(image)
        painter.drawImage(0, 0, rendered)
        if page + 1 in scanned:
            painter.end()
            boxes = scan_boxes(self._ocr, c, page + 1, QColor(PASSAGE_BG), QColor(EVIDENCE_BG))
            image = paint_scan(image, scanned[page + 1].rotation, boxes, int(width))
            self.page_highlighted = bool(boxes)
        else:
            self.page_highlighted = self._paint_marks(painter, page, scale)
            painter.end()
        return self._show_page(image, page, self._pdf.pageCount(), dpr)

    def _show_page(self, image: QImage, page: int, total: int, dpr: float) -> bool:
        pix = QPixmap.fromImage(image)
        pix.setDevicePixelRatio(dpr)
        self.page_label.setPixmap(pix)
        self.page_info.setText(tr("Page {page} of {total}", page=page + 1, total=total))
        self.prev_btn.setEnabled(page > 0)
        self.next_btn.setEnabled(page + 1 < total)
        self._page_rendered = True
        return True

    def _render_image(self, index: int | None) -> bool:
        """A scanned image (or TIFF frame) with the passage's recognised lines marked."""
        c = self.citation
        assert c is not None
        total = max([p.number for p in self._ocr] or [1])
        page = (best_scan_page(self._ocr, c) or c.pages[0]) - 1 if index is None else index
        dpr = self.devicePixelRatioF()
        width = int(self._page_width() * dpr)
        image = load_scan(c.path, page + 1) if 0 <= page < total else None
        if image is None:
            self.page_label.setText(tr("This image cannot be shown."))
            return False
        self.page_index = page
        rotation = next((p.rotation for p in self._ocr if p.number == page + 1), 0)
        boxes = scan_boxes(self._ocr, c, page + 1, QColor(PASSAGE_BG), QColor(EVIDENCE_BG))
        self.page_highlighted = bool(boxes)
        return self._show_page(paint_scan(image, rotation, boxes, width), page, total, dpr)

    def _paint_marks(self, painter: QPainter, page: int, scale: float) -> bool:
        assert self._pdf is not None
        page_text = self._pdf.getAllText(page).text()
        painter.setPen(Qt.PenStyle.NoPen)
        # multiply: a highlighter's colour under the text, which stays black
        painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Multiply)
        found = False
        for needle, color in self._marks():
            hit = find_on_page(page_text, needle)
            if hit is None:
                continue
            painter.setBrush(color)
            for poly in self._pdf.getSelectionAtIndex(page, hit[0], hit[1]).bounds():
                painter.drawPolygon(QPolygonF([QPointF(p.x() * scale, p.y() * scale) for p in poly]))
            found = True
        return found

    def _page_width(self) -> float:
        """The page's width on screen: the view's width (at least 300 px), times the zoom."""
        return min(4000.0, max(300, self.page_scroll.viewport().width() - 24) * self.zoom)

    def zoom_by(self, factor: float) -> None:
        self.zoom = min(4.0, max(0.5, self.zoom * factor))
        if self._page_rendered:
            self.render_page(self.page_index)

    def _step_page(self, delta: int) -> None:
        self.render_page(self.page_index + delta)

