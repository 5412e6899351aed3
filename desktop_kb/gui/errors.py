"""The ONLY place in the GUI that builds error message boxes.

Every exception becomes ``(message, hint)`` through :func:`desktop_kb.errors.user_message`;
tracebacks go to the log, never to the user. :class:`~desktop_kb.errors.Cancelled` is not an
error and shows nothing. A missing model (:class:`~desktop_kb.errors.ModelNotInstalled`) shows
the first-run dialog that says which file is needed and where to put it. A knowledge base that
re-embedding repairs (:class:`~desktop_kb.errors.NeedsReembed`: built with another embedder, or
its index lost) gets a "Re-embed" button when the caller can start one.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..errors import Cancelled, ModelNotInstalled, NeedsReembed, user_message
from .core_messages import localize_pair
from .i18n import tr

__all__ = ["FirstRunDialog", "last_dialog", "show_error", "show_info"]

log = logging.getLogger(__name__)
_last: list[QDialog] = []  # the most recent dialog (tests and the screenshot script look at it)


def last_dialog() -> QDialog | None:
    """The most recently shown error dialog, if it is still open."""
    while _last:
        dlg = _last[-1]
        try:
            if dlg.isVisible():
                return dlg
        except RuntimeError:  # deleted on close
            pass
        _last.pop()
    return None


def _needed_file(message: str) -> str:
    """The path a ModelNotInstalled message names (``... not found: /x/y.gguf``), if any."""
    m = re.search(r"((?:[A-Za-z]:)?[\\/][^\s'\"]+)", message)
    return m.group(1).rstrip(".,;") if m else ""


class FirstRunDialog(QDialog):
    """A model is missing: say which file, where to put it, and how to install it."""

    def __init__(self, parent: QWidget | None, exc: ModelNotInstalled, models_dir: Path | None) -> None:
        super().__init__(parent)
        self.setObjectName("firstRunDialog")
        self.setWindowTitle(tr("A model is not installed"))
        message, hint = user_message(exc)
        needed = _needed_file(message)
        self.message, self.hint, self.needed_file = message, hint, needed
        self.models_dir = models_dir

        layout = QVBoxLayout(self)
        title = QLabel(tr("desktop-kb needs a model that is not installed yet."))
        title.setStyleSheet("font-weight: bold; font-size: 14px;")
        layout.addWidget(title)
        self.message_label = QLabel(message)
        self.message_label.setObjectName("message")
        self.message_label.setWordWrap(True)
        self.message_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.message_label)
        if needed:
            where = QLabel(tr("Needed file: {path}", path=needed))
            where.setWordWrap(True)
            where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            layout.addWidget(where)
        self.folder_label = QLabel(tr("Models folder: {path}", path=str(models_dir)) if models_dir else "")
        self.folder_label.setWordWrap(True)
        self.folder_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.folder_label.setVisible(models_dir is not None)
        layout.addWidget(self.folder_label)
        if hint:
            hint_label = QLabel(tr("What to do: {hint}", hint=hint))
            hint_label.setObjectName("hint")
            hint_label.setWordWrap(True)
            hint_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            layout.addWidget(hint_label)
        layout.addWidget(QLabel(tr("You can still add documents; answers need the model.")))

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        if models_dir is not None:
            open_btn = QPushButton(tr("Open models folder"))
            buttons.addButton(open_btn, QDialogButtonBox.ButtonRole.ActionRole)
            open_btn.clicked.connect(self._open_folder)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(560, 260)

    def text(self) -> str:
        return f"{self.message}\n{self.hint}"

    def _open_folder(self) -> None:
        assert self.models_dir is not None
        self.models_dir.mkdir(parents=True, exist_ok=True)
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.models_dir)))


def show_error(
    parent: QWidget | None,
    exc: BaseException,
    *,
    title: str | None = None,
    models_dir: Path | None = None,
    modal: bool = False,
    reembed: Callable[[str], object] | None = None,
) -> QDialog | None:
    """Show ``exc`` to the user. Returns the dialog (None for Cancelled). ``reembed(kb)`` starts
    re-embedding a knowledge base: given, a :class:`NeedsReembed` error offers it as a button.

    The dialog is window-modal and opened without blocking (``open()``), unless ``modal`` is set
    (used before the event loop runs).
    """
    if isinstance(exc, Cancelled):
        return None
    if not isinstance(exc, ModelNotInstalled):
        log.error("error shown to the user: %s", exc, exc_info=exc)
    dlg: QDialog
    if isinstance(exc, ModelNotInstalled):
        dlg = FirstRunDialog(parent, exc, models_dir)
    else:
        message, hint = localize_pair(*user_message(exc))
        box = QMessageBox(parent)
        box.setObjectName("errorDialog")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle(title or tr("desktop-kb"))
        box.setTextFormat(Qt.TextFormat.PlainText)  # messages may quote file names or document text
        box.setText(message)
        if hint:
            box.setInformativeText(hint)
        box.setStandardButtons(QMessageBox.StandardButton.Ok)
        kb = exc.kb if isinstance(exc, NeedsReembed) else None
        if kb and reembed is not None:
            button = box.addButton(tr("Re-embed {kb}", kb=kb), QMessageBox.ButtonRole.AcceptRole)
            button.setObjectName("reembedButton")
            button.setToolTip(tr("Reads its files again with the configured embedder; tags and owners stay."))
            button.clicked.connect(lambda: reembed(kb))
        dlg = box
    dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    _last.append(dlg)
    if modal:
        dlg.exec()
    else:
        dlg.open()
    return dlg


def show_info(parent: QWidget | None, title: str, text: str) -> QMessageBox:
    """A non-blocking information box (not an error)."""
    box = QMessageBox(parent)
    box.setObjectName("infoDialog")
    box.setIcon(QMessageBox.Icon.Information)
    box.setWindowTitle(title)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText(text)
    box.setStandardButtons(QMessageBox.StandardButton.Ok)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    _last.append(box)
    box.open()
    return box
