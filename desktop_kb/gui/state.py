"""Window state (geometry, splitter sizes, selected knowledge bases) in ``<data_dir>/gui_state.json``.

Kept in the data folder rather than QSettings so a portable install or a test's temporary data
folder carries its own state. The one exception is the data folder itself (chosen in Settings),
which must be found before any data folder is open: that lives in QSettings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings

from ..diskspace import write_text_atomic
from ..errors import DiskFull

__all__ = ["GuiState", "remember_data_dir", "remembered_data_dir"]


def _qsettings() -> QSettings:
    return QSettings("desktop-kb", "desktop-kb")


def remember_data_dir(path: Path) -> None:
    """Remember a data folder chosen in Settings (used when neither --data-dir nor
    DESKTOP_KB_DATA_DIR is given)."""
    _qsettings().setValue("data_dir", str(path))


def remembered_data_dir() -> str | None:
    value = _qsettings().value("data_dir")
    return str(value) if value else None


class GuiState:
    def __init__(self, data_dir: Path) -> None:
        self.path = Path(data_dir) / "gui_state.json"
        self.values: dict[str, Any] = {}
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            if isinstance(raw, dict):
                self.values = raw
        except (OSError, ValueError):
            pass

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def set(self, **values: Any) -> None:
        self.values.update(values)

    def save(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(self.path, json.dumps(self.values, ensure_ascii=False, indent=1))
        except (OSError, DiskFull):
            pass  # losing the window size is not worth an error dialog
