"""sentence-transformers CrossEncoder rerankers from a local folder (optional extra: desktop-kb[st])."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ModelError
from ._common import force_offline, missing_package, quiet_transformers, require_dir, sigmoid

__all__ = ["STReranker"]


class STReranker:
    """``CrossEncoder(path)`` on the CPU; returns sigmoid(logit) in [0, 1], in input order."""

    def __init__(self, path: str | Path, model_id: str = "", *, batch_size: int = 16) -> None:
        self._dir = require_dir(path, f"Reranker {model_id or path}")
        self.id = model_id or f"local/{self._dir.name}"
        self._batch_size = max(1, batch_size)
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        force_offline()
        quiet_transformers()
        try:
            import torch
            from sentence_transformers import CrossEncoder
        except ImportError as exc:
            raise missing_package("sentence-transformers", "desktop-kb[st]", f"Reranker {self.id}") from exc
        try:
            model = CrossEncoder(str(self._dir), device="cpu", local_files_only=True)
        except (ValueError, OSError, RuntimeError) as exc:
            raise ModelError(f"Cannot load the reranker in {self._dir}: {exc}") from exc
        return model, torch.nn.Identity()

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        with self._lock:
            if self._model is None:
                self._model = self._load()
            model, identity = self._model
            try:
                # Raw logits (no activation), so both reranker backends apply the same sigmoid.
                logits = model.predict(
                    [(query, p) for p in passages],
                    batch_size=self._batch_size,
                    activation_fn=identity,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
            except (ValueError, RuntimeError) as exc:
                raise ModelError(f"Reranker {self.id} failed: {exc}") from exc
        arr = np.asarray(logits, dtype=np.float64)
        if arr.ndim == 2:
            arr = arr[:, 0]  # multi-label heads: first logit, as fastembed does
        if arr.shape[0] != len(passages):
            raise ModelError(f"Reranker {self.id} returned {arr.shape[0]} scores for {len(passages)} passages.")
        return sigmoid(arr)
