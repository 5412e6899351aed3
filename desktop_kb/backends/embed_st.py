"""sentence-transformers embedders from a local folder (optional extra: desktop-kb[st])."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ModelError
from ._common import (
    PrefixedEmbedder,
    config_dim,
    e5_prefixes,
    force_offline,
    missing_package,
    quiet_transformers,
    require_dir,
)

__all__ = ["STEmbedder"]


class STEmbedder(PrefixedEmbedder):
    """``SentenceTransformer(path)`` on the CPU; vectors are L2-normalised float32."""

    def __init__(self, model_id: str, path: str | Path, dim: int = 0, *, batch_size: int = 16) -> None:
        self.id = model_id
        self._dir = require_dir(path, f"Embedder {model_id}")
        self._dim = dim or config_dim(self._dir)
        self._batch_size = max(1, batch_size)
        self._query_prefix, self._passage_prefix = e5_prefixes(model_id)
        self._model: Any = None
        self._lock = threading.Lock()

    def _get(self) -> Any:
        if self._model is None:
            force_offline()
            quiet_transformers()
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise missing_package(
                    "sentence-transformers", "desktop-kb[st]", f"Embedder {self.id}"
                ) from exc
            try:
                self._model = SentenceTransformer(str(self._dir), device="cpu", local_files_only=True)
            except (ValueError, OSError, RuntimeError) as exc:
                raise ModelError(f"Cannot load the embedder in {self._dir}: {exc}") from exc
        return self._model

    def _raw(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._get().encode(
            texts,
            batch_size=self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        ))
