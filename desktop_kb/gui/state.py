"""Window state (geometry, splitter sizes, selected knowledge bases) in ``<data_dir>/gui_state.json``.

Kept in the data folder rather than QSettings so a portable install or a test's temporary data
folder carries its own state.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..diskspace import write_text_atomic
from ..errors import DiskFull

__all__ = ["GuiState"]


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
