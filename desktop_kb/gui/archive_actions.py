"""File ▸ Export / Import knowledge base: the core's archive (desktop_kb.library.archive) run in the
background, with the usual error dialog when an archive is damaged or was built with another
embedder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .file_dialogs import open_file_name, save_file_name
from .i18n import tr
from .tasks import TaskHandle

__all__ = ["export_dialog", "import_dialog", "run_export", "run_import"]

PATTERN = "desktop-kb archives (*.dkb);;All files (*)"


def run_export(win: Any, kb: str, path: str) -> TaskHandle:
    lib = win.lib
    return win._run(lambda _ctx: lib.export_kb(kb, path), "export", lambda header: win.statusBar().showMessage(
        tr("Exported {kb} ({n} passages) to {path}", kb=kb, n=header["points"], path=path), 10000))


def run_import(win: Any, path: str) -> TaskHandle:
    lib = win.lib

    def done(name: Any) -> None:
        win.statusBar().showMessage(tr("Imported {path} as {kb}", path=Path(path).name, kb=name), 10000)
        win._select_after_refresh = str(name)
        win.refresh()

    return win._run(lambda _ctx: lib.import_kb(path), "import", done)


def export_dialog(win: Any) -> TaskHandle | None:
    kb = win.kb_panel.current_kb()
    if not kb:
        return None
    path = save_file_name(win, tr("Export knowledge base"), str(Path.home() / f"{kb}.dkb"), PATTERN)
    return run_export(win, kb, path) if path else None


def import_dialog(win: Any) -> TaskHandle | None:
    path = open_file_name(win, tr("Import knowledge base"), str(Path.home()), PATTERN)
    return run_import(win, path) if path else None
