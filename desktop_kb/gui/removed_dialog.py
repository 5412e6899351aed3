"""The files and folders removed from a knowledge base, with "Put back": what the user removed
stays out of every re-scan (the start-up update, watch) until put back here."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from .i18n import tr

__all__ = ["RemovedDialog"]


class RemovedDialog(QDialog):
    """Lists ``paths`` (removed from ``kb``); :meth:`chosen` are those to put back."""

    def __init__(self, kb: str, paths: Sequence[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("Removed from {kb}", kb=kb))
        self.resize(520, 360)
        layout = QVBoxLayout(self)
        text = (tr("These files and folders were removed from {kb}; later scans of their folders keep them out. "
                   "Select some and put them back.", kb=kb) if paths
                else tr("Nothing was removed from {kb}.", kb=kb))
        label = QLabel(text)
        label.setWordWrap(True)
        layout.addWidget(label)
        self.list = QListWidget()
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        for p in paths:
            item = QListWidgetItem(Path(p).name + ("" if Path(p).is_file() else " " + tr("(not on disk now)")
                                                   if not Path(p).exists() else "/"))
            item.setToolTip(p)
            item.setData(256, p)
            self.list.addItem(item)
        layout.addWidget(self.list, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.put_back_btn = buttons.addButton(tr("Put back"), QDialogButtonBox.ButtonRole.AcceptRole)
        self.put_back_btn.setEnabled(False)
        self.list.itemSelectionChanged.connect(lambda: self.put_back_btn.setEnabled(bool(self.chosen())))
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def chosen(self) -> list[str]:
        return [str(i.data(256)) for i in self.list.selectedItems()]
