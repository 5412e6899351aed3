"""The one entry script of the frozen app; the executable's name picks the program.

``desktop-kb`` (console) runs the CLI (``desktop_kb.cli:main``) and ``desktop-kb-gui`` (windowed on
Windows/macOS) the desktop app (``desktop_kb.gui.app:main``), exactly like the pyproject entry
points. ``DESKTOP_KB_ENTRY=cli|gui`` overrides the choice (e.g. to run the CLI from the .app).

``DESKTOP_KB_SMOKE_EXIT=1`` (GUI only, packaging smoke test): as soon as the main window is shown
and painted, print ``desktop-kb-smoke: window shown after N ms`` (N counted from process start)
and quit with the app's exit code.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from pathlib import Path

_T0 = time.perf_counter()


def _program() -> str:
    forced = os.environ.get("DESKTOP_KB_ENTRY", "").strip().lower()
    if forced in ("cli", "gui"):
        return forced
    name = Path(sys.executable if getattr(sys, "frozen", False) else sys.argv[0]).stem.lower()
    return "gui" if name.endswith("-gui") or name.endswith("_gui") else "cli"


def _process_uptime_ms() -> float:
    """Milliseconds since the process started (Linux: /proc; Windows: GetProcessTimes; else since
    this module ran)."""
    if sys.platform == "win32":
        return _windows_uptime_ms()
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as f:
            uptime_s = float(f.read().split()[0])
        return (uptime_s - start_ticks / os.sysconf("SC_CLK_TCK")) * 1000.0
    except (OSError, ValueError, IndexError, AttributeError):
        return (time.perf_counter() - _T0) * 1000.0


def _windows_uptime_ms() -> float:
    """The process's creation time against the clock, both FILETIMEs (100 ns units)."""
    import ctypes
    from ctypes import wintypes

    kernel32 = ctypes.WinDLL("kernel32")  # type: ignore[attr-defined]
    created, exited, kernel, user, now = (wintypes.FILETIME() for _ in range(5))
    if not kernel32.GetProcessTimes(kernel32.GetCurrentProcess(), ctypes.byref(created), ctypes.byref(exited),
                                    ctypes.byref(kernel), ctypes.byref(user)):
        return (time.perf_counter() - _T0) * 1000.0
    kernel32.GetSystemTimeAsFileTime(ctypes.byref(now))

    def ticks(ft: wintypes.FILETIME) -> int:
        return (ft.dwHighDateTime << 32) | ft.dwLowDateTime

    return (ticks(now) - ticks(created)) / 1e4


def _arm_gui_smoke() -> None:
    """Quit the GUI right after its main window is first painted, reporting the time."""
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QApplication, QMainWindow

    from desktop_kb.gui.app import create_app

    app = create_app()  # gui.app.main() reuses this instance

    class _Watcher(QObject):
        done = False

        def eventFilter(self, obj: QObject, event: QEvent) -> bool:
            if (not self.done and isinstance(obj, QMainWindow)
                    and event.type() in (QEvent.Type.Paint, QEvent.Type.Expose, QEvent.Type.Show)
                    and obj.isVisible()):
                self.done = True
                title = obj.windowTitle()
                QTimer.singleShot(0, lambda: self._report(title))
            return False

        def _report(self, title: str) -> None:
            print(f"desktop-kb-smoke: window shown after {_process_uptime_ms():.0f} ms ({title!r})", flush=True)
            QApplication.quit()

    watcher = _Watcher(app)
    app.installEventFilter(watcher)
    app._desktop_kb_smoke = watcher  # type: ignore[attr-defined]  # keep it alive


def main() -> int:
    multiprocessing.freeze_support()
    if _program() == "gui":
        if os.environ.get("DESKTOP_KB_SMOKE_EXIT") == "1":
            _arm_gui_smoke()
        from desktop_kb.gui.app import main as gui_main

        return int(gui_main() or 0)
    from desktop_kb.cli import main as cli_main

    return int(cli_main() or 0)


if __name__ == "__main__":
    sys.exit(main())
