"""Free disk space: every writer checks it before it writes, and a full disk becomes one message.

The embedded store keeps its data in memory-mapped files that it creates *sparse* (a new
knowledge base is ~220 MB of file that takes ~0.5 MB of disk) and fills page by page. On a disk
without room the kernel cannot back a page when it is first written and kills the process with
``SIGBUS``: no exception, no message. So nothing may write into the store unless the disk could
hold every page its mapped files can still take (:func:`store_headroom`, at most
``STORE_HEADROOM_CAP``) plus what the write itself adds, a few times over (write-ahead log,
storage, index).

Writers call :func:`ensure_free` before they start and between batches, with what they are about
to write; a check that fails raises :class:`~desktop_kb.errors.DiskFull` naming the folder, the
space free and the space needed, before anything of the batch is written. Errors that still come
from below (``ENOSPC`` from the OS, SQLite's "database or disk is full", an engine failure while
the disk is nearly full) are turned into the same error by :func:`disk_full` — decided by the
error's type and code, or by the free space measured after it, never by its text.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import DiskFull
from .errors import human_size as human

__all__ = ["FRESH_STORE", "MARGIN", "STORE_HEADROOM_CAP", "disk_full", "ensure_free", "free_bytes",
           "guard", "human", "store_headroom", "store_need", "write_text_atomic"]

MiB = 1 << 20
MARGIN = 16 * MiB  # kept free beyond every estimate: the OS, logs, the manifest's journal
FRESH_STORE = 224 * MiB  # the mapped files of a new knowledge base's store (measured: 222 MB)
STORE_HEADROOM_CAP = 256 * MiB  # at most this much of a store's unwritten mapped pages is counted
STORE_COPIES = 4  # a point is written to the log, its storage and indexes: bytes × this


def _existing(path: Path) -> Path:
    path = Path(path).absolute()
    while not path.exists() and path.parent != path:
        path = path.parent
    return path


def free_bytes(path: Path) -> int:
    """Free space, for this user, on the disk that holds ``path`` (or would hold it)."""
    return shutil.disk_usage(_existing(path)).free


def store_headroom(folder: Path) -> int:
    """The bytes the store's mapped files in ``folder`` can still take without growing: their
    size less the disk they already use (each file sparse until written), capped."""
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                st = os.stat(os.path.join(root, name))
            except OSError:
                continue
            blocks = getattr(st, "st_blocks", None)
            if blocks is not None:  # no st_blocks (Windows): files are not sparse there
                total += max(0, st.st_size - blocks * 512)
        if total >= STORE_HEADROOM_CAP:
            return STORE_HEADROOM_CAP
    return total


def store_need(folder: Path, write_bytes: int) -> int:
    """The free space a store write of ``write_bytes`` needs in ``folder`` (its shard)."""
    headroom = store_headroom(folder) if folder.exists() else FRESH_STORE
    return headroom + STORE_COPIES * max(0, write_bytes) + MARGIN


def ensure_free(folder: Path, needed: int, what: str) -> None:
    """Raise :class:`DiskFull` unless the disk of ``folder`` has ``needed`` bytes free.
    ``what`` says what was about to be written ("to add report.pdf")."""
    free = free_bytes(folder)
    if free < needed:
        raise DiskFull(Path(folder), free, needed, what)


def disk_full(exc: BaseException, folder: Path, needed: int = MARGIN, what: str = "") -> DiskFull | None:
    """The :class:`DiskFull` that ``exc`` (raised while writing into ``folder``) amounts to, or None:
    by its type and code (``ENOSPC``, ``EDQUOT``, SQLite's ``SQLITE_FULL``), or, for an engine's
    untyped error, when the disk is now short of ``needed``."""
    if isinstance(exc, DiskFull):
        return exc
    full = (isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)) or (
        isinstance(exc, sqlite3.Error) and getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL)
    try:
        free = free_bytes(folder)
    except OSError:
        return None
    if full or free < needed:
        return DiskFull(Path(folder), free, max(needed, free + 1) if full else needed, what)
    return None


@contextmanager
def guard(folder: Path, needed: int = MARGIN, what: str = "") -> Iterator[None]:
    """Run a write; an error that means the disk is full comes out as :class:`DiskFull`."""
    try:
        yield
    except Exception as exc:
        full = disk_full(exc, folder, needed, what)
        if full is None or full is exc:
            raise
        raise full from exc


def write_text_atomic(path: Path, text: str, what: str = "") -> None:
    """Write ``text`` to ``path`` through a temporary file in its folder, replaced in one step:
    on a full disk the old file stays as it was and :class:`DiskFull` is raised."""
    path = Path(path)
    data = text.encode("utf-8")
    ensure_free(path.parent, len(data) + MARGIN, what or f"to save {path.name}")
    tmp = path.with_name(path.name + ".tmp")
    try:
        with guard(path.parent, len(data) + MARGIN, what or f"to save {path.name}"):
            tmp.write_bytes(data)
            os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
