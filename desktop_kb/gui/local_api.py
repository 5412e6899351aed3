"""The app's setting "Let other apps on this computer ask": the local API (:mod:`desktop_kb.api`)
served from inside the app's process, on the app's Library, on 127.0.0.1 only; and the dialog
where tokens are created (the secret shown once), listed and revoked."""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..errors import DesktopKBError
from ..settings import Settings
from . import errors
from .i18n import tr

__all__ = ["LocalApi", "TokenDialog"]

log = logging.getLogger(__name__)


class LocalApi:
    """Starts, restarts (a new Library) and stops the in-app server as the settings say."""

    def __init__(self) -> None:
        self.server: Any = None
        self.error = ""

    @property
    def running(self) -> bool:
        return self.server is not None

    def apply(self, settings: Settings, lib: Any) -> None:
        self.stop()
        self.error = ""
        if not settings.api.enabled:
            return
        try:
            from ..api.server import ServerThread

            server = ServerThread(lib, settings.data_dir, "127.0.0.1", settings.api.port)
            server.start()
        except ImportError as exc:
            self.error = tr("The local API needs the package {name} (desktop-kb[api]).", name=exc.name or "fastapi")
        except DesktopKBError as exc:
            self.error = str(exc)
        else:
            self.server = server
        if self.error:
            log.warning("the local API is not running: %s", self.error)

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None


class TokenDialog(QDialog):
    """API tokens: create (shown once), list, revoke."""

    def __init__(self, data_dir: Any, parent: QWidget | None = None) -> None:
        from ..api.tokens import TokenStore

        super().__init__(parent)
        self.setObjectName("tokenDialog")
        self.setWindowTitle(tr("API tokens"))
        self.store = TokenStore(data_dir)
        self.list = QListWidget()
        self.secret = QLineEdit()
        self.secret.setReadOnly(True)
        self.secret.setPlaceholderText(tr("A new token is shown here once."))
        create = QPushButton(tr("New token…"))
        create.clicked.connect(self.create_token)
        revoke = QPushButton(tr("Revoke"))
        revoke.clicked.connect(self.revoke_selected)
        row = QHBoxLayout()
        row.addWidget(create)
        row.addWidget(revoke)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        note = QLabel(tr("Programs on this computer send a token as “Authorization: Bearer …”."))
        note.setWordWrap(True)
        layout.addWidget(note)
        layout.addWidget(self.list)
        layout.addLayout(row)
        layout.addWidget(self.secret)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.refresh()

    def refresh(self) -> None:
        self.list.clear()
        for t in self.store.list():
            state = tr("active") if t.active else tr("revoked")
            self.list.addItem(f"{t.name} ({t.id}) — {state}")

    def create_token(self, name: str | None = None) -> str:
        if not name:
            name, ok = QInputDialog.getText(self, tr("New token"), tr("Name (which program uses it):"))
            if not ok:
                return ""
        try:
            _, secret = self.store.create(name)
        except DesktopKBError as exc:
            errors.show_error(self, exc)
            return ""
        self.secret.setText(secret)
        self.refresh()
        return secret

    def revoke_selected(self) -> None:
        item = self.list.currentItem()
        if item is None:
            return
        token_id = item.text().rsplit("(", 1)[-1].split(")", 1)[0]
        try:
            self.store.revoke(token_id)
        except DesktopKBError as exc:
            errors.show_error(self, exc)
        self.refresh()
