"""The file dialogs the app opens (add a folder or files, import, export, settings' paths).

Qt's static getters would do, but under the Chinese UI Qt's own dialog showed "Look in:" and
"Files of type:" in English: Qt asks its catalogue for them with their shortcuts ("&Look in:"),
which qtbase_zh_CN has only without. So each dialog is made here and those two labels are set
from our catalogue; the platform's native dialog is still used where there is one.
"""

from __future__ import annotations

from PySide6.QtWidgets import QFileDialog, QWidget

from .i18n import tr

__all__ = ["existing_directory", "open_file_name", "open_file_names", "save_file_name"]


def _dialog(parent: QWidget | None, caption: str, start: str, filter_: str,
            mode: QFileDialog.FileMode, save: bool = False) -> QFileDialog:
    dialog = QFileDialog(parent, caption, start, filter_)
    dialog.setFileMode(mode)
    if mode == QFileDialog.FileMode.Directory:
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
    if save:
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    dialog.setLabelText(QFileDialog.DialogLabel.LookIn, tr("&Look in:"))
    dialog.setLabelText(QFileDialog.DialogLabel.FileType, tr("Files of &type:"))
    return dialog


def _chosen(dialog: QFileDialog) -> list[str]:
    return dialog.selectedFiles() if dialog.exec() == QFileDialog.DialogCode.Accepted else []


def existing_directory(parent: QWidget | None, caption: str, start: str) -> str:
    chosen = _chosen(_dialog(parent, caption, start, "", QFileDialog.FileMode.Directory))
    return chosen[0] if chosen else ""


def open_file_name(parent: QWidget | None, caption: str, start: str, filter_: str = "") -> str:
    chosen = _chosen(_dialog(parent, caption, start, filter_, QFileDialog.FileMode.ExistingFile))
    return chosen[0] if chosen else ""


def open_file_names(parent: QWidget | None, caption: str, start: str, filter_: str = "") -> list[str]:
    return _chosen(_dialog(parent, caption, start, filter_, QFileDialog.FileMode.ExistingFiles))


def save_file_name(parent: QWidget | None, caption: str, start: str, filter_: str = "") -> str:
    chosen = _chosen(_dialog(parent, caption, start, filter_, QFileDialog.FileMode.AnyFile, save=True))
    return chosen[0] if chosen else ""
