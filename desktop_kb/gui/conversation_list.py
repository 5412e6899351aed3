"""The conversations of the bases being asked, as a side list: newest first, titled by the first
question (or the user's own name), a search box, and per conversation Rename, Delete (with Undo
for a while) and Export as Markdown. The list only shows and asks; the chat owns the store."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from .conversations import Conversation
from .i18n import tr

__all__ = ["ConversationList"]

UNDO_MS = 10_000  # how long "Undo" stays after a delete


class ConversationList(QWidget):
    picked = Signal(str)  # a conversation's id
    new_requested = Signal()
    rename_requested = Signal(str, str)  # id, new name
    delete_requested = Signal(str)
    export_requested = Signal(str)
    undo_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("conversationList")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.new_btn = QPushButton(tr("New conversation"))
        self.new_btn.clicked.connect(self.new_requested)
        layout.addWidget(self.new_btn)
        self.search = QLineEdit()
        self.search.setObjectName("conversationSearch")
        self.search.setPlaceholderText(tr("Search conversations"))
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(lambda _t: self._refill())
        layout.addWidget(self.search)
        self.items = QListWidget()
        self.items.setObjectName("conversations")
        self.items.setWordWrap(True)
        self.items.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.items.customContextMenuRequested.connect(self._menu)
        self.items.itemClicked.connect(lambda item: self.picked.emit(item.data(Qt.ItemDataRole.UserRole)))
        layout.addWidget(self.items, 1)
        undo_row = QHBoxLayout()
        self.undo_label = QLabel(tr("Conversation deleted."))
        self.undo_btn = QPushButton(tr("Undo"))
        self.undo_btn.setObjectName("undoDelete")
        self.undo_btn.clicked.connect(self._undo)
        undo_row.addWidget(self.undo_label, 1)
        undo_row.addWidget(self.undo_btn)
        layout.addLayout(undo_row)
        self._undo_timer = QTimer(self)
        self._undo_timer.setSingleShot(True)
        self._undo_timer.timeout.connect(lambda: self._show_undo(False))
        self._show_undo(False)
        self._convs: list[Conversation] = []
        self._current = ""

    def fill(self, convs: Sequence[Conversation], current: str) -> None:
        """Show ``convs`` (newest first); ``current`` is the open one (also when not saved yet)."""
        self._convs, self._current = list(convs), current
        self._refill()

    def _refill(self) -> None:
        self.items.clear()
        query = self.search.text()
        for c in self._convs:
            if not c.matches(query):
                continue
            when = _dt.datetime.fromtimestamp(c.created_at).strftime("%m-%d %H:%M") if c.created_at else ""
            item = QListWidgetItem(f"{c.title}\n{when}" if when else c.title)
            item.setData(Qt.ItemDataRole.UserRole, c.id)
            item.setToolTip(c.title)
            self.items.addItem(item)
            if c.id == self._current:
                self.items.setCurrentItem(item)

    def titles(self) -> list[str]:
        """The titles listed now (what a user sees, search applied)."""
        return [self.items.item(i).text().split("\n")[0] for i in range(self.items.count())]

    def _menu(self, pos: object) -> None:
        item = self.items.itemAt(pos)  # type: ignore[arg-type]
        if item is None:
            return
        conv_id = item.data(Qt.ItemDataRole.UserRole)
        menu = QMenu(self)
        menu.addAction(tr("Rename…"), lambda: self.ask_rename(conv_id))
        menu.addAction(tr("Export as Markdown…"), lambda: self.export_requested.emit(conv_id))
        menu.addAction(tr("Delete"), lambda: self.delete_requested.emit(conv_id))
        menu.exec(self.items.viewport().mapToGlobal(pos))  # type: ignore[arg-type]

    def ask_rename(self, conv_id: str) -> None:
        old = next((c.title for c in self._convs if c.id == conv_id), "")
        name, ok = QInputDialog.getText(self, tr("Rename conversation"), tr("Name:"), text=old)
        if ok and name.strip():
            self.rename_requested.emit(conv_id, name.strip())

    def deleted(self) -> None:
        """A conversation was deleted: offer Undo for a while."""
        self._show_undo(True)
        self._undo_timer.start(UNDO_MS)

    def _undo(self) -> None:
        self._show_undo(False)
        self.undo_requested.emit()

    def _show_undo(self, shown: bool) -> None:
        self.undo_label.setVisible(shown)
        self.undo_btn.setVisible(shown)
