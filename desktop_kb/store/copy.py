"""Copy a knowledge base's passages from one store to another (``kb push``: into a Qdrant server
for users who outgrow one machine). Vectors and payloads are copied as they are; nothing is
re-embedded. The target collection is created with the same dimension; passages already there
with the same ids are overwritten, so a push can be repeated after more files were added."""

from __future__ import annotations

from collections.abc import Callable

from ..protocols import StoredPoint, VectorStore

__all__ = ["copy_points"]


def copy_points(src: VectorStore, dst: VectorStore, name: str, dim: int, *, batch: int = 256,
                on_batch: Callable[[int], None] | None = None) -> int:
    """Copy every point of ``name``; returns how many were copied."""
    dst.create_collection(name, dim)
    n = 0
    chunk: list[StoredPoint] = []
    for point in src.points(name, batch=batch):
        chunk.append(point)
        if len(chunk) >= batch:
            dst.upsert(name, chunk)
            n, chunk = n + len(chunk), []
            if on_batch is not None:
                on_batch(n)
    dst.upsert(name, chunk)
    dst.flush(name)
    return n + len(chunk)
