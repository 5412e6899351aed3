"""What the commands share: JSON output, the terminal progress bar, Ctrl-C as a clean stop, and
opening the data folder's library."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from ..progress import CancelToken, IngestProgress
from ..settings import Settings

__all__ = ["TerminalProgress", "cancel_on_sigint", "open_library", "print_json"]


def print_json(obj: Any, out: TextIO | None = None) -> None:
    (out or sys.stdout).write(json.dumps(obj, ensure_ascii=False, indent=2, default=str) + "\n")


class TerminalProgress:
    """A one-line progress bar on stderr (only when it is a terminal)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self._last = 0.0

    def __call__(self, p: IngestProgress) -> None:
        if not self.enabled or (time.monotonic() - self._last < 0.1 and p.stage != "done"):
            return
        self._last = time.monotonic()
        width = 24
        frac = p.files_done / p.files_total if p.files_total else 1.0
        bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
        eta = f" ETA {int(p.eta_s)}s" if p.eta_s is not None and p.stage != "done" else ""
        name = Path(p.current_file).name[:30]
        stage = f"OCR page {p.page}/{p.pages}" if p.stage == "ocr" else p.stage
        line = f"\r[{bar}] {p.files_done}/{p.files_total} files, {p.chunks_done} chunks{eta} {stage} {name}"
        self.stream.write(line.ljust(100)[:120])
        if p.stage == "done":
            self.stream.write("\n")
        self.stream.flush()


def cancel_on_sigint() -> CancelToken:
    """First Ctrl-C asks the work to stop cleanly; a second one aborts."""
    token = CancelToken()

    def handler(signum: int, frame: object) -> None:
        if token.cancelled:
            raise KeyboardInterrupt
        token.cancel()
        sys.stderr.write("\nStopping after the current step… (Ctrl-C again to abort)\n")

    signal.signal(signal.SIGINT, handler)
    return token


def open_library(settings: Settings) -> Any:
    from ..library import Library

    return Library.open(settings)
