"""OCR with RapidOCR (PP-OCRv4 detection and recognition for Chinese and English, ONNX Runtime).

The models ship inside the ``rapidocr-onnxruntime`` wheel, so nothing is downloaded at run time.
Pages may be scanned sideways or upside down: a page whose text boxes are mostly taller than wide
is turned a quarter; then the recogniser reads a sample of the page's lines turned half round, and
if it is clearly more confident that way the page is upside down. The page is then read again the
right way up, so reading order and boxes are upright. (The per-line direction classifier is not
used: on dense upright pages it flipped good lines and voted pages upside down.)
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from ..errors import ModelError
from ..protocols import OcrRead
from ._common import missing_package

__all__ = ["RapidOcrEngine"]

_PIN = "rapidocr-onnxruntime==1.4.4"
_QT_VARS = ("QT_QPA_PLATFORM_PLUGIN_PATH", "QT_QPA_FONTDIR", "QT_PLUGIN_PATH")


class RapidOcrEngine:
    id = "rapidocr-onnxruntime/PP-OCRv4"

    def __init__(self, threads: int = 2) -> None:
        self.threads = max(1, int(threads))
        self._engine: Any = None
        self._lock = threading.Lock()

    def _get(self) -> Any:
        if self._engine is None:
            saved = {k: os.environ.get(k) for k in _QT_VARS}
            try:
                from rapidocr_onnxruntime import RapidOCR
            except ImportError as exc:
                if isinstance(exc, ModuleNotFoundError) and (exc.name or "").split(".")[0] in ("rapidocr_onnxruntime", ""):
                    raise missing_package("rapidocr_onnxruntime", _PIN, "Reading scanned pages (OCR)") from exc
                # installed, but a library it loads is not there (libGL.so.1 on a bare system)
                raise ModelError(f"Reading scanned pages (OCR) could not start: {exc}",
                                 "A system library is missing; on Debian or Ubuntu: sudo apt install libgl1 "
                                 "libxcb1 (every desktop has them).") from exc
            finally:  # opencv-python points Qt at its own plugins on import; the app's Qt keeps its own
                for key, value in saved.items():
                    if value is None:
                        os.environ.pop(key, None)
                    else:
                        os.environ[key] = value
            n = self.threads
            # text_score 0: every line comes back (an upside-down page reads at low confidence, and
            # that is how it is recognised); the ingest stage drops unsure lines itself.
            self._engine = RapidOCR(det_intra_op_num_threads=n, cls_intra_op_num_threads=n,
                                    rec_intra_op_num_threads=n, print_verbose=False, text_score=0.0)
        return self._engine

    def read(self, image: np.ndarray) -> OcrRead:
        with self._lock:
            engine = self._get()
            rotation = 0
            result = _run(engine, image)
            if _mostly_tall(result):
                rotation, image = 90, np.rot90(image, 1)
                result = _run(engine, image)
            if result and _upside_down(engine, image, result):
                rotation, image = (rotation + 180) % 360, np.rot90(image, 2)
                result = _run(engine, image)
        lines = tuple((str(text), float(score), _box(quad)) for quad, text, score in result if str(text).strip())
        return OcrRead(rotation, int(image.shape[1]), int(image.shape[0]), lines)


def _run(engine: Any, image: np.ndarray) -> list[Any]:
    result, _ = engine(np.ascontiguousarray(image), use_cls=False)
    return list(result or [])


def _box(quad: Any) -> tuple[float, float, float, float]:
    pts = np.asarray(quad, dtype=np.float32)
    x0, y0 = pts.min(axis=0)
    x1, y1 = pts.max(axis=0)
    return float(x0), float(y0), float(x1 - x0), float(y1 - y0)


def _mostly_tall(result: list[Any]) -> bool:
    """Most multi-character lines are boxes at least 1.5× taller than wide: the page is sideways."""
    boxes = [_box(quad) for quad, text, _ in result if len(str(text).strip()) >= 2]
    tall = sum(1 for _, _, w, h in boxes if h >= 1.5 * w)
    return bool(boxes) and tall * 2 > len(boxes)


def _upside_down(engine: Any, image: np.ndarray, result: list[Any], sample: int = 8) -> bool:
    """The recogniser is clearly more confident reading the longest lines turned half round."""
    longest = sorted(result, key=lambda r: -len(str(r[1])))[:sample]
    crops = engine.get_crop_img_list(np.ascontiguousarray(image),
                                     [np.asarray(quad, dtype=np.float32) for quad, _, _ in longest])
    turned, _ = engine.text_rec([np.ascontiguousarray(np.rot90(c, 2)) for c in crops])
    as_read = float(np.mean([float(score) for _, _, score in longest]))
    return float(np.mean([float(r[1]) for r in turned])) > as_read + 0.1
