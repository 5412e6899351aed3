"""The same VectorStore over qdrant-client: a Qdrant server or cluster by URL (or ``:memory:``)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..errors import KnowledgeBaseNotFound, StoreError
from ..protocols import ScoredRecord, SearchFilter, SparseVec, StoredPoint
from .base import SingleLegSearch
from .filters import PAYLOAD_INDEXES, conditions

__all__ = ["ServerStore"]

DENSE = "dense"
SPARSE = "bm25"
PREFIX = "desktop_kb__"


class ServerStore(SingleLegSearch):
    def __init__(self, url: str, api_key: str = "", exact_below: int = 100_000, timeout: float = 10.0) -> None:
        try:
            from qdrant_client import QdrantClient
        except ImportError as exc:  # pragma: no cover
            raise StoreError("qdrant-client is not installed.", "pip install qdrant-client") from exc
        if url == ":memory:":
            self._client = QdrantClient(location=":memory:")
        else:
            self._client = QdrantClient(url=url, api_key=api_key or None, timeout=int(timeout))
        self.exact_below = exact_below
        self._lock = threading.RLock()

    @staticmethod
    def _m() -> Any:
        from qdrant_client import models

        return models

    def _name(self, name: str) -> str:
        return PREFIX + name

    def _call(self, fn: Any, name: str) -> Any:
        with self._lock:
            try:
                return fn()
            except (KnowledgeBaseNotFound, StoreError):
                raise
            except Exception as exc:
                text = str(exc)
                if "not found" in text.lower() or "doesn't exist" in text.lower():
                    raise KnowledgeBaseNotFound(f"Knowledge base {name!r} has no collection on the server.") from exc
                raise StoreError(f"The Qdrant server failed for {name!r}: {text[:300]}",
                                 "Check the server URL in the settings and that the server is running.") from exc

    def has_collection(self, name: str) -> bool:
        return bool(self._call(lambda: self._client.collection_exists(self._name(name)), name))

    def create_collection(self, name: str, dim: int) -> None:
        m = self._m()
        if self.has_collection(name):
            return

        def create() -> None:
            self._client.create_collection(
                self._name(name),
                vectors_config={DENSE: m.VectorParams(size=dim, distance=m.Distance.COSINE)},
                sparse_vectors_config={SPARSE: m.SparseVectorParams(modifier=m.Modifier.IDF)},
            )
            for field, kind in PAYLOAD_INDEXES.items():
                schema = m.PayloadSchemaType.KEYWORD if kind == "keyword" else m.PayloadSchemaType.INTEGER
                self._client.create_payload_index(self._name(name), field, schema)

        self._call(create, name)

    def drop_collection(self, name: str) -> None:
        self._call(lambda: self._client.delete_collection(self._name(name)), name)

    def ensure_room(self, name: str, size: int) -> None:
        """The server keeps its own disk; it reports a full one as an error of its own."""

    def upsert(self, name: str, points: Sequence[StoredPoint]) -> None:
        if not points:
            return
        m = self._m()
        batch = [
            m.PointStruct(
                id=p.id,
                vector={DENSE: np.asarray(p.dense, dtype=np.float32).tolist(),
                        SPARSE: m.SparseVector(indices=list(p.sparse.indices), values=list(p.sparse.values))},
                payload=p.payload,
            )
            for p in points
        ]
        self._call(lambda: self._client.upsert(self._name(name), points=batch, wait=True), name)

    def delete(self, name: str, flt: SearchFilter, exclude_doc_ids: Sequence[str] = ()) -> None:
        if flt.is_empty():
            raise StoreError("Refusing to delete with an empty filter (it would delete everything).")
        m = self._m()
        selector = m.FilterSelector(filter=self._filter(flt, exclude_doc_ids))
        self._call(lambda: self._client.delete(self._name(name), points_selector=selector, wait=True), name)

    def set_payload(self, name: str, flt: SearchFilter, values: dict[str, Any]) -> None:
        if flt.is_empty():
            raise StoreError("Refusing to edit with an empty filter (it would change every passage).")
        m = self._m()
        selector = m.FilterSelector(filter=self._filter(flt))
        self._call(lambda: self._client.set_payload(self._name(name), payload=dict(values), points=selector,
                                                    wait=True), name)

    def count(self, name: str, flt: SearchFilter | None = None) -> int:
        res = self._call(lambda: self._client.count(self._name(name), count_filter=self._filter(flt), exact=True), name)
        return int(res.count)

    def scroll(self, name: str, flt: SearchFilter | None = None, limit: int = 10_000) -> list[ScoredRecord]:
        out: list[ScoredRecord] = []
        offset = None
        while len(out) < limit:
            records, offset = self._call(lambda o=offset: self._client.scroll(
                self._name(name), scroll_filter=self._filter(flt), limit=min(512, limit - len(out)),
                offset=o, with_payload=True), name)
            out.extend(ScoredRecord(str(r.id), 0.0, dict(r.payload or {})) for r in records)
            if offset is None or not records:
                break
        return out

    def points(self, name: str, batch: int = 256) -> Iterator[StoredPoint]:
        offset = None
        while True:
            records, offset = self._call(lambda o=offset: self._client.scroll(
                self._name(name), limit=batch, offset=o, with_payload=True, with_vectors=True), name)
            for r in records:
                vec = r.vector if isinstance(r.vector, dict) else {}
                sv = vec.get(SPARSE)
                yield StoredPoint(str(r.id), np.asarray(vec.get(DENSE, []), dtype=np.float32),
                                  SparseVec(tuple(sv.indices) if sv else (), tuple(sv.values) if sv else ()),
                                  dict(r.payload or {}))
            if offset is None or not records:
                return

    def search_both(
        self, name: str, dense: np.ndarray | None, sparse: SparseVec | None, flt: SearchFilter | None, limit: int
    ) -> tuple[list[ScoredRecord], list[ScoredRecord]]:
        m = self._m()
        f = self._filter(flt)
        requests, legs = [], []
        if dense is not None:
            requests.append(m.QueryRequest(query=np.asarray(dense, dtype=np.float32).tolist(), using=DENSE,
                                           filter=f, limit=limit, with_payload=True,
                                           params=m.SearchParams(exact=True)))
            legs.append("dense")
        if sparse is not None and len(sparse):
            requests.append(m.QueryRequest(
                query=m.SparseVector(indices=list(sparse.indices), values=list(sparse.values)),
                using=SPARSE, filter=f, limit=limit, with_payload=True))
            legs.append("sparse")
        responses = self._call(lambda: self._client.query_batch_points(self._name(name), requests), name) \
            if requests else []
        by_leg = {leg: [ScoredRecord(str(p.id), float(p.score), dict(p.payload or {})) for p in r.points]
                  for leg, r in zip(legs, responses, strict=True)}
        return by_leg.get("dense", []), by_leg.get("sparse", [])

    def flush(self, name: str) -> None:
        """Writes use wait=True; nothing to flush."""

    def close(self) -> None:
        with self._lock:
            self._client.close()

    def _filter(self, flt: SearchFilter | None, exclude_doc_ids: Sequence[str] = ()) -> Any:
        conds = conditions(flt, exclude_doc_ids)
        if not conds:
            return None
        m = self._m()
        must: list[Any] = []
        must_not: list[Any] = []
        for c in conds:
            if c.is_range:
                fc = m.FieldCondition(key=c.key, range=m.Range(gte=c.gte, lte=c.lte))
            else:
                fc = m.FieldCondition(key=c.key, match=m.MatchAny(any=list(c.any_of)))
            (must_not if c.negate else must).append(fc)
        return m.Filter(must=must or None, must_not=must_not or None)
