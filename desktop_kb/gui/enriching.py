"""Enrichment in the app: after documents are added to a knowledge base whose ``enrich`` flag is
on (`ingest --enrich`, `desktop-kb enrich KB`), its new documents are summarised in the background,
one at a time, with progress in the status bar; Stop on quit, resumed next time."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from ..library.kb import Library
from ..progress import IngestProgress
from .i18n import tr
from .tasks import TaskHandle, TaskRunner

__all__ = ["Enriching"]


class Enriching(QObject):
    finished = Signal(str)  # the knowledge base whose documents were enriched
    message = Signal(str)  # a status line (the window shows it; no reference back to it here)

    def __init__(self, lib: Library, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.lib, self.runner = lib, runner
        self.handle: TaskHandle | None = None

    def maybe_start(self, kb: str) -> TaskHandle | None:
        """Enrich ``kb`` now if it asks for it and nothing else is enriching."""
        if self.handle is not None:
            return None
        try:
            wanted = bool(self.lib.manifest(kb).get_meta("enrich"))
        except Exception:  # a base that cannot be opened now: nothing to do
            return None
        if not wanted:
            return None
        lib = self.lib

        def work(ctx: Any) -> Any:
            def progress(done: int, total: int, eta: float | None) -> None:
                ctx.progress(IngestProgress(done, total, 0, "", "enrich", 0.0, eta))

            return lib.enrich(kb, progress=progress, cancel=ctx.cancel)

        def shown(p: IngestProgress) -> None:
            if p.files_total and p.files_done < p.files_total:
                eta = tr(", about {s} s left", s=int(p.eta_s)) if p.eta_s else ""
                self.message.emit(tr("Summarising {kb}: {done} of {total} documents{eta}", kb=kb, done=p.files_done,
                               total=p.files_total, eta=eta))

        def done(_result: Any = None) -> None:
            self.handle = None
            self.finished.emit(kb)

        self.handle = self.runner.run(work, "enrich", progress=shown, finished=done,
                                      failed=lambda _e: done(), cancelled=done)
        return self.handle

    def cancel(self) -> None:
        if self.handle is not None:
            self.handle.cancel()
