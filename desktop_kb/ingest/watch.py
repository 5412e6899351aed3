"""Folder watch: the folders of a knowledge base are watched, changes are debounced and handed on
in batches (the caller re-ingests them incrementally, in the background).

Qt-free: the CLI's ``desktop-kb watch`` and the app use the same :class:`FolderWatcher`. Events
(watchdog: inotify, FSEvents, ReadDirectoryChangesW) only mark paths as dirty; once no event has
come for ``debounce`` seconds the dirty set goes to ``on_batch`` in one call, so a file saved twice
in a second is ingested once and a burst of 500 new files is one batch. Hidden, temporary and
lock files and the app's own data folder are ignored. A start-up scan (an ordinary incremental
ingest of the folders) catches what changed while nothing was watching.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..progress import CancelToken
from .discover import is_skipped_name

__all__ = ["FolderWatcher", "run_headless", "to_ingest", "watched_folders"]


def watched_folders(folders: Iterable[str]) -> list[Path]:
    """The distinct folders to watch (a folder inside another watched one is covered by it)."""
    existing = sorted({Path(f) for f in folders if f and Path(f).is_dir()}, key=lambda p: len(p.parts))
    out: list[Path] = []
    for folder in existing:
        if not any(folder == o or o in folder.parents for o in out):
            out.append(folder)
    return out


def to_ingest(paths: Iterable[str | Path], known: Iterable[str], folders: Iterable[str | Path] = ()) -> list[Path]:
    """The changed paths worth an ingest: those that exist, and those that were indexed (a deleted
    file; a deleted folder as the indexed files it held, which an ingest then removes, since it
    keeps a missing folder it is asked for); never a temporary file that came and went. A watched
    folder that is gone (``folders``: an unplugged drive, a renamed folder) is left as it was
    indexed."""
    known = list(known)
    roots = [Path(f) for f in folders]
    out: list[Path] = []
    for p in map(Path, paths):
        s = str(p)
        if p.exists() or s in known:
            out.append(p)
        elif not any(p == r or p in r.parents for r in roots):
            out.extend(Path(k) for k in known if k.startswith(s + os.sep))
    return out


class FolderWatcher:
    """Watch ``folders``; call ``on_batch(paths)`` with the changed paths after a quiet period."""

    def __init__(self, folders: Sequence[Path], on_batch: Callable[[list[str]], None], *,
                 extensions: Iterable[str] = (), debounce: float = 2.0, exclude: Sequence[Path] = ()) -> None:
        self.folders = [Path(f) for f in folders]
        self.extensions = frozenset(e.lower() for e in extensions)
        self.on_batch = on_batch
        self.debounce = debounce
        self._exclude = tuple(str(Path(p).resolve()) for p in exclude)
        self._dirty: dict[str, float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._observer: Any = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> FolderWatcher:
        try:
            from watchdog.events import FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError as exc:
            raise ConfigError("Folder watch needs the watchdog package.", "pip install watchdog") from exc
        watcher = self

        class Handler(FileSystemEventHandler):  # type: ignore[misc]
            def on_any_event(self, event: Any) -> None:
                if event.event_type in ("opened", "closed_no_write") or (
                        event.is_directory and event.event_type == "modified"):  # a child changed: it says so
                    return
                for path in (getattr(event, "src_path", ""), getattr(event, "dest_path", "")):
                    if path:
                        watcher.mark(os.fsdecode(path))

        self._observer = Observer()
        for folder in self.folders:
            self._observer.schedule(Handler(), str(folder), recursive=True)
        self._observer.start()
        self._thread = threading.Thread(target=self._run, name="desktop-kb-watch", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FolderWatcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- events ------------------------------------------------------------------------------------
    def mark(self, path: str) -> None:
        """Note a changed path (also usable without watchdog, e.g. from QFileSystemWatcher)."""
        p = Path(path)
        root = next((f for f in self.folders if f == p or f in p.parents), None)
        rel = p.relative_to(root).parts if root is not None else p.parts[-1:]
        if any(is_skipped_name(part) for part in rel):  # inside .git, a hidden folder, a temp file …
            return
        ext = p.suffix.lower()
        if self.extensions and ext not in self.extensions and not p.is_dir() and (p.exists() or ext):
            return  # a file type that is not read (an editor's backup, a lock file …)
        resolved = str(p.resolve(strict=False))
        if any(resolved == e or resolved.startswith(e + os.sep) for e in self._exclude):
            return
        with self._lock:
            self._dirty[resolved] = time.monotonic()

    def pending(self) -> int:
        with self._lock:
            return len(self._dirty)

    def flush(self, force: bool = False) -> list[str]:
        """The dirty paths quiet for ``debounce`` seconds (all of them with ``force``), cleared."""
        now = time.monotonic()
        with self._lock:
            if not self._dirty or (not force and now - max(self._dirty.values()) < self.debounce):
                return []
            batch = sorted(self._dirty)
            self._dirty.clear()
        return batch

    def _run(self) -> None:
        while not self._stop.wait(min(0.2, self.debounce / 4)):
            batch = self.flush()
            if batch:
                try:
                    self.on_batch(batch)
                except Exception:  # the callback reports its own errors; watching goes on
                    pass


def run_headless(ingest: Callable[[list[Path]], Any], folders: Sequence[Path], cancel: CancelToken, *,
                 extensions: Iterable[str] = (), debounce: float = 2.0, exclude: Sequence[Path] = ()) -> None:
    """``desktop-kb watch``: a start-up scan, then every debounced batch, until ``cancel``."""
    ingest(list(folders))
    batches: list[list[str]] = []
    ready = threading.Condition()

    def queue(paths: list[str]) -> None:
        with ready:
            batches.append(paths)
            ready.notify()

    with FolderWatcher(folders, queue, extensions=extensions, debounce=debounce, exclude=exclude):
        while not cancel.cancelled:
            with ready:
                ready.wait(0.5)
                todo, batches[:] = list(batches), []
            for paths in todo:
                ingest([Path(p) for p in paths])
