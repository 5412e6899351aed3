"""Embedding: dense vectors in batches from the configured embedder, BM25 sparse vectors from ours."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..progress import CancelToken
from ..protocols import Embedder, SparseEncoder, SparseVec
from ..types import Chunk
from .chunk import embed_text

__all__ = ["embed_chunks"]


def embed_chunks(
    chunks: Sequence[Chunk],
    embedder: Embedder,
    sparse: SparseEncoder,
    *,
    title: str = "",
    batch_size: int = 16,
    cancel: CancelToken | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> tuple[np.ndarray, list[SparseVec]]:
    """Dense matrix (n × dim) and one sparse vector per chunk, in chunk order."""
    texts = [embed_text(c, title) for c in chunks]
    dense: list[np.ndarray] = []
    for i in range(0, len(texts), max(batch_size, 1)):
        if cancel is not None:
            cancel.raise_if_cancelled()
        batch = texts[i:i + batch_size]
        vectors = np.asarray(embedder.embed_passages(batch), dtype=np.float32).reshape(len(batch), -1)
        dense.append(vectors)
        if on_batch is not None:
            on_batch(len(batch))
    matrix = np.vstack(dense) if dense else np.zeros((0, embedder.dim), dtype=np.float32)
    return matrix, [sparse.encode_document(t) for t in texts]
