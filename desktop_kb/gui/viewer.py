"""The footnote viewer: a cited passage inside its document.

"Text" shows the document's converted text (``Library.document_markdown``) as plain text — it is
data and is never interpreted as HTML or Markdown — scrolled to the passage, which is highlighted
(chars ``start:end``), with the quoted words (``quote_start:quote_end``) highlighted more
strongly. For PDFs, "Page" renders the cited page with QtPdf and marks the passage on it.
"Open original" opens the file in its own application.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QDesktopServices,
    QFont,
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
from .page_text import utf16_offset
from .scan_page import is_image
from .viewer_pages import EVIDENCE_BG, PASSAGE_BG, QUOTE_BG, PageView

__all__ = ["ViewerPane", "open_file", "utf16_offset"]



def open_file(path: str) -> bool:
    """Open a file with the desktop's default application."""
    return bool(QDesktopServices.openUrl(QUrl.fromLocalFile(path)))


class ViewerPane(PageView, QWidget):
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

    # -- actions -----------------------------------------------------------------------------------
    def open_original(self) -> None:
        if self.citation is not None:
            open_file(self.citation.path)

    def close_viewer(self) -> None:
        self.hide()
        self.closed.emit()
