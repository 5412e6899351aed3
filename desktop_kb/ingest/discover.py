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
    excluded: list[str] = field(default_factory=list)  # files the user removed from the base, passed over

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
    removed: Iterable[str] = (),
) -> Discovery:
    """Classify files under ``roots`` against ``known`` (the manifest's rows).

    A file whose size and mtime match its manifest row reuses the recorded hash (like git's
    index); otherwise it is hashed. ``force`` treats every present file as changed. Folders in
    ``exclude`` (the app's own data folder) are never walked; files at or under a path in
    ``removed`` (what the user removed from the base) are passed over, listed in ``excluded``.
    Deleted = known files under one of the roots that are gone.
    """
    gone_by_choice = tuple(removed)
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
        if not root.exists():
            _missing_root(root, known, result, resolved_roots)
            continue
        resolved_roots.append(root)
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
            if any(key == r or key.startswith(r + os.sep) for r in gone_by_choice):
                result.excluded.append(key)
                continue
            if not _utf8(key):
                result.failed.append(FileFailure(_printable(key), f"The name of {_printable(path.name)} is not "
                                                 "valid text (UTF-8).", "Rename the file, then add it again."))
                continue
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
    _gone(known, seen, resolved_roots, result)
    return result


def _utf8(path: str) -> bool:
    """Whether a path is text (a name in another encoding comes from the OS as lone surrogates)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _printable(path: str) -> str:
    """The name as its bytes, those that are no UTF-8 written \\xff."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _missing_root(root: Path, known: Mapping[str, DocumentRow], result: Discovery, roots: list[Path]) -> None:
    """A path asked for that is not there. A file that was indexed is deleted; a folder that was
    is kept, whole, and said so: it may be moved, renamed or on a drive that is not plugged in
    (`kb remove` removes it on purpose)."""
    if str(root) in known:
        roots.append(root)
        return
    under = sum(1 for p in known if p.startswith(str(root) + os.sep))
    if under:
        result.failed.append(FileFailure(str(root), f"{root} is not there: its {under} documents stay in the "
                                         "knowledge base (moved, renamed, or on a drive not plugged in?).",
                                         "Reconnect it and add it again; to remove them: desktop-kb kb remove "
                                         "NAME FOLDER."))
    else:
        result.failed.append(FileFailure(str(root), f"{root} does not exist.", "Check the path."))


def _gone(known: Mapping[str, DocumentRow], seen: set[str], roots: list[Path], result: Discovery) -> None:
    """Known files under the roots walked that are no longer there: deleted. One that cannot be
    looked at (a folder made unreadable) is kept and reported."""
    for known_path in known:
        if known_path in seen:
            continue
        if not any(known_path == str(r) or known_path.startswith(str(r) + os.sep) for r in roots):
            continue
        try:
            os.stat(known_path)
        except (FileNotFoundError, NotADirectoryError):
            result.deleted.append(known_path)
        except OSError as exc:
            result.failed.append(FileFailure(known_path, f"Cannot read {Path(known_path).name}: "
                                             f"{exc.strerror or exc}; it stays as it was indexed.",
                                             "Check the folder's permissions."))


def mtime_ns(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0
