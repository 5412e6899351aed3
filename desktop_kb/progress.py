"""Progress reporting, cancellation and stage timings for long work in the core (no Qt here)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from .errors import Cancelled

__all__ = ["CancelToken", "IngestProgress", "ProgressCallback", "null_progress", "timed"]


class CancelToken:
    """A thread-safe flag; long work calls :meth:`raise_if_cancelled` between steps."""

    def __init__(self, parent: CancelToken | None = None) -> None:
        self._event = threading.Event()
        self._parent = parent  # a child is cancelled with its parent, or on its own

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set() or (self._parent is not None and self._parent.cancelled)

    @property
    def cancelled_here(self) -> bool:
        """Cancelled on its own (a child stopped by its owner), not through its parent."""
        return self._event.is_set() and not (self._parent is not None and self._parent.cancelled)

    def child(self) -> CancelToken:
        """A token its owner can cancel without cancelling this one; cancelling this one cancels it."""
        return CancelToken(self)

    def raise_if_cancelled(self) -> None:
        if self.cancelled:
            raise Cancelled()


@dataclass(frozen=True)
class IngestProgress:
    files_done: int
    files_total: int
    chunks_done: int
    current_file: str
    stage: str  # "discover" | "convert" | "ocr" | "embed" | "write" | "delete" | "done"
    elapsed_s: float
    eta_s: float | None
    page: int = 0  # during OCR: pages of the current file read so far, of ``pages``
    pages: int = 0


class ProgressCallback(Protocol):
    def __call__(self, progress: IngestProgress) -> None: ...


def null_progress(progress: IngestProgress) -> None:
    """A progress callback that ignores everything."""


@contextmanager
def timed(timings: dict[str, float], stage: str) -> Iterator[None]:
    """Adds the milliseconds the block takes to ``timings[stage]``."""
    t0 = time.perf_counter()
    try:
        yield
    finally:
        timings[stage] = timings.get(stage, 0.0) + round((time.perf_counter() - t0) * 1000, 1)
