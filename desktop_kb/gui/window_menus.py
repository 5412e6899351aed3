"""The main window's actions, menus (File, Chat, Help) and the Esc shortcut that stops an answer.
Nothing here is kept: the actions are the window's attributes and children, as before."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut

from . import archive_actions, doctor_dialog
from .i18n import tr

__all__ = ["build_actions"]


def build_actions(win: Any) -> None:
    """Create ``win``'s actions (``win.add_folder_action`` …), its menu bar and ``win.stop_shortcut``."""
    def action(text: str, slot: Callable[[], Any], shortcut: QKeySequence | str | None = None) -> QAction:
        a = QAction(text, win)
        if shortcut is not None:
            a.setShortcut(QKeySequence(shortcut))
        a.triggered.connect(slot)
        return a

    win.add_folder_action = action(tr("Add folder…"), win.add_folder_dialog, QKeySequence.StandardKey.Open)
    win.add_files_action = action(tr("Add files…"), win.add_files_dialog)
    win.new_kb_action = action(tr("New knowledge base…"), win.kb_panel.new_kb_dialog)
    win.export_action = action(tr("Export knowledge base…"), lambda: archive_actions.export_dialog(win))
    win.import_action = action(tr("Import knowledge base…"), lambda: archive_actions.import_dialog(win))
    win.settings_action = action(tr("Settings…"), win.open_settings, QKeySequence.StandardKey.Preferences)
    win.quit_action = action(tr("Quit"), win.close, QKeySequence.StandardKey.Quit)
    win.new_conv_action = action(tr("New conversation"), win.chat.new_conversation, QKeySequence.StandardKey.New)
    win.about_action = action(tr("About desktop-kb"), win.about)
    win.doctor_action = action(tr("Check this computer…"), lambda: doctor_dialog.check_computer(win))

    menu = win.menuBar()
    file_menu = menu.addMenu(tr("&File"))
    for a in (win.add_folder_action, win.add_files_action, win.new_kb_action, win.export_action,
              win.import_action):
        file_menu.addAction(a)
    file_menu.addSeparator()
    file_menu.addAction(win.settings_action)
    file_menu.addSeparator()
    file_menu.addAction(win.quit_action)
    chat_menu = menu.addMenu(tr("&Chat"))
    chat_menu.addAction(win.new_conv_action)
    help_menu = menu.addMenu(tr("&Help"))
    help_menu.addAction(win.doctor_action)
    help_menu.addAction(win.about_action)

    win.stop_shortcut = QShortcut(QKeySequence(Qt.Key.Key_Escape), win)
    win.stop_shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
    win.stop_shortcut.activated.connect(win.chat.stop)
