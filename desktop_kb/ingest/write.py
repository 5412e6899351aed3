"""Writing: chunk payloads and points, upserted before the old version of the file is removed."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..protocols import SparseVec, StoredPoint, VectorStore
from ..types import Chunk, SourceFile

__all__ = ["build_points", "write_points"]

UPSERT_BATCH = 256


def build_points(
    kb: str, src: SourceFile, chunks: Sequence[Chunk], dense: np.ndarray, sparse: Sequence[SparseVec],
    *, tags: Sequence[str], owner: str, ingested_at: int, title: str,
) -> list[StoredPoint]:
    return [
        StoredPoint(
            id=c.chunk_id,
            dense=dense[i],
            sparse=sparse[i],
            payload={
                "kb": kb, "doc_id": c.doc_id, "chunk_id": c.chunk_id, "path": c.path, "folder": src.folder,
                "tags": list(tags), "owner": owner, "mtime": src.mtime, "ingested_at": ingested_at,
                "heading_path": list(c.heading_path), "pages": list(c.pages), "start": c.start, "end": c.end,
                "index": c.index, "text": c.text, "title": title,
            },
        )
        for i, c in enumerate(chunks)
    ]


def write_points(store: VectorStore, kb: str, points: Sequence[StoredPoint]) -> None:
    for i in range(0, len(points), UPSERT_BATCH):
        store.upsert(kb, points[i:i + UPSERT_BATCH])
