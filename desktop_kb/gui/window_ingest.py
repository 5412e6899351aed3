"""Adding documents from the main window: the Add dialogs, drag and drop anywhere on the window,
one background ingest or re-embedding at a time (later ones queue), its progress, end and cancel. A mixin of
:class:`~desktop_kb.gui.main_window.MainWindow` (the same object, so no reference back to the
window is held anywhere); the ingest worker captures only the Library and plain values."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QMimeData
from PySide6.QtGui import QDragEnterEvent, QDropEvent

from ..errors import DesktopKBError, user_message
from ..types import IngestReport
from .file_dialogs import existing_directory, open_file_names
from .i18n import tr, tr_n
from .ingest_panel import sync_summary
from .tasks import TaskHandle

__all__ = ["DEFAULT_KB", "IngestWiring", "local_paths"]

DEFAULT_KB = "default"


def local_paths(mime: QMimeData) -> list[str]:
    """The local files and folders in a drag (other URLs are ignored)."""
    if not mime.hasUrls():
        return []
    return [u.toLocalFile() for u in mime.urls() if u.isLocalFile() and u.toLocalFile()]


class IngestWiring:
    """Uses the window's ``lib``, ``runner``, ``settings``, ``kb_panel``, ``ingest_panel``, ``chat``,
    ``enriching``, ``_doc_refresh_timer``, ``_ingest`` / ``_ingest_queue`` and its refreshes."""

    def add_folder_dialog(self) -> None:
        folder = existing_directory(self, tr("Add a folder"), str(Path.home()))
        if folder:
            self.ingest_paths([folder])

    def add_files_dialog(self) -> None:
        patterns = " ".join(f"*{e}" for e in self.settings.extensions)
        files = open_file_names(self, tr("Add files"), str(Path.home()), tr("Documents ({patterns})", patterns=patterns))
        if files:
            self.ingest_paths(files)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if local_paths(event.mimeData()):
            event.acceptProposedAction()
            kb = self.kb_panel.current_kb() or DEFAULT_KB
            self.statusBar().showMessage(tr("Drop to add to {kb}", kb=kb))
        else:
            event.ignore()

    def dragMoveEvent(self, event: Any) -> None:
        if local_paths(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragLeaveEvent(self, event: Any) -> None:
        self.statusBar().clearMessage()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = local_paths(event.mimeData())
        if not paths:
            event.ignore()
            return
        event.acceptProposedAction()
        self.statusBar().clearMessage()
        self.ingest_paths(paths)

    def ingest_paths(self, paths: Sequence[str], kb: str | None = None) -> TaskHandle | None:
        """Add files/folders to ``kb`` (default: the selected knowledge base, else "default")."""
        return self._start_ingest(kb or self.kb_panel.current_kb() or DEFAULT_KB, [str(p) for p in paths])

    def sync_paths(self, paths: Sequence[str], kb: str) -> TaskHandle | None:
        """Bring ``kb`` up to date with its folders (the start-up scan, a watched change): the panel
        shows only when files are read, and reports like a sync ("2 files changed, updated")."""
        return self._start_ingest(kb, [str(p) for p in paths], sync=True)

    def reembed_kb(self, kb: str) -> TaskHandle | None:
        """Embed every file of ``kb`` again with the configured embedder (it was built with another
        one, or its index is lost), as an ingest: the same panel, Cancel and queue."""
        return self._start_ingest(kb, None)

    def _start_ingest(self, kb: str, paths: list[str] | None, sync: bool = False) -> TaskHandle | None:
        """``paths`` None: re-embed ``kb``."""
        if kb in self.damaged:  # read-only until repaired: nothing is written into a damaged base
            self.statusBar().showMessage(tr("{kb} is damaged: repair it first (right-click it: Check and repair…).",
                                            kb=kb), 10000)
            return None
        if self._ingest is not None:
            self._ingest_queue.append((kb, paths, sync))
            if not sync:
                self.statusBar().showMessage(tr("Queued: will be added after the current documents."), 6000)
            return None
        lib = self.lib
        known: set[str] = set()
        if sync and kb in self.kb_panel.kb_names():
            try:
                known = set(lib.failures(kb))  # a small table of the manifest
            except DesktopKBError:
                pass
        self.ingest_panel.start(kb, paths or [], reembed=paths is None, sync=sync, known_failed=known)
        self._ingest_kb = kb
        self._ingest_seen_done = 0

        def work(ctx: Any) -> IngestReport:
            if paths is None:
                return lib.reembed(kb, progress=ctx.progress, cancel=ctx.cancel)
            # a start-up or watch sync keeps out what the user removed; adding by hand brings it back
            return lib.ingest(kb, [Path(p) for p in paths], progress=ctx.progress, cancel=ctx.cancel,
                              restore=not sync)

        handle = self.runner.run(
            work, "ingest", progress=self._on_ingest_progress, finished=self._on_ingest_finished,
            failed=self._on_ingest_failed, cancelled=self._on_ingest_cancelled, done=self._on_ingest_done)
        self._ingest = handle
        self._update_busy()
        if kb not in self.kb_panel.kb_names():
            self._select_after_refresh = kb
        return handle

    def cancel_ingest(self) -> None:
        if self._ingest is not None:
            self._ingest.cancel()
            self._ingest_queue.clear()

    def _on_ingest_progress(self, p: Any) -> None:
        self.ingest_panel.on_progress(p)
        if p.files_done != self._ingest_seen_done:
            self._ingest_seen_done = p.files_done
            if self._ingest_kb not in self.kb_panel.kb_names():
                self.refresh()  # the knowledge base was just created
            elif self.kb_panel.current_kb() == self._ingest_kb and not self._doc_refresh_timer.isActive():
                self._doc_refresh_timer.start()  # show files as they are indexed

    def _on_ingest_finished(self, report: IngestReport) -> None:
        self.ingest_panel.on_finished(report)
        if self.ingest_panel.sync:
            self.statusBar().showMessage(sync_summary(report, self.ingest_panel.known_failed), 8000)
        else:
            self.statusBar().showMessage(
                tr("Cancelled; finished files stay indexed.") if report.cancelled else
                tr_n("Added 1 file to {kb}.", "Added {n} files to {kb}.", len(report.added) + len(report.updated),
                     kb=report.kb), 8000)
        self.ingest_finished.emit(report)

    def _on_ingest_failed(self, exc: BaseException) -> None:
        # the reason stays on the panel after the dialog is closed ("Not enough free space in …")
        self.ingest_panel.on_stopped(f"{tr('Adding documents failed.')} {user_message(exc)[0]}")
        self.show_error(exc)
        self.ingest_finished.emit(None)

    def _on_ingest_cancelled(self) -> None:
        self.ingest_panel.on_stopped(tr("Cancelled; finished files stay indexed."))
        self.ingest_finished.emit(None)

    def _on_ingest_done(self) -> None:
        self._ingest = None
        self._update_busy()
        kb = self._ingest_kb
        if kb in self.kb_panel.kb_names():
            self.kb_panel.set_current_kb(kb)
        else:
            self._select_after_refresh = kb
        self.refresh()
        self.refresh_documents()
        if self._ingest_queue:
            self._start_ingest(*self._ingest_queue.pop(0))
        elif kb:
            self.enriching.maybe_start(kb)

    @property
    def ingesting(self) -> bool:
        return self._ingest is not None

    def _update_busy(self) -> None:
        self.kb_panel.set_busy(self._ingest is not None or self.chat.busy)
