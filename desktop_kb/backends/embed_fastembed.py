"""ONNX embedders through fastembed, loaded from a local folder (BGE-M3 and generic ONNX exports)."""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ModelError, ModelNotInstalled
from ._common import (
    PrefixedEmbedder,
    config_dim,
    e5_prefixes,
    ensure_model_max_length,
    find_onnx_file,
    force_offline,
    missing_package,
    require_dir,
)

__all__ = ["FastEmbedEmbedder", "detect_pooling"]

# Known models whose pooling is not written in the folder (BGE-M3's dense vector is the CLS token).
_CLS_MODELS = ("bge-m3", "bge-small", "bge-base", "bge-large")


def detect_pooling(model_id: str, model_dir: Path | None) -> str:
    """"CLS" | "MEAN" | "LAST_TOKEN": from a sentence-transformers pooling config, else by name."""
    if model_dir is not None:
        for cfg in sorted(model_dir.glob("*_Pooling/config.json")):
            try:
                data = json.loads(cfg.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if data.get("pooling_mode_cls_token"):
                return "CLS"
            if data.get("pooling_mode_lasttoken"):
                return "LAST_TOKEN"
            if data.get("pooling_mode_mean_tokens"):
                return "MEAN"
    name = model_id.lower().split("/")[-1]
    return "CLS" if any(name.startswith(m) for m in _CLS_MODELS) else "MEAN"


class FastEmbedEmbedder(PrefixedEmbedder):
    """A dense ONNX embedder. ``path`` = a local model folder; "" = fastembed's own model name
    (works only if fastembed's cache already holds it: nothing is downloaded here)."""

    def __init__(
        self,
        model_id: str,
        path: str | Path = "",
        dim: int = 0,
        *,
        threads: int | None = None,
        cache_dir: str | Path | None = None,
        batch_size: int = 16,
    ) -> None:
        self.id = model_id
        self._dir = require_dir(path, f"Embedder {model_id}") if str(path) else None
        self._dim = dim or (config_dim(self._dir) if self._dir is not None else 0)
        self._threads = threads
        self._cache_dir = str(cache_dir) if cache_dir else None
        self._batch_size = max(1, batch_size)
        self._query_prefix, self._passage_prefix = e5_prefixes(model_id)
        self._model: Any = None
        self._lock = threading.Lock()

    # -- loading -----------------------------------------------------------------------------
    def _register(self, te_cls: Any, pooling: str) -> str:
        from fastembed.common.model_description import ModelSource, PoolingType

        assert self._dir is not None
        model_file = find_onnx_file(self._dir)
        key = f"{self._dir.resolve()}|{model_file}|{pooling}|{self._dim}"
        name = f"desktop-kb/{self.id}@{hashlib.sha1(key.encode()).hexdigest()[:12]}"
        known = {m["model"].lower() for m in te_cls.list_supported_models()}
        if name.lower() not in known:
            te_cls.add_custom_model(
                model=name,
                pooling=PoolingType(pooling),
                normalization=True,
                sources=ModelSource(hf=self.id if "/" in self.id else "local/model"),
                dim=self._dim,
                model_file=model_file,
            )
        return name

    def _load(self) -> Any:
        force_offline()
        try:
            from fastembed import TextEmbedding
        except ImportError as exc:
            raise missing_package("fastembed", "desktop-kb[fastembed]", f"Embedder {self.id}") from exc
        if self._dir is None:
            try:
                return TextEmbedding(
                    self.id, cache_dir=self._cache_dir, threads=self._threads, local_files_only=True
                )
            except (ValueError, OSError, RuntimeError) as exc:
                raise ModelNotInstalled(
                    f"Embedder {self.id} is not available locally ({exc}).",
                    "Copy its model folder here and run `desktop-kb models install --from DIR`.",
                ) from exc
        if self._dim <= 0:
            raise ModelError(f"Cannot tell the vector size of {self._dir}: set models.embedder.dim.")
        ensure_model_max_length(self._dir)
        pooling = detect_pooling(self.id, self._dir)
        try:
            model = TextEmbedding(
                self._register(TextEmbedding, pooling),
                threads=self._threads,
                specific_model_path=str(self._dir),
            )
            if pooling != "DISABLED" and _first_output_rank(model) == 2:
                # An export whose first output is already the sentence vector (e.g. dense_vecs).
                del model
                model = TextEmbedding(
                    self._register(TextEmbedding, "DISABLED"),
                    threads=self._threads,
                    specific_model_path=str(self._dir),
                )
        except (ValueError, OSError, RuntimeError) as exc:
            raise ModelError(f"Cannot load the embedder in {self._dir}: {exc}") from exc
        return model

    def _get(self) -> Any:
        if self._model is None:
            self._model = self._load()
        return self._model

    # -- Embedder ----------------------------------------------------------------------------
    def _raw(self, texts: list[str]) -> np.ndarray:
        try:
            return np.stack(list(self._get().embed(texts, batch_size=self._batch_size)))
        except (ValueError, RuntimeError) as exc:
            raise ModelError(f"Embedder {self.id} failed: {exc}") from exc


def _first_output_rank(text_embedding: Any) -> int:
    """Rank of the ONNX model's first output (3 = token states, 2 = pooled), 0 if unknown."""
    session = getattr(getattr(text_embedding, "model", None), "model", None)
    if session is None or not hasattr(session, "get_outputs"):
        return 0
    outputs = session.get_outputs()
    return len(outputs[0].shape) if outputs else 0
