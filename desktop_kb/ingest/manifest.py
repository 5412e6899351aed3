"""The per-KB manifest (SQLite): which files are indexed, at which content hash, with which
models and chunker settings, plus a write-ahead "pending" table that makes file replacement
crash-safe and the document-frequency table used for adaptive fusion."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..diskspace import MARGIN, disk_full, ensure_free, guard
from ..errors import KnowledgeBaseInUse, StoreError
from .folder_lock import FolderLock

__all__ = ["DocumentRow", "Manifest", "PendingRow", "path_key", "peek_meta"]


def path_key(path: str | os.PathLike[str]) -> str:
    """A path as the manifest keys its documents: user folder expanded, absolute, links resolved."""
    return str(Path(path).expanduser().resolve(strict=False))

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    path TEXT PRIMARY KEY, doc_id TEXT NOT NULL, folder TEXT NOT NULL, size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL, sha256 TEXT NOT NULL, chunks INTEGER NOT NULL,
    ingested_at INTEGER NOT NULL, tags TEXT NOT NULL DEFAULT '[]', owner TEXT NOT NULL DEFAULT '',
    title TEXT NOT NULL DEFAULT '', warnings TEXT NOT NULL DEFAULT '[]',
    cjk_chars INTEGER NOT NULL DEFAULT 0, letters INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS pending (
    path TEXT PRIMARY KEY, doc_id TEXT NOT NULL, phase TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS failures (
    path TEXT PRIMARY KEY, error TEXT NOT NULL, hint TEXT NOT NULL, sha256 TEXT NOT NULL, at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS excluded (path TEXT PRIMARY KEY, at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS vocab (token_id INTEGER PRIMARY KEY, df INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS enrichment (
    doc_id TEXT PRIMARY KEY, summary TEXT NOT NULL, keywords TEXT NOT NULL, faq TEXT NOT NULL,
    model TEXT NOT NULL, seconds REAL NOT NULL, at INTEGER NOT NULL
);
"""


@dataclass(frozen=True)
class DocumentRow:
    path: str
    doc_id: str
    folder: str
    size: int
    mtime_ns: int
    sha256: str
    chunks: int
    ingested_at: int
    tags: tuple[str, ...] = ()
    owner: str = ""
    title: str = ""
    warnings: tuple[str, ...] = ()
    cjk_chars: int = 0
    letters: int = 0


@dataclass(frozen=True)
class PendingRow:
    path: str
    doc_id: str
    phase: str  # "writing": new chunks may be partial; "cleanup": old chunks may remain


class Manifest:
    """One knowledge base's SQLite manifest, owned by one process at a time (``manifest.lock``)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._folder = path.parent
        self._folder_lock = FolderLock(path.parent / "manifest.lock")
        if not self._folder_lock.acquire():
            raise KnowledgeBaseInUse(f"Knowledge base {path.parent.name!r} is in use by another desktop-kb process.")
        try:
            self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=5)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            self._folder_lock.release()
            full = disk_full(exc, path.parent, what="to open the manifest")
            if full is not None:
                raise full from exc
            raise StoreError(f"Cannot open the manifest {path}: {exc}") from exc
        self._lock = threading.RLock()

    def close(self) -> None:
        with self._lock:
            self._db.close()
            self._folder_lock.release()

    def backup_to(self, path: Path) -> None:
        """A consistent copy of the manifest in ``path`` (SQLite's online backup)."""
        with self._lock:
            dst = sqlite3.connect(str(path))
            try:
                self._db.backup(dst)
            finally:
                dst.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; on a full disk it is rolled back and raises DiskFull (the
        manifest stays as it was: SQLite's journal keeps it whole)."""
        with self._lock, guard(self._folder, what="to update the manifest"):
            ensure_free(self._folder, MARGIN, "to update the manifest")
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def integrity(self) -> str:
        """SQLite's own verdict on the file ("ok", or what is damaged); raises sqlite3.Error when
        it cannot even read it."""
        with self._lock:
            rows = self._db.execute("PRAGMA quick_check").fetchall()
        return "; ".join(str(r[0]) for r in rows[:5])

    # -- meta ------------------------------------------------------------------------------------
    def get_meta(self, key: str, default: Any = None) -> Any:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def set_meta(self, **values: Any) -> None:
        with self.transaction() as db:
            db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                           [(k, json.dumps(v, ensure_ascii=False)) for k, v in values.items()])

    # -- documents -------------------------------------------------------------------------------
    def documents(self) -> dict[str, DocumentRow]:
        with self._lock:
            rows = self._db.execute(
                "SELECT path, doc_id, folder, size, mtime_ns, sha256, chunks, ingested_at, tags, owner,"
                " title, warnings, cjk_chars, letters FROM documents").fetchall()
        return {r[0]: DocumentRow(path=r[0], doc_id=r[1], folder=r[2], size=r[3], mtime_ns=r[4], sha256=r[5],
                                  chunks=r[6], ingested_at=r[7], tags=tuple(json.loads(r[8])), owner=r[9],
                                  title=r[10], warnings=tuple(json.loads(r[11])), cjk_chars=r[12], letters=r[13])
                for r in rows}

    def put_document(self, db: sqlite3.Connection, row: DocumentRow) -> None:
        db.execute(
            "INSERT OR REPLACE INTO documents VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (row.path, row.doc_id, row.folder, row.size, row.mtime_ns, row.sha256, row.chunks,
             row.ingested_at, json.dumps(list(row.tags), ensure_ascii=False), row.owner, row.title,
             json.dumps(list(row.warnings), ensure_ascii=False), row.cjk_chars, row.letters))
        db.execute("DELETE FROM failures WHERE path=?", (row.path,))

    def delete_document(self, db: sqlite3.Connection, path: str) -> None:
        db.execute("DELETE FROM documents WHERE path=?", (path,))

    def doc_id_in_use(self, doc_id: str) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM documents WHERE doc_id=? LIMIT 1", (doc_id,)).fetchone() is not None

    # -- enrichment (LLM summary, keywords, FAQ per document; see ingest/enrich.py) ---------------
    def enrichments(self) -> dict[str, dict[str, Any]]:
        """{doc_id: {"summary", "keywords", "faq", "model", "seconds"}} of the documents enriched."""
        with self._lock:
            rows = self._db.execute("SELECT doc_id, summary, keywords, faq, model, seconds FROM enrichment").fetchall()
        return {r[0]: {"summary": r[1], "keywords": json.loads(r[2]), "faq": json.loads(r[3]), "model": r[4],
                       "seconds": r[5]} for r in rows}

    def put_enrichment(self, doc_id: str, summary: str, keywords: list[str], faq: list[dict[str, str]],
                       model: str, seconds: float) -> None:
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO enrichment VALUES (?, ?, ?, ?, ?, ?, ?)",
                       (doc_id, summary, json.dumps(keywords, ensure_ascii=False), json.dumps(faq, ensure_ascii=False),
                        model, float(seconds), int(time.time())))

    def drop_enrichment(self, doc_ids: Iterable[str]) -> None:
        with self.transaction() as db:
            db.executemany("DELETE FROM enrichment WHERE doc_id=?", [(d,) for d in doc_ids])

    # -- pending (write-ahead intent) ------------------------------------------------------------
    def set_pending(self, path: str, doc_id: str, phase: str) -> None:
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO pending VALUES (?,?,?)", (path, doc_id, phase))

    def clear_pending(self, db: sqlite3.Connection, path: str) -> None:
        db.execute("DELETE FROM pending WHERE path=?", (path,))

    def pending(self) -> list[PendingRow]:
        with self._lock:
            return [PendingRow(*r) for r in self._db.execute("SELECT path, doc_id, phase FROM pending")]

    def unsettled(self) -> dict[str, str | None]:
        """The files a write is under way (or was killed) for: path → the doc id the manifest
        holds for it (None for a new file). Only those passages of theirs are to be shown."""
        with self._lock:
            return dict(self._db.execute(
                "SELECT p.path, d.doc_id FROM pending p LEFT JOIN documents d ON d.path = p.path").fetchall())

    # -- failures --------------------------------------------------------------------------------
    def record_failure(self, path: str, error: str, hint: str, sha256: str) -> None:
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO failures VALUES (?,?,?,?,?)",
                       (path, error, hint, sha256, int(time.time())))

    def failures(self) -> dict[str, tuple[str, str, str]]:
        with self._lock:
            return {r[0]: (r[1], r[2], r[3]) for r in self._db.execute("SELECT path, error, hint, sha256 FROM failures")}

    def forget_failure(self, db: sqlite3.Connection, path: str) -> None:
        db.execute("DELETE FROM failures WHERE path=?", (path,))

    # -- exclusions: files and folders removed by the user, kept out of later scans ------------------
    def exclude(self, paths: Iterable[str]) -> None:
        with self.transaction() as db:
            db.executemany("INSERT OR REPLACE INTO excluded VALUES (?,?)",
                           [(path_key(p), int(time.time())) for p in paths])

    def excluded(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT path FROM excluded ORDER BY path")]

    def include(self, paths: Iterable[str], *, under: bool = True) -> list[str]:
        """Lifts the exclusions of ``paths`` (and, with ``under``, of what lies under a folder among
        them); returns those lifted."""
        paths = [path_key(p) for p in paths]
        lifted = [e for e in self.excluded()
                  if any(e == p or (under and e.startswith(p.rstrip(os.sep) + os.sep)) for p in paths)]
        with self.transaction() as db:
            db.executemany("DELETE FROM excluded WHERE path=?", [(e,) for e in lifted])
        return lifted

    # -- vocabulary (document frequencies by token id) ---------------------------------------------
    def add_terms(self, db: sqlite3.Connection, token_ids: Iterable[int], sign: int = 1) -> None:
        ids = [(int(t),) for t in set(token_ids)]
        if sign > 0:
            db.executemany("INSERT INTO vocab(token_id, df) VALUES (?, 1) "
                           "ON CONFLICT(token_id) DO UPDATE SET df = df + 1", ids)
        else:
            db.executemany("UPDATE vocab SET df = df - 1 WHERE token_id = ?", ids)
            db.execute("DELETE FROM vocab WHERE df <= 0")

    def document_frequencies(self, token_ids: Iterable[int]) -> dict[int, int]:
        ids = list({int(t) for t in token_ids})
        if not ids:
            return {}
        with self._lock:
            marks = ",".join("?" * len(ids))
            rows = self._db.execute(f"SELECT token_id, df FROM vocab WHERE token_id IN ({marks})", ids).fetchall()
        return {int(a): int(b) for a, b in rows}

    def corpus_stats(self) -> tuple[int, int, int, int]:
        """(documents, chunks, cjk_chars, letters) over the indexed documents."""
        with self._lock:
            row = self._db.execute("SELECT COUNT(*), COALESCE(SUM(chunks),0), COALESCE(SUM(cjk_chars),0),"
                                   " COALESCE(SUM(letters),0) FROM documents").fetchone()
        return int(row[0]), int(row[1]), int(row[2]), int(row[3])


def peek_meta(path: Path, key: str) -> Any:
    """One meta value of a manifest, read without taking its lock (another process may own the
    knowledge base); ``None`` when it is absent or the file cannot be read."""
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=2)
        try:
            row = db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        finally:
            db.close()
        return json.loads(row[0]) if row else None
    except (sqlite3.Error, ValueError, OSError):
        return None
