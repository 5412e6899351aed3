"""The footnote viewer: a cited passage inside its document.

"Text" shows the document's converted text (``Library.document_markdown``) as plain text — it is
data and is never interpreted as HTML or Markdown — scrolled to the passage, which is highlighted
(chars ``start:end``), with the quoted words (``quote_start:quote_end``) highlighted more
strongly. For PDFs, "Page" renders the cited page with QtPdf and marks the passage on it.
"Open original" opens the file in its own application.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPointF, QSize, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QDesktopServices,
    QFont,
    QImage,
    QPainter,
    QPixmap,
    QPolygonF,
    QTextCharFormat,
    QTextCursor,
)
from PySide6.QtPdf import QPdfDocument
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..types import Citation, OcrPage
from .i18n import tr
from .page_text import find_on_page, stripped_with_map, utf16_offset, words_of
from .scan_page import best_scan_page, is_image, load_scan, paint_scan, scan_boxes

__all__ = ["ViewerPane", "open_file", "utf16_offset"]

PASSAGE_BG = QColor("#fff3a3")
QUOTE_BG = QColor("#ffb347")
EVIDENCE_BG = QColor("#ffd166")  # the supporting sentence(s): between the passage and the quote


def open_file(path: str) -> bool:
    """Open a file with the desktop's default application."""
    return bool(QDesktopServices.openUrl(QUrl.fromLocalFile(path)))


class ViewerPane(QWidget):
    closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("viewer")
        self.citation: Citation | None = None
        self._text = ""
        self._ocr: tuple[OcrPage, ...] = ()
        self._context = ""
        self._pdf: QPdfDocument | None = None
        self._pdf_path = ""
        self._page_rendered = False

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        head = QHBoxLayout()
        self.title = QLabel()
        self.title.setObjectName("viewerTitle")
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.title.setStyleSheet("font-weight: bold; font-size: 14px;")
        head.addWidget(self.title, 1)
        close = QToolButton()
        close.setText("✕")
        close.setToolTip(tr("Close the viewer"))
        close.clicked.connect(self.close_viewer)
        head.addWidget(close)
        layout.addLayout(head)
        self.meta = QLabel()
        self.meta.setObjectName("viewerMeta")
        self.meta.setTextFormat(Qt.TextFormat.PlainText)
        self.meta.setWordWrap(True)
        self.meta.setStyleSheet("color: #555;")
        layout.addWidget(self.meta)

        self.tabs = QTabWidget()
        self.text = QTextEdit()
        self.text.setObjectName("passageText")
        self.text.setReadOnly(True)
        self.text.setAcceptRichText(False)
        self.text.setLineWrapMode(QTextEdit.LineWrapMode.WidgetWidth)
        self.tabs.addTab(self.text, tr("Text"))
        self.page_label = QLabel()
        self.page_label.setObjectName("pageImage")
        self.page_label.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self.page_scroll = QScrollArea()
        self.page_scroll.setWidget(self.page_label)
        self.page_scroll.setWidgetResizable(True)
        self.page_scroll.setStyleSheet("QScrollArea { background-color: #777; } QLabel { background-color: #777; }")
        page_tab = QWidget()
        page_layout = QVBoxLayout(page_tab)
        page_layout.setContentsMargins(0, 0, 0, 0)
        nav = QHBoxLayout()
        self.prev_btn = QToolButton()
        self.prev_btn.setText("◀")
        self.prev_btn.clicked.connect(lambda: self._step_page(-1))
        self.next_btn = QToolButton()
        self.next_btn.setText("▶")
        self.next_btn.clicked.connect(lambda: self._step_page(1))
        self.page_info = QLabel()
        nav.addWidget(self.prev_btn)
        nav.addWidget(self.page_info)
        nav.addWidget(self.next_btn)
        nav.addStretch(1)
        self.zoom = 1.0  # 1: the page fits the view's width
        self.zoom_out_btn, self.zoom_in_btn = QToolButton(), QToolButton()
        for btn, text, factor in ((self.zoom_out_btn, "−", 1 / 1.25), (self.zoom_in_btn, "+", 1.25)):
            btn.setText(text)
            btn.setToolTip(tr("Zoom out") if factor < 1 else tr("Zoom in"))
            btn.clicked.connect(lambda _c=False, f=factor: self.zoom_by(f))
            nav.addWidget(btn)
        page_layout.addLayout(nav)
        page_layout.addWidget(self.page_scroll, 1)
        self.tabs.addTab(page_tab, tr("Page"))
        self.page_index = 0
        self.tabs.currentChanged.connect(self._on_tab)
        layout.addWidget(self.tabs, 1)

        row = QHBoxLayout()
        self.open_btn = QPushButton(tr("Open original"))
        self.open_btn.setObjectName("openOriginal")
        self.open_btn.clicked.connect(self.open_original)
        row.addStretch(1)
        row.addWidget(self.open_btn)
        layout.addLayout(row)
        self.page_highlighted = False

    # -- showing a citation ------------------------------------------------------------------------
    def show_citation(self, citation: Citation, document_text: str, context: str = "",
                      ocr: tuple[OcrPage, ...] = ()) -> None:
        """Show ``citation`` in ``document_text``; ``context`` (the sentence citing it) helps pick the
        PDF page when there is no quote; ``ocr`` (the document's scanned pages) lets the page view
        show a scan with the passage's recognised lines marked."""
        self.citation = citation
        self._context = context
        self._ocr = ocr
        self._text = document_text.replace("\r", " ")  # keep offsets: one char for one char
        name = Path(citation.path).name or citation.path
        self.title.setText(f"[{citation.n}] {name}" if citation.n else name)  # n = 0: a section opened from the TOC
        meta = []
        if citation.heading_path:
            meta.append(" › ".join(citation.heading_path))
        if citation.pages:
            meta.append(tr("page {page}", page=citation.pages[0]) if len(citation.pages) == 1
                        else tr("pages {first}–{last}", first=citation.pages[0], last=citation.pages[-1]))
        meta.append(tr("knowledge base {kb}", kb=citation.kb))
        self.meta.setText(" · ".join(meta))
        self.meta.setToolTip(citation.path)

        self.text.setPlainText(self._text)
        self.text.setExtraSelections(self._selections())
        exists = Path(citation.path).is_file()
        self.open_btn.setEnabled(exists)
        self.open_btn.setToolTip(citation.path if exists else tr("The original file is no longer at {path}",
                                                                 path=citation.path))
        is_pdf = exists and bool(citation.pages) and (
            citation.path.lower().endswith(".pdf") or (is_image(citation.path) and bool(ocr)))
        on_page_tab = self.isVisible() and self.tabs.currentIndex() == 1
        self.tabs.setTabEnabled(1, is_pdf)
        self._page_rendered = False
        self.page_highlighted = False
        self.page_label.clear()
        self.tabs.setCurrentIndex(0)
        self.show()
        self._scroll_to_passage()
        QTimer.singleShot(0, self._scroll_to_passage)  # again once the pane has its final size
        if on_page_tab and is_pdf:
            self.tabs.setCurrentIndex(1)  # stay on the page view from one PDF footnote to the next

    def _range(self, start: int | None, end: int | None) -> QTextCursor | None:
        if start is None or end is None or end <= start:
            return None
        cursor = QTextCursor(self.text.document())
        cursor.setPosition(utf16_offset(self._text, start))
        cursor.setPosition(utf16_offset(self._text, end), QTextCursor.MoveMode.KeepAnchor)
        return cursor

    def _selections(self) -> list[QTextEdit.ExtraSelection]:
        c = self.citation
        out: list[QTextEdit.ExtraSelection] = []
        if c is None:
            return out
        # the passage lightly, the sentence(s) that support the claim strongly, the quote on top
        spans = [(self._range(c.start, c.end), PASSAGE_BG, False)]
        spans += [(self._range(s, e), EVIDENCE_BG, False) for s, e in c.evidence]
        spans.append((self._range(c.quote_start, c.quote_end), QUOTE_BG, True))
        for cursor, colour, bold in spans:
            if cursor is None:
                continue
            sel = QTextEdit.ExtraSelection()
            sel.cursor = cursor
            fmt = QTextCharFormat()
            fmt.setBackground(QBrush(colour))
            if bold:
                fmt.setFontWeight(QFont.Weight.Bold)
            sel.format = fmt
            out.append(sel)
        return out

    def _scroll_to_passage(self) -> None:
        c = self.citation
        if c is None:
            return
        doc_end = QTextCursor(self.text.document())
        doc_end.movePosition(QTextCursor.MoveOperation.End)
        self.text.setTextCursor(doc_end)
        self.text.ensureCursorVisible()
        at = QTextCursor(self.text.document())
        at.setPosition(utf16_offset(self._text, c.start))
        self.text.setTextCursor(at)
        self.text.ensureCursorVisible()
        # leave a few lines of context above the passage
        bar = self.text.verticalScrollBar()
        rect = self.text.cursorRect(at)
        bar.setValue(max(0, bar.value() + rect.top() - self.text.viewport().height() // 5))

    def highlighted_text(self) -> str:
        """The passage as highlighted in the view (read back from the document)."""
        sels = self.text.extraSelections()
        return sels[0].cursor.selectedText().replace("\u2029", "\n") if sels else ""

    def _highlighted(self, colour: QColor) -> list[str]:
        return [sel.cursor.selectedText().replace("\u2029", "\n") for sel in self.text.extraSelections()[1:]
                if sel.format.background().color() == colour]

    def quote_text(self) -> str:
        return "".join(self._highlighted(QUOTE_BG)[:1])

    def evidence_text(self) -> list[str]:
        """The supporting sentence(s), as highlighted strongly inside the passage."""
        return self._highlighted(EVIDENCE_BG)

    def passage_visible(self) -> bool:
        """Whether the start of the passage is inside the visible part of the text view."""
        if self.citation is None:
            return False
        at = QTextCursor(self.text.document())
        at.setPosition(utf16_offset(self._text, self.citation.start))
        rect = self.text.cursorRect(at)
        return 0 <= rect.top() < self.text.viewport().height()

    # -- PDF page view -----------------------------------------------------------------------------
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

    # -- actions -----------------------------------------------------------------------------------
    def open_original(self) -> None:
        if self.citation is not None:
            open_file(self.citation.path)

    def close_viewer(self) -> None:
        self.hide()
        self.closed.emit()
