"""The knowledge-base side of the main window: listing the bases and the current one's documents
(stale results of an earlier refresh are dropped), creating, renaming, deleting, removing files.
A mixin of :class:`~desktop_kb.gui.main_window.MainWindow` (the same object, so no reference back
to the window is held anywhere); the workers capture only the Library and plain values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QMessageBox

from ..errors import DiskFull, KnowledgeBaseInUse, StoreError
from .damaged import DamagedDialog
from .i18n import tr
from .removed_dialog import RemovedDialog
from .tasks import TaskHandle

__all__ = ["KBWiring"]


class KBWiring:
    """Uses the window's ``lib``, ``runner``, ``kb_panel``, ``filter_bar``, ``chat``, ``state``,
    ``conversations``, ``watching`` and its ``_run`` / ``show_error`` / ``_close_viewer_for``."""

    def refresh(self) -> TaskHandle:
        """List the knowledge bases again (then the current one's documents)."""
        self._refresh_gen += 1
        gen = self._refresh_gen
        lib = self.lib
        handle = self._run(lambda _ctx: lib.list_kbs(), "refresh", lambda names: self._on_kbs(gen, names))
        return handle

    def _on_kbs(self, gen: int, names: list[str]) -> None:
        if gen != self._refresh_gen:
            return
        current = self._select_after_refresh or self.kb_panel.current_kb()
        self._select_after_refresh = None
        if self._check_after_refresh is not None:
            checked, self._check_after_refresh = self._check_after_refresh, None
        elif self.kb_panel.kb_names():
            checked = self.kb_panel.checked_kbs()
        else:
            checked = self.state.get("checked_kbs", [])
        self.kb_panel.set_kbs(names, [c for c in checked if c in names], current)
        if self.settings.ingest.watch and not self._shut_down:
            self.watching.sync(names, self.sync_paths)
        if not names:
            self.kb_panel.set_stats(None)
            self.kb_panel.set_documents([], {})
        self.kbs_refreshed.emit(list(names))

    def refresh_documents(self) -> TaskHandle | None:
        kb = self.kb_panel.current_kb()
        self._docs_gen += 1
        gen = self._docs_gen
        if not kb:
            return None
        lib = self.lib

        def load(_ctx: Any) -> tuple[Any, Any, Any, Any]:
            return lib.stats(kb), lib.documents(kb), lib.failures(kb), lib.enrichments(kb)

        def shown(result: Any) -> None:
            if gen != self._docs_gen:
                return
            info, rows, failures, enriched = result
            self.kb_panel.set_stats(info, self.settings.models.llm.id)
            self.kb_panel.set_documents(rows, failures, enriched)
            self.filter_bar.set_documents(rows)
            self.documents_refreshed.emit(kb)

        def failed(exc: BaseException) -> None:
            if gen == self._docs_gen:  # the base is listed: never "no knowledge base yet"
                self.kb_panel.set_stats(None, unreadable=tr(
                    "{kb} is open in another desktop-kb window or command; close it there to see its documents.", kb=kb)
                    if isinstance(exc, KnowledgeBaseInUse) else tr("{kb} could not be read.", kb=kb))
                self.kb_panel.set_documents([], {})
                if isinstance(exc, StoreError) and not isinstance(exc, KnowledgeBaseInUse | DiskFull):
                    self.check_kb(kb)  # damaged: what is wrong, and Repair, instead of a bare error
                else:
                    self.show_error(exc)

        return self._run(load, "documents", shown, failed)

    def check_kb(self, kb: str) -> TaskHandle:
        """Check ``kb`` in a worker and show what is wrong, with a Repair action."""
        lib = self.lib

        def shown(health: Any) -> None:
            if health.ok:
                self.damaged.discard(kb)
            else:
                self.damaged.add(kb)  # read-only (searching still works) until repaired
            self.damaged_dialog = DamagedDialog(self, health, lambda: self.repair_kb(kb))
            self.damaged_dialog.open()

        return self._run(lambda _ctx: lib.check_kb(kb), "check", shown)

    def repair_kb(self, kb: str) -> TaskHandle | None:
        if not self._kb_work_allowed():
            return None
        lib = self.lib
        self.statusBar().showMessage(tr("Repairing {kb}…", kb=kb))

        def repaired(report: Any) -> None:
            if report.after.ok:
                self.damaged.discard(kb)
            box = QMessageBox(QMessageBox.Icon.Information if report.after.ok else QMessageBox.Icon.Warning,
                              tr("Knowledge base {kb}", kb=kb),
                              tr("{kb} is repaired.", kb=kb) if report.after.ok else tr("{kb} is still damaged.", kb=kb),
                              QMessageBox.StandardButton.Close, self)
            box.setObjectName("repairedDialog")
            box.setInformativeText(DamagedDialog.repaired_text(report))
            self.repaired_dialog = box
            box.open()
            self.statusBar().clearMessage()
            self.refresh()
            self.refresh_documents()

        return self._run(lambda _ctx: lib.repair_kb(kb), "repair", repaired)

    def _on_selection(self, kbs: list[str]) -> None:
        self.chat.set_kbs(kbs)

    def create_kb(self, name: str) -> TaskHandle:
        lib = self.lib

        def created(_: Any) -> None:
            self._select_after_refresh = name
            self.refresh()
            self.statusBar().showMessage(tr("Created {name}.", name=name), 5000)

        return self._run(lambda _ctx: lib.create_kb(name), "create", created)

    def _kb_work_allowed(self) -> bool:
        # also a stopped answer whose worker has not reached its next cancel check yet
        busy = self._ingest is not None or any(self.runner.running(n) for n in ("ask", "preload", "remove"))
        if busy:
            self.statusBar().showMessage(tr("Wait until adding documents and answering have finished."), 6000)
        return not busy

    def rename_kb(self, old: str, new: str) -> TaskHandle | None:
        if not self._kb_work_allowed():
            return None
        lib = self.lib

        def renamed(_: Any) -> None:
            self._close_viewer_for(old)
            self.conversations.rename_kb(old, new)
            self._select_after_refresh = new
            self._check_after_refresh = [new if k == old else k for k in self.kb_panel.checked_kbs()]
            self.refresh()

        return self._run(lambda _ctx: lib.rename_kb(old, new), "rename", renamed)

    def delete_kb(self, name: str) -> TaskHandle | None:
        if not self._kb_work_allowed():
            return None
        lib = self.lib

        def deleted(_: Any) -> None:
            self._close_viewer_for(name)
            self.conversations.forget_kb(name)
            self.chat.set_kbs([])
            self.refresh()
            self.statusBar().showMessage(tr("Deleted {name}.", name=name), 5000)

        return self._run(lambda _ctx: lib.delete_kb(name), "delete", deleted)

    def remove_files(self, kb: str, paths: list[str]) -> TaskHandle:
        lib = self.lib

        def removed(done: Any) -> None:
            self.refresh_documents()
            if self.ingest_panel.finished:  # an old "Done. 11 added…" is no longer true
                self.ingest_panel.hide()
            self.statusBar().showMessage(tr("Removed {n} files.", n=len(done)) if len(done) != 1
                                         else tr("Removed 1 file."), 5000)

        return self._run(lambda _ctx: lib.remove_files(kb, paths), "remove", removed)

    def show_removed(self, kb: str) -> TaskHandle:
        """What was removed from ``kb``; the files chosen are put back (added again)."""
        lib = self.lib

        def shown(paths: Any) -> None:
            dialog = RemovedDialog(kb, paths, self)
            if dialog.exec() and dialog.chosen():
                chosen = dialog.chosen()
                lib.manifest(kb).include(chosen)  # a few rows of the manifest
                self.ingest_paths([p for p in chosen if Path(p).exists()], kb)

        return self._run(lambda _ctx: lib.excluded(kb), "removed", shown)
