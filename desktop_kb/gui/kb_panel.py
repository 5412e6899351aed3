"""The side panel: knowledge bases (create, rename, delete, pick several to ask across), the
selected knowledge base's statistics, and its document list (state per file, remove).

The panel only shows data and emits requests; the main window runs them on the Library.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Sequence
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..ingest.manifest import DocumentRow
from ..library.kb import KBInfo
from .i18n import tr, tr_n

__all__ = ["KBPanel", "ask_name", "confirm"]

PATH_ROLE = Qt.ItemDataRole.UserRole
STATE_ROLE = Qt.ItemDataRole.UserRole + 1
DOC_ROLE = Qt.ItemDataRole.UserRole + 2


def confirm(parent: QWidget, title: str, text: str) -> bool:
    """Ask yes/no (a separate function so tests can answer it)."""
    answer = QMessageBox.question(parent, title, text,
                                  QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                  QMessageBox.StandardButton.No)
    return answer == QMessageBox.StandardButton.Yes


def ask_name(parent: QWidget, title: str, label: str, text: str = "") -> str | None:
    """Ask for a knowledge base name (a separate function so tests can answer it)."""
    name, ok = QInputDialog.getText(parent, title, label, QLineEdit.EchoMode.Normal, text)
    return name.strip() if ok and name.strip() else None


def _when(ts: int) -> str:
    if not ts:
        return tr("never")
    return _dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


class KBPanel(QWidget):
    create_requested = Signal(str)
    rename_requested = Signal(str, str)
    delete_requested = Signal(str)
    check_requested = Signal(str)  # check a knowledge base (and offer to repair it)
    current_changed = Signal(str)  # the knowledge base whose documents are shown (and receives drops)
    selection_changed = Signal(list)  # the knowledge bases questions go to
    add_folder_requested = Signal()
    add_files_requested = Signal()
    remove_files_requested = Signal(str, list)  # kb, paths
    removed_requested = Signal(str)  # show what was removed from kb (and put some back)
    metadata_requested = Signal(str, list, str)  # kb, paths, "tags" | "owner"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("kbPanel")
        self._updating = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)

        head = QLabel(tr("Knowledge bases"))
        head.setStyleSheet("font-weight: bold;")
        layout.addWidget(head)
        self.kb_list = QListWidget()
        self.kb_list.setObjectName("kbList")
        self.kb_list.setToolTip(tr("Tick the knowledge bases to ask; the selected one receives added documents."))
        self.kb_list.setMaximumHeight(140)
        self.kb_list.currentItemChanged.connect(self._on_current)
        self.kb_list.itemChanged.connect(self._on_item_changed)
        self.kb_list.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.check_action = QAction(tr("Check and repair…"), self.kb_list)
        self.check_action.triggered.connect(lambda: self.current_kb() and self.check_requested.emit(self.current_kb()))
        self.kb_list.addAction(self.check_action)
        layout.addWidget(self.kb_list)
        self.ask_hint = QLabel()  # what the ticks mean, said where they are
        self.ask_hint.setObjectName("askHint")
        self.ask_hint.setWordWrap(True)
        self.ask_hint.setStyleSheet("color: #666;")
        layout.addWidget(self.ask_hint)
        self.selection_changed.connect(self._update_hint)

        row = QHBoxLayout()
        self.new_btn = QPushButton(tr("New…"))
        self.rename_btn = QPushButton(tr("Rename…"))
        self.delete_btn = QPushButton(tr("Delete…"))
        for b in (self.new_btn, self.rename_btn, self.delete_btn):
            row.addWidget(b)
        self.new_btn.clicked.connect(self.new_kb_dialog)
        self.rename_btn.clicked.connect(self._rename)
        self.delete_btn.clicked.connect(self._delete)
        layout.addLayout(row)

        self.stats_label = QLabel()
        self.stats_label.setObjectName("kbStats")
        self.stats_label.setWordWrap(True)
        self.stats_label.setTextFormat(Qt.TextFormat.PlainText)
        self.stats_label.setStyleSheet("color: #444;")
        layout.addWidget(self.stats_label)

        docs_head = QLabel(tr("Documents"))
        docs_head.setStyleSheet("font-weight: bold;")
        layout.addWidget(docs_head)
        self.docs = QTreeWidget()
        self.docs.setObjectName("documentList")
        self.docs.setHeaderLabels([tr("File"), tr("State"), tr("Chunks")])
        self.docs.setRootIsDecorated(False)
        self.docs.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.docs.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.docs.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.docs.header().setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.docs.header().setStretchLastSection(False)
        self.docs.itemSelectionChanged.connect(self._update_buttons)
        self.docs.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        for label, field in ((tr("Edit tags…"), "tags"), (tr("Set owner…"), "owner")):
            act = QAction(label, self.docs)
            act.triggered.connect(lambda _c=False, f=field: self._edit_metadata(f))
            self.docs.addAction(act)
        layout.addWidget(self.docs, 1)

        row2 = QHBoxLayout()
        self.add_folder_btn = QPushButton(tr("Add folder…"))
        self.add_files_btn = QPushButton(tr("Add files…"))
        self.remove_btn = QPushButton(tr("Remove"))
        self.remove_btn.setToolTip(tr("Remove the selected files from the knowledge base (the files on disk stay)."))
        self.add_folder_btn.clicked.connect(self.add_folder_requested)
        self.add_files_btn.clicked.connect(self.add_files_requested)
        self.remove_btn.clicked.connect(self._remove)
        self.removed_btn = QPushButton(tr("Removed…"))
        self.removed_btn.setToolTip(tr("Files removed from this knowledge base (kept out of later scans); put them back."))
        self.removed_btn.clicked.connect(lambda: self.current_kb() and self.removed_requested.emit(self.current_kb()))
        self.removed_btn.setFlat(True)
        self.removed_btn.setStyleSheet("color: #2a5db0; font-size: 11px; padding: 0 4px;")
        row2.addWidget(self.add_folder_btn)
        row2.addWidget(self.add_files_btn)
        row2.addWidget(self.remove_btn)
        layout.addLayout(row2)
        row3 = QHBoxLayout()
        self.hint = QLabel(tr("Drop files or folders anywhere on the window to add them."))
        self.hint.setWordWrap(True)
        self.hint.setStyleSheet("color: #777; font-size: 11px;")
        row3.addWidget(self.hint, 1)
        row3.addWidget(self.removed_btn)
        layout.addLayout(row3)
        self._update_buttons()

    # -- knowledge bases ---------------------------------------------------------------------------
    def set_kbs(self, names: Sequence[str], checked: Iterable[str] = (), current: str | None = None) -> None:
        """Show ``names``; keep the ticks and the selection where possible."""
        checked = set(checked)
        current = current if current is not None else self.current_kb()
        self._updating = True
        try:
            self.kb_list.clear()
            for name in names:
                item = QListWidgetItem(name)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked if name in checked else Qt.CheckState.Unchecked)
                self.kb_list.addItem(item)
            target = current if current in names else (names[0] if names else None)
            if target is not None:
                self.kb_list.setCurrentRow(list(names).index(target))
        finally:
            self._updating = False
        self._update_buttons()
        self.current_changed.emit(self.current_kb() or "")
        self.selection_changed.emit(self.ask_kbs())

    def kb_names(self) -> list[str]:
        return [self.kb_list.item(i).text() for i in range(self.kb_list.count())]

    def current_kb(self) -> str | None:
        item = self.kb_list.currentItem()
        return item.text() if item is not None else None

    def set_current_kb(self, name: str) -> None:
        for i in range(self.kb_list.count()):
            if self.kb_list.item(i).text() == name:
                self.kb_list.setCurrentRow(i)
                return

    def checked_kbs(self) -> list[str]:
        return [self.kb_list.item(i).text() for i in range(self.kb_list.count())
                if self.kb_list.item(i).checkState() == Qt.CheckState.Checked]

    def set_checked(self, names: Iterable[str]) -> None:
        names = set(names)
        self._updating = True
        try:
            for i in range(self.kb_list.count()):
                item = self.kb_list.item(i)
                item.setCheckState(Qt.CheckState.Checked if item.text() in names else Qt.CheckState.Unchecked)
        finally:
            self._updating = False
        self.selection_changed.emit(self.ask_kbs())

    def ask_kbs(self) -> list[str]:
        """The knowledge bases a question goes to: the ticked ones, else the selected one."""
        checked = self.checked_kbs()
        if checked:
            return checked
        current = self.current_kb()
        return [current] if current else []

    def _update_hint(self, *_: object) -> None:
        checked = self.checked_kbs()
        self.ask_hint.setText(
            tr("Questions go to the ticked bases: {kbs}.", kbs=", ".join(checked)) if len(checked) > 1 else
            tr("Questions go to the ticked base.") if checked else
            tr("Questions go to the selected base. Tick several to ask them together.") if self.kb_names() else "")

    def _on_current(self, *_: object) -> None:
        if self._updating:
            return
        self._update_buttons()
        self.current_changed.emit(self.current_kb() or "")
        if not self.checked_kbs():
            self.selection_changed.emit(self.ask_kbs())

    def _on_item_changed(self, *_: object) -> None:
        if not self._updating:
            self.selection_changed.emit(self.ask_kbs())

    def new_kb_dialog(self) -> None:
        name = ask_name(self, tr("New knowledge base"), tr("Name:"))
        if name:
            self.create_requested.emit(name)

    def _rename(self) -> None:
        old = self.current_kb()
        if not old:
            return
        new = ask_name(self, tr("Rename knowledge base"), tr("New name for {name}:", name=old), old)
        if new and new != old:
            self.rename_requested.emit(old, new)

    def _delete(self) -> None:
        name = self.current_kb()
        if name and confirm(self, tr("Delete knowledge base"),
                            tr("Delete the knowledge base {name} and its index? "
                               "Your files on disk are not touched.", name=name)):
            self.delete_requested.emit(name)

    # -- stats and documents ------------------------------------------------------------------------
    def set_stats(self, info: KBInfo | None, llm_id: str = "", unreadable: str = "") -> None:
        """The base's figures; ``None``: there is none yet, or (``unreadable``) why it can't be read now."""
        if info is None:
            self.stats_label.setText(unreadable or tr("No knowledge base yet. Drop a folder on the window to create one."))
            return
        lines = [
            tr_n("{n} file · {chunks} chunks · {failed} failed", "{n} files · {chunks} chunks · {failed} failed",
                 info.documents, chunks=info.chunks, failed=info.failed),
            tr("Last update: {when}", when=_when(info.updated_at)),
            tr("Embedder: {id} ({dim} d)", id=info.embedder or "?", dim=info.dim),
        ]
        if info.chunker:
            lines.append(tr("Chunks: {size} chars, overlap {overlap}",
                            size=info.chunker.get("size", "?"), overlap=info.chunker.get("overlap", "?")))
        if llm_id:
            lines.append(tr("Answer model: {id}", id=llm_id))
        if not info.documents:  # what to do with an empty base, and what it can read
            lines = [tr("{kb} is empty: drop files or folders on the window to add them.", kb=info.name),
                     tr("Read: PDF, Word, PowerPoint, Excel, OpenDocument, Markdown, text, HTML, e-mail "
                        "(.eml, .msg), and scans and photos (PNG, JPEG, TIFF) by OCR.")]
        self.stats_label.setText("\n".join(lines))

    def set_documents(self, rows: Sequence[DocumentRow], failures: dict[str, tuple[str, str, str]],
                      enriched: dict[str, dict] | None = None) -> None:
        """``enriched``: {doc_id: {"summary", "keywords"}} shown in each document's tooltip."""
        self.docs.clear()
        for row in rows:
            item = QTreeWidgetItem([Path(row.path).name, tr("indexed"), str(row.chunks)])
            item.setData(0, PATH_ROLE, row.path)
            item.setData(0, STATE_ROLE, "indexed")
            item.setData(0, DOC_ROLE, row.doc_id)
            tip = row.path + (f"\n{row.title}" if row.title else "")
            if row.tags or row.owner:
                tip += "\n" + " · ".join(([tr("tags: {tags}", tags=", ".join(row.tags))] if row.tags else [])
                                         + ([tr("owner: {owner}", owner=row.owner)] if row.owner else []))
            if row.warnings:
                tip += "\n" + "\n".join(row.warnings)
            about = (enriched or {}).get(row.doc_id)
            if about:
                tip += "\n\n" + about["summary"] + "\n" + tr("Keywords: {k}", k=", ".join(about["keywords"]))
            item.setToolTip(0, tip)
            item.setTextAlignment(2, Qt.AlignmentFlag.AlignRight)
            self.docs.addTopLevelItem(item)
        for path, (error, hint, _sha) in sorted(failures.items()):
            item = QTreeWidgetItem([Path(path).name, tr("failed"), ""])
            item.setData(0, PATH_ROLE, path)
            item.setData(0, STATE_ROLE, "failed")
            item.setForeground(1, QBrush(QColor("#b00020")))
            tip = f"{path}\n{error}" + (f"\n{hint}" if hint else "")
            for col in range(3):
                item.setToolTip(col, tip)
            self.docs.addTopLevelItem(item)
        self._update_buttons()

    def document_states(self) -> dict[str, str]:
        """{path: "indexed" | "failed"} as shown (for tests and the status bar)."""
        out = {}
        for i in range(self.docs.topLevelItemCount()):
            item = self.docs.topLevelItem(i)
            out[str(item.data(0, PATH_ROLE))] = str(item.data(0, STATE_ROLE))
        return out

    def selected_paths(self) -> list[str]:
        return [str(i.data(0, PATH_ROLE)) for i in self.docs.selectedItems() if i.data(0, STATE_ROLE) == "indexed"]

    def select_paths(self, paths: Iterable[str]) -> None:
        wanted = set(paths)
        for i in range(self.docs.topLevelItemCount()):
            item = self.docs.topLevelItem(i)
            item.setSelected(str(item.data(0, PATH_ROLE)) in wanted)

    def _edit_metadata(self, field: str) -> None:
        kb, paths = self.current_kb(), self.selected_paths()
        if kb and paths:
            self.metadata_requested.emit(kb, paths, field)

    def _remove(self) -> None:
        kb, paths = self.current_kb(), self.selected_paths()
        if not kb or not paths:
            return
        text = (tr("Remove {name} from {kb}?", name=Path(paths[0]).name, kb=kb) if len(paths) == 1
                else tr("Remove {n} files from {kb}?", n=len(paths), kb=kb))
        if confirm(self, tr("Remove files"), text):
            self.remove_files_requested.emit(kb, paths)

    def set_busy(self, busy: bool) -> None:
        """While knowledge bases are being changed, renaming/deleting is disabled."""
        self._busy = busy
        self._update_buttons()

    def _update_buttons(self) -> None:
        has_kb = self.current_kb() is not None
        busy = getattr(self, "_busy", False)
        self.rename_btn.setEnabled(has_kb and not busy)
        self.delete_btn.setEnabled(has_kb and not busy)
        self.remove_btn.setEnabled(has_kb and not busy and bool(self.selected_paths()))
