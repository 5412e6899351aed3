"""An exclusive, non-blocking lock on a knowledge base folder, held by one process at a time.

The embedded store already locks its shard; this lock makes the manifest (and the pending-writes
recovery that runs from it) single-owner too, whatever the store: with a Qdrant server, two
processes sharing a data folder would otherwise "recover" each other's writes in flight. The OS
drops the lock when the process dies, so a crash never leaves a knowledge base locked.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["FolderLock"]


class FolderLock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self) -> bool:
        """Take the lock; False when another process (or another handle) holds it."""
        if self._fd is not None:
            return True
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if sys.platform == "win32":
                import msvcrt

                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            else:
                import fcntl

                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            if sys.platform == "win32":
                import msvcrt

                os.lseek(fd, 0, os.SEEK_SET)
                msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
            else:
                import fcntl

                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
