"""desktop-kb's own reader: the shipped trained weights and the runnable folder built from them.

The reader is the same e5 encoder as the cross-encoder (:mod:`.cross_encoder`), trained separately
(``training/reader.py``) with a span head on every token: where in the evidence the answer to the
question stands, or nowhere. The answer check adds what it says to the verifier's probability
(:mod:`desktop_kb.backends.reader_e5`). It ships, is built and is checked the way the cross-encoder
is — ``weights.npz`` and ``manifest.json`` in ``desktop_kb/resources/models/e5-reader/``, built at
``desktop-kb models install`` into the models folder — and its built ``model.onnx`` has a second
output, ``span_logits`` [batch, seq, 2]. It is built in float32 (from the int8-per-row weights): the
int8 graph moved its spans more than the stored weights do, and ran no faster (measured on 2 cores).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ModelError
from ..settings import Settings
from .cross_encoder import build_cross_encoder, read_dir, verify_cross_encoder

__all__ = ["READER_DIRNAME", "install_reader", "reader_build_dir", "reader_dir", "shipped_reader_dir", "verify_reader"]

READER_DIRNAME = "e5-reader"


def shipped_reader_dir() -> Path:
    return Path(__file__).resolve().parents[1] / "resources" / "models" / READER_DIRNAME


def reader_build_dir(settings: Settings) -> Path:
    return settings.models_dir / READER_DIRNAME


def reader_dir(settings: Settings) -> Path:
    """The folder the app reads: the built one, else the one shipped in the frozen app."""
    return read_dir(reader_build_dir(settings), shipped_reader_dir())


def verify_reader(folder: Path) -> dict[str, Any]:
    """The built folder's manifest, or ModelError when it is missing, damaged or has no span head."""
    meta = verify_cross_encoder(folder, what="reader")
    if "span" not in (meta.get("heads") or []):
        raise ModelError(f"{folder} holds no reader (no span head).", "Rebuild it with `desktop-kb models install`.")
    return meta


def install_reader(settings: Settings, *, force: bool = False) -> Path:
    """``desktop-kb models install``: the runnable reader in the models folder."""
    return build_cross_encoder(reader_build_dir(settings), weights=shipped_reader_dir(), precision="fp32", force=force,
                               what="reader")
