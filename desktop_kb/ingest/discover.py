"""Discovery: walk files and folders, skip hidden/system files, hash content, and compare with the
manifest to classify every file as new, changed, unchanged or deleted."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..progress import CancelToken
from ..types import FileFailure, SourceFile
from .manifest import DocumentRow

__all__ = ["Discovery", "discover", "is_skipped_name", "sha256_file"]

_SYSTEM_NAMES = {"thumbs.db", "desktop.ini", ".ds_store", "icon\r", "$recycle.bin", "system volume information",
                 "__pycache__", "node_modules", ".git"}


@dataclass
class Discovery:
    new: list[SourceFile] = field(default_factory=list)
    changed: list[SourceFile] = field(default_factory=list)
    unchanged: list[SourceFile] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    failed: list[FileFailure] = field(default_factory=list)  # unreadable files
    skipped: list[str] = field(default_factory=list)  # files of a type that is not read

    @property
    def to_index(self) -> list[SourceFile]:
        return self.new + self.changed


def sha256_file(path: Path, cancel: CancelToken | None = None) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
            if cancel is not None:
                cancel.raise_if_cancelled()
    return h.hexdigest()


def is_skipped_name(name: str) -> bool:
    """Hidden, system, temporary and lock files and folders: never indexed, never reported."""
    lower = name.lower()
    return name.startswith((".", "~$", "~lock.")) or lower in _SYSTEM_NAMES or lower.endswith((".tmp", ".part"))


def _walk(root: Path, extensions: frozenset[str], exclude: tuple[str, ...],
          skipped: list[str]) -> Iterable[Path]:
    """Files under ``root`` with one of ``extensions``; the others are added to ``skipped``."""
    if root.is_file():
        yield root  # an explicitly named file is taken whatever its extension
        return
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames
                             if not is_skipped_name(d) and str(Path(dirpath, d).resolve()) not in exclude)
        for name in sorted(filenames):
            if is_skipped_name(name):
                continue
            p = Path(dirpath) / name
            if Path(name).suffix.lower() not in extensions:
                if p.is_file():
                    skipped.append(str(p.resolve()))
                continue
            if p.is_file():
                yield p


def discover(
    roots: Iterable[Path],
    extensions: Iterable[str],
    known: Mapping[str, DocumentRow],
    *,
    force: bool = False,
    cancel: CancelToken | None = None,
    exclude: Iterable[Path] = (),
) -> Discovery:
    """Classify files under ``roots`` against ``known`` (the manifest's rows).

    A file whose size and mtime match its manifest row reuses the recorded hash (like git's
    index); otherwise it is hashed. ``force`` treats every present file as changed. Folders in
    ``exclude`` (the app's own data folder) are never walked.
    Deleted = known files under one of the roots that are gone.
    """
    exts = frozenset(e.lower() for e in extensions)
    skip = tuple(str(Path(p).resolve()) for p in exclude)
    result = Discovery()
    seen: set[str] = set()
    resolved_roots: list[Path] = []
    for given in roots:
        root = Path(given).expanduser()
        try:
            root = root.resolve(strict=False)
        except OSError:
            pass
        resolved_roots.append(root)
        if not root.exists():
            if str(root) not in known and not any(p.startswith(str(root) + os.sep) for p in known):
                result.failed.append(FileFailure(str(root), f"{root} does not exist.", "Check the path."))
            continue
        folder = str(root if root.is_dir() else root.parent)
        if any(str(root) == s or str(root).startswith(s + os.sep) for s in skip):
            result.failed.append(FileFailure(str(root), f"{root} is inside desktop-kb's own data folder.",
                                             "Add your document folders, not the app's data folder."))
            continue
        for path in _walk(root, exts, skip, result.skipped):
            if cancel is not None:
                cancel.raise_if_cancelled()
            key = str(path.resolve())
            if key in seen:
                continue
            seen.add(key)
            try:
                st = path.stat()
                row = known.get(key)
                if row is not None and row.size == st.st_size and row.mtime_ns == st.st_mtime_ns and not force:
                    digest = row.sha256
                else:
                    digest = sha256_file(path, cancel)
            except OSError as exc:
                result.failed.append(FileFailure(key, f"Cannot read {path.name}: {exc.strerror or exc}",
                                                 "Check the file's permissions."))
                continue
            src = SourceFile(key, st.st_size, int(st.st_mtime), digest, folder)
            if row is None:
                result.new.append(src)
            elif force or row.sha256 != digest:
                result.changed.append(src)
            else:
                result.unchanged.append(src)
    for known_path in known:
        if known_path in seen:
            continue
        under = any(known_path == str(r) or known_path.startswith(str(r) + os.sep) for r in resolved_roots)
        if under and not Path(known_path).exists():
            result.deleted.append(known_path)
    return result


def mtime_ns(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0
