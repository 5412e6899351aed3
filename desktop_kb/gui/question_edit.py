"""The question box of the chat: Enter asks, Ctrl+Enter (or Shift+Enter) inserts a newline;
dropped files are left to the window."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from .i18n import tr

__all__ = ["QuestionEdit"]


class QuestionEdit(QPlainTextEdit):
    """Enter asks, Ctrl+Enter (or Shift+Enter) inserts a newline."""

    submitted = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("questionBox")
        self.setPlaceholderText(tr("Ask a question about your documents… (Enter to ask, Ctrl+Enter for a new line)"))
        self.setTabChangesFocus(True)
        self.setMaximumHeight(90)

    def keyPressEvent(self, e: QKeyEvent) -> None:
        if e.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            mods = e.modifiers()
            if mods & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier):
                self.insertPlainText("\n")
            else:
                self.submitted.emit()
            e.accept()
            return
        super().keyPressEvent(e)

    def canInsertFromMimeData(self, source: Any) -> bool:
        # dropped files go to the window (ingest), not into the question as text
        return False if source.hasUrls() else super().canInsertFromMimeData(source)

    def dragEnterEvent(self, e: Any) -> None:
        if e.mimeData().hasUrls():
            e.ignore()
            return
        super().dragEnterEvent(e)
