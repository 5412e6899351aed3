"""ONNX cross-encoder rerankers through fastembed, loaded from a local folder."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ModelError
from ._common import (
    ensure_model_max_length,
    find_onnx_file,
    force_offline,
    missing_package,
    require_dir,
    sigmoid,
)

__all__ = ["FastEmbedReranker"]


class FastEmbedReranker:
    """Scores (query, passage) pairs; returns sigmoid(logit) in [0, 1], in input order."""

    def __init__(
        self, model_id: str, path: str | Path, *, threads: int | None = None, batch_size: int = 16
    ) -> None:
        self.id = model_id
        self._dir = require_dir(path, f"Reranker {model_id}")
        self._threads = threads
        self._batch_size = max(1, batch_size)
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        force_offline()
        try:
            from fastembed.common.model_description import ModelSource
            from fastembed.rerank.cross_encoder import TextCrossEncoder
        except ImportError as exc:
            raise missing_package("fastembed", "desktop-kb[fastembed]", f"Reranker {self.id}") from exc
        model_file = find_onnx_file(self._dir)
        ensure_model_max_length(self._dir)
        key = f"{self._dir.resolve()}|{model_file}"
        name = f"desktop-kb/{self.id}@{hashlib.sha1(key.encode()).hexdigest()[:12]}"
        known = {m["model"].lower() for m in TextCrossEncoder.list_supported_models()}
        try:
            if name.lower() not in known:
                TextCrossEncoder.add_custom_model(
                    model=name,
                    sources=ModelSource(hf=self.id if "/" in self.id else "local/model"),
                    model_file=model_file,
                )
            return TextCrossEncoder(name, threads=self._threads, specific_model_path=str(self._dir))
        except (ValueError, OSError, RuntimeError) as exc:
            raise ModelError(f"Cannot load the reranker in {self._dir}: {exc}") from exc

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        with self._lock:
            if self._model is None:
                self._model = self._load()
            try:
                logits = list(self._model.rerank(query, list(passages), batch_size=self._batch_size))
            except (ValueError, RuntimeError) as exc:
                raise ModelError(f"Reranker {self.id} failed: {exc}") from exc
        if len(logits) != len(passages):
            raise ModelError(f"Reranker {self.id} returned {len(logits)} scores for {len(passages)} passages.")
        return sigmoid(logits)
