"""Started from the AppImage (``APPIMAGE`` is set by its runtime): on the first start, offer a
menu entry for it, in the user's own applications folder (no root); asked once. The entry
points at the AppImage file where it is; ``remove_menu_entry`` takes it away again."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from PySide6.QtWidgets import QMessageBox, QWidget

from .i18n import tr
from .state import GuiState

__all__ = ["install_menu_entry", "menu_entry_file", "offer_menu_entry", "remove_menu_entry"]

STATE_KEY = "appimage_menu_offered"


def _data_home() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def menu_entry_file() -> Path:
    return _data_home() / "applications" / "desktop-kb.desktop"


def _icon_file() -> Path:
    return _data_home() / "icons" / "hicolor" / "256x256" / "apps" / "desktop-kb.png"


def install_menu_entry(appimage: Path, icon: Path | None) -> Path:
    """The menu entry (and icon) for ``appimage``; returns the entry's path."""
    entry = menu_entry_file()
    entry.parent.mkdir(parents=True, exist_ok=True)
    if icon is not None and icon.is_file():
        _icon_file().parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(icon, _icon_file())
    exe = str(appimage).replace('"', '\\"')
    entry.write_text(
        "[Desktop Entry]\nType=Application\nVersion=1.0\nName=desktop-kb\nGenericName=Document Q&A\n"
        "GenericName[zh_CN]=文档问答\nComment=Answers from your own documents, offline, with every claim cited\n"
        f'Exec="{exe}" %F\nTryExec={exe}\nIcon=desktop-kb\nTerminal=false\nStartupWMClass=desktop-kb\n'
        "Categories=Office;Utility;Qt;\nX-AppImage-Integrate=true\n", encoding="utf-8")
    return entry


def remove_menu_entry() -> None:
    menu_entry_file().unlink(missing_ok=True)
    _icon_file().unlink(missing_ok=True)


def offer_menu_entry(parent: QWidget | None, state: GuiState) -> bool:
    """Ask once, when started from an AppImage without a menu entry; True when one was added."""
    appimage = os.environ.get("APPIMAGE", "")
    if not appimage or state.get(STATE_KEY) or menu_entry_file().exists():
        return False
    state.set(**{STATE_KEY: True})
    state.save()
    answer = QMessageBox.question(
        parent, tr("desktop-kb"),
        tr("Add desktop-kb to your applications menu? It will start this file, {path}; move the file "
           "and it can be added again from here.", path=appimage))
    if answer != QMessageBox.StandardButton.Yes:
        return False
    appdir = os.environ.get("APPDIR", "")
    install_menu_entry(Path(appimage), Path(appdir) / "desktop-kb.png" if appdir else None)
    return True
