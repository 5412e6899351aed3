"""Folder watch in the app: the core's FolderWatcher per knowledge base, its batches brought to the
GUI thread by a signal and queued as ordinary background ingests (progress, cancel, per-file
errors as for any added folder)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from ..ingest.watch import FolderWatcher, to_ingest, watched_folders
from ..library.kb import Library

__all__ = ["Watching"]


class Watching(QObject):
    changed = Signal(str, list)  # knowledge base, changed paths (emitted from the watcher thread)

    def __init__(self, lib: Library, parent: QObject | None = None, debounce: float = 2.0) -> None:
        super().__init__(parent)
        self.lib = lib
        self.debounce = debounce
        self._watchers: dict[str, tuple[tuple[Path, ...], FolderWatcher]] = {}
        self._scanned = False

    def folders(self, kb: str) -> tuple[Path, ...]:
        return self._watchers[kb][0] if kb in self._watchers else ()

    def update(self, kbs: Sequence[str]) -> list[str]:
        """Watch the folders of ``kbs`` (and stop watching the others); returns the bases whose
        watch (re)started, which the caller scans once for what changed meanwhile."""
        started = []
        for kb in set(self._watchers) - set(kbs):
            self._watchers.pop(kb)[1].stop()
        for kb in kbs:
            try:
                folders = tuple(watched_folders(r.folder for r in self.lib.documents(kb)))
            except Exception:  # a base that cannot be read now is not watched (the app says why elsewhere)
                continue
            if kb in self._watchers and self._watchers[kb][0] == folders:
                continue
            if kb in self._watchers:
                self._watchers.pop(kb)[1].stop()
            if not folders:
                continue
            watcher = FolderWatcher(folders, lambda paths, k=kb: self.changed.emit(k, self._wanted(k, paths)),
                                    extensions=self.lib.settings.extensions, debounce=self.debounce,
                                    exclude=(self.lib.settings.data_dir,))
            self._watchers[kb] = (folders, watcher.start())
            started.append(kb)
        return started

    def sync(self, kbs: Sequence[str], ingest: Callable[[list[str], str], object]) -> None:
        """Watch every base's folders; the first time, ``ingest`` them once (a start-up scan for
        what changed while the app was closed)."""
        started = self.update(kbs)
        if not self._scanned:
            self._scanned = True
            for kb in started:
                ingest([str(f) for f in self.folders(kb)], kb)

    def _wanted(self, kb: str, paths: list[str]) -> list[str]:
        """Changed paths that exist, or that were indexed (deletions); never a vanished temp file."""
        return [str(p) for p in to_ingest(paths, (r.path for r in self.lib.documents(kb)), self.folders(kb))]

    def stop(self) -> None:
        for _, watcher in self._watchers.values():
            watcher.stop()
        self._watchers.clear()
