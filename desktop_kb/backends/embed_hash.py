"""A deterministic fake embedder for plumbing unit tests ONLY (meaningless vectors)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from ._common import l2_normalise

__all__ = ["HashEmbedder"]


class HashEmbedder:
    """Hashes character 1–3-grams into ``dim`` buckets (signed), then L2-normalises.

    Texts sharing many n-grams get similar vectors, which is enough to test retrieval plumbing.
    Never use it for real search.
    """

    id = "test/hash-embedder"

    def __init__(self, dim: int = 64) -> None:
        if dim < 2:
            raise ValueError("dim must be at least 2")
        self.dim = dim

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float32)
        s = " ".join(text.lower().split())
        for n in (1, 2, 3):
            for i in range(max(0, len(s) - n + 1)):
                digest = hashlib.blake2b(s[i : i + n].encode("utf-8"), digest_size=8).digest()
                h = int.from_bytes(digest, "little")
                vec[h % self.dim] += 1.0 if (h >> 63) & 1 else -1.0
        if not vec.any():
            vec[0] = 1.0  # empty text: a fixed unit vector rather than zeros
        return l2_normalise(vec)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._vector(t) for t in texts]).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)
