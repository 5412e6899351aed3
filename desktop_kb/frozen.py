"""Helpers for the frozen (PyInstaller) desktop app; harmless no-ops in a normal install.

A frozen build ships the default LLM read-only inside the bundle (``<bundle>/models/``), while
the user's data folder (``<data>/models/``) stays the writable place for installed models. The
model registry asks :func:`with_bundled_fallback` for a model that is absent from the data folder;
it answers with the bundled copy of the same name, if there is one.

Bundled model folders, in order: ``DESKTOP_KB_BUNDLED_MODELS`` (``os.pathsep``-separated; also
honoured outside a frozen app, e.g. for tests), then in a frozen app ``<sys._MEIPASS>/models``,
``<executable dir>/models`` and, in a macOS ``.app``, ``Contents/Resources/models``.
No heavy imports here: this module is imported by the PyInstaller runtime hook before the app.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = [
    "BUNDLED_MODELS_ENV",
    "bundle_dir",
    "bundled_model",
    "bundled_models_dirs",
    "force_offline_env",
    "is_frozen",
    "with_bundled_fallback",
]

BUNDLED_MODELS_ENV = "DESKTOP_KB_BUNDLED_MODELS"
_OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
_QUIET_ENV = {"HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_UPDATE_CHECK": "1", "DO_NOT_TRACK": "1"}


def is_frozen() -> bool:
    """True inside a PyInstaller (or similar) frozen executable."""
    return bool(getattr(sys, "frozen", False))


def bundle_dir() -> Path | None:
    """The folder holding the bundled Python modules and data (``sys._MEIPASS``), or None."""
    meipass = getattr(sys, "_MEIPASS", None)
    if meipass:
        return Path(meipass)
    if is_frozen():
        return Path(sys.executable).resolve().parent
    return None


def bundled_models_dirs() -> list[Path]:
    """Existing read-only model folders shipped with the app (empty in a normal install)."""
    candidates: list[Path] = [Path(p) for p in os.environ.get(BUNDLED_MODELS_ENV, "").split(os.pathsep) if p]
    if is_frozen():
        root = bundle_dir()
        exe_dir = Path(sys.executable).resolve().parent
        if root is not None:
            candidates.append(root / "models")
        candidates.append(exe_dir / "models")
        if sys.platform == "darwin" and exe_dir.name == "MacOS":  # Foo.app/Contents/MacOS/<exe>
            candidates.append(exe_dir.parent / "Resources" / "models")
    seen: set[Path] = set()
    out: list[Path] = []
    for c in candidates:
        try:
            key = c.resolve()
        except OSError:
            continue
        if key not in seen and c.is_dir():
            seen.add(key)
            out.append(c)
    return out


def bundled_model(name: str) -> Path | None:
    """The bundled file or folder called ``name`` (e.g. ``qwen2.5-…-q4_k_m.gguf``), or None."""
    if not name or name in (".", "..") or "/" in name or "\\" in name:
        return None
    for folder in bundled_models_dirs():
        candidate = folder / name
        if candidate.exists():
            return candidate
    return None


def with_bundled_fallback(path: Path) -> Path:
    """``path`` (a model file/folder in the data folder) when it exists, else the bundled model
    of the same name when there is one, else ``path`` unchanged (callers then report it missing)."""
    if path.exists():
        return path
    return bundled_model(path.name) or path


def force_offline_env() -> None:
    """Make the Hugging Face libraries work from local files only (the explicit online install
    still works: it flips these variables inside ``backends._common.hub_online``)."""
    os.environ.update(_OFFLINE_ENV)
    for key, value in _QUIET_ENV.items():
        os.environ.setdefault(key, value)
