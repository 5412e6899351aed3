"""Embedded store: Qdrant's own engine in the process (qdrant-edge-py, pinned), one shard per KB.

Each shard lives in ``<root>/<kb>/shard`` and locks its write-ahead log, so a second process
opening the same knowledge base gets :class:`KnowledgeBaseInUse`.

The engine writes through memory-mapped files; on a disk without room that is a ``SIGBUS``, not
an error, so every write first checks the free space (:mod:`desktop_kb.diskspace`) and raises
:class:`~desktop_kb.errors.DiskFull` instead of writing.
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..diskspace import FRESH_STORE, MARGIN, disk_full, ensure_free, store_need
from ..errors import KnowledgeBaseInUse, KnowledgeBaseNotFound, StoreError
from ..protocols import ScoredRecord, SearchFilter, SparseVec, StoredPoint
from .base import SingleLegSearch
from .filters import PAYLOAD_INDEXES, conditions

__all__ = ["EdgeStore"]

DENSE = "dense"
SPARSE = "bm25"


def _q() -> Any:
    import qdrant_edge

    return qdrant_edge


class EdgeStore(SingleLegSearch):
    """The embedded VectorStore. Thread-safe: calls are serialised on one lock."""

    def __init__(self, root: Path, exact_below: int = 100_000) -> None:
        self.root = Path(root)
        self.exact_below = exact_below
        self._shards: dict[str, Any] = {}
        self._lock = threading.RLock()

    # -- lifecycle -------------------------------------------------------------------------------
    def _dir(self, name: str) -> Path:
        return self.root / name / "shard"

    def _open(self, name: str) -> Any:
        shard = self._shards.get(name)
        if shard is not None:
            return shard
        path = self._dir(name)
        if not (path / "wal").exists():
            raise KnowledgeBaseNotFound(f"Knowledge base {name!r} has no index yet.")
        # loading writes too: it fills mapped files it had left sparse (measured: ~75 MB of a new
        # base's first load), so even a search needs the room a write does
        need = store_need(path, 0)
        ensure_free(path.parent, need, f"to open knowledge base {name!r}")
        try:
            shard = _q().EdgeShard.load(str(path))
        except Exception as exc:  # the engine raises plain Exception with a message
            raise _translate(exc, name, path, 0) from exc
        self._shards[name] = shard
        return shard

    def has_collection(self, name: str) -> bool:
        with self._lock:
            return name in self._shards or (self._dir(name) / "wal").exists()

    def create_collection(self, name: str, dim: int) -> None:
        q = _q()
        with self._lock:
            if self.has_collection(name):
                self._open(name)
                return
            config = q.EdgeConfig(
                vectors={DENSE: q.EdgeVectorParams(size=dim, distance=q.Distance.Cosine)},
                sparse_vectors={SPARSE: q.EdgeSparseVectorParams(modifier=q.Modifier.Idf)},
            )
            path = self._dir(name)
            ensure_free(path.parent, FRESH_STORE + MARGIN, f"to create the index of knowledge base {name!r}")
            # made aside and moved into place whole: a creation killed half-way leaves no index
            # (has_collection() is false, the next one starts over), never one that cannot load
            making = path.with_name("shard.creating")
            shutil.rmtree(making, ignore_errors=True)
            shutil.rmtree(path, ignore_errors=True)  # not an index (no write-ahead log)
            making.mkdir(parents=True)
            try:
                shard = q.EdgeShard.create(str(making), config)
                for field, kind in PAYLOAD_INDEXES.items():
                    schema = q.PayloadSchemaType.Keyword if kind == "keyword" else q.PayloadSchemaType.Integer
                    shard.update(q.UpdateOperation.create_field_index(field, schema))
                shard.flush()
                shard.close()
            except Exception as exc:
                raise _translate(exc, name, making, FRESH_STORE) from exc
            making.rename(path)
            self._open(name)

    def drop_collection(self, name: str) -> None:
        with self._lock:
            shard = self._shards.pop(name, None)
            if shard is not None:
                shard.close()
            shutil.rmtree(self._dir(name), ignore_errors=True)

    def flush(self, name: str) -> None:
        with self._lock:
            self._write(name, 0, lambda s: s.flush())

    def close(self) -> None:
        with self._lock:
            shards, self._shards = self._shards, {}
            failure: Exception | None = None
            for name, shard in shards.items():
                try:
                    shard.flush()
                except Exception as exc:  # what is in the write-ahead log is kept; the others still close
                    failure = failure or _translate(exc, name, self._dir(name), 0)
                finally:
                    shard.close()
            if failure is not None:
                raise failure

    # -- writes ----------------------------------------------------------------------------------
    def upsert(self, name: str, points: Sequence[StoredPoint]) -> None:
        if not points:
            return
        q = _q()
        batch = [
            q.Point(
                p.id,
                {
                    DENSE: np.asarray(p.dense, dtype=np.float32).tolist(),
                    SPARSE: q.SparseVector(list(p.sparse.indices), list(p.sparse.values)),
                },
                p.payload,
            )
            for p in points
        ]
        size = sum(4 * len(p.dense) + 8 * len(p.sparse.indices) + len(json.dumps(p.payload, ensure_ascii=False))
                   for p in points)
        with self._lock:
            self._write(name, size, lambda s: s.update(q.UpdateOperation.upsert_points(batch)))

    def delete(self, name: str, flt: SearchFilter, exclude_doc_ids: Sequence[str] = ()) -> None:
        if flt.is_empty():
            raise StoreError("Refusing to delete with an empty filter (it would delete everything).")
        q = _q()
        f = self._filter(flt, exclude_doc_ids)
        with self._lock:
            self._write(name, 0, lambda s: s.update(q.UpdateOperation.delete_points_by_filter(f)))

    def set_payload(self, name: str, flt: SearchFilter, values: dict[str, Any]) -> None:
        if flt.is_empty():
            raise StoreError("Refusing to edit with an empty filter (it would change every passage).")
        q = _q()
        f = self._filter(flt)
        with self._lock:
            self._write(name, len(json.dumps(values, ensure_ascii=False)),
                        lambda s: s.update(q.UpdateOperation.set_payload_by_filter(f, dict(values))))

    # -- reads -----------------------------------------------------------------------------------
    def count(self, name: str, flt: SearchFilter | None = None) -> int:
        q = _q()
        with self._lock:
            return int(self._call(name, lambda s: s.count(q.CountRequest(filter=self._filter(flt), exact=True))))

    def scroll(self, name: str, flt: SearchFilter | None = None, limit: int = 10_000) -> list[ScoredRecord]:
        q = _q()
        out: list[ScoredRecord] = []
        offset = None
        with self._lock:
            while len(out) < limit:
                req = q.ScrollRequest(offset=offset, limit=min(512, limit - len(out)),
                                      filter=self._filter(flt), with_payload=True)
                records, offset = self._call(name, lambda s, r=req: s.scroll(r))
                out.extend(ScoredRecord(str(r.id), 0.0, dict(r.payload or {})) for r in records)
                if offset is None or not records:
                    break
        return out

    def points(self, name: str, batch: int = 256) -> Iterator[StoredPoint]:
        q = _q()
        offset = None
        while True:
            req = q.ScrollRequest(offset=offset, limit=batch, with_payload=True, with_vector=True)
            with self._lock:
                records, offset = self._call(name, lambda s, r=req: s.scroll(r))
            for r in records:
                sv = r.vector[SPARSE]
                yield StoredPoint(str(r.id), np.asarray(r.vector[DENSE], dtype=np.float32),
                                  SparseVec(tuple(sv.indices), tuple(sv.values)), dict(r.payload or {}))
            if offset is None or not records:
                return

    def _params(self, shard: Any) -> Any:
        q = _q()
        return q.SearchParams(exact=shard.info().points_count < self.exact_below)

    def _request(self, shard: Any, query: Any, flt: SearchFilter | None, limit: int) -> Any:
        q = _q()
        return q.QueryRequest(limit=limit, query=query, filter=self._filter(flt), with_payload=True,
                              params=self._params(shard))

    def search_both(
        self, name: str, dense: np.ndarray | None, sparse: SparseVec | None, flt: SearchFilter | None, limit: int
    ) -> tuple[list[ScoredRecord], list[ScoredRecord]]:
        q = _q()
        with self._lock:
            shard = self._open(name)
            requests, legs = [], []
            if dense is not None:
                vec = np.asarray(dense, dtype=np.float32).tolist()
                requests.append(self._request(shard, q.Query.Nearest(vec, using=DENSE), flt, limit))
                legs.append("dense")
            if sparse is not None and len(sparse):
                sv = q.SparseVector(list(sparse.indices), list(sparse.values))
                requests.append(self._request(shard, q.Query.Nearest(sv, using=SPARSE), flt, limit))
                legs.append("sparse")
            results = self._call(name, lambda s: s.query_batch(q.QueryBatchRequest(requests))) if requests else []
        by_leg = {leg: [ScoredRecord(str(p.id), float(p.score), dict(p.payload or {})) for p in res]
                  for leg, res in zip(legs, results, strict=True)}
        return by_leg.get("dense", []), by_leg.get("sparse", [])

    # -- helpers ---------------------------------------------------------------------------------
    def _call(self, name: str, fn: Any) -> Any:
        shard = self._open(name)
        try:
            return fn(shard)
        except Exception as exc:
            raise _translate(exc, name) from exc

    def ensure_room(self, name: str, size: int) -> None:
        folder = self._dir(name)
        if folder.exists():  # measured on the shard, named by the knowledge base's folder
            need = store_need(folder, size)
            ensure_free(folder.parent, need, f"to write to knowledge base {name!r}")
        else:
            ensure_free(folder.parent, FRESH_STORE + MARGIN + size, f"to create the index of knowledge base {name!r}")

    def _write(self, name: str, size: int, fn: Any) -> Any:
        """``fn`` on the shard, once the disk has room for ``size`` bytes more and every page
        the store's mapped files can still take (a write into a mapped page the disk cannot back
        ends the process)."""
        shard = self._open(name)
        folder = self._dir(name)
        self.ensure_room(name, size)
        try:
            return fn(shard)
        except Exception as exc:
            raise _translate(exc, name, folder, size) from exc

    @staticmethod
    def _filter(flt: SearchFilter | None, exclude_doc_ids: Sequence[str] = ()) -> Any:
        conds = conditions(flt, exclude_doc_ids)
        if not conds:
            return None
        q = _q()
        must: list[Any] = []
        must_not: list[Any] = []
        for c in conds:
            if c.is_range:
                fc = q.FieldCondition(c.key, range=q.RangeFloat(
                    gte=None if c.gte is None else float(c.gte), lte=None if c.lte is None else float(c.lte)))
            else:
                fc = q.FieldCondition(c.key, match=q.MatchAny(list(c.any_of)))
            (must_not if c.negate else must).append(fc)
        return q.Filter(must=must or None, must_not=must_not or None)


def _translate(exc: Exception, name: str, folder: Path | None = None, size: int = 0) -> Exception:
    """The engine's error (plain ``Exception`` with a message) as ours; one during a write, with
    the disk now short of what the write needed, is :class:`DiskFull`."""
    if folder is not None:
        full = disk_full(exc, folder, store_need(folder, size) if folder.exists() else FRESH_STORE,
                         f"to write to knowledge base {name!r}")
        if full is not None:
            return full
    text = str(exc)
    if "WouldBlock" in text or "lock" in text.lower():
        return KnowledgeBaseInUse(f"Knowledge base {name!r} is in use by another desktop-kb process.")
    if isinstance(exc, KnowledgeBaseNotFound | StoreError):
        return exc
    return StoreError(f"The index of knowledge base {name!r} failed: {text}")
