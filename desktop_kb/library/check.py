"""Damage: compare a knowledge base's manifest, stored Markdown and store; rebuild what can be.

:func:`inspect` reads all three and lists what disagrees (a :class:`Health`): the manifest
unreadable, the store unreadable or of another vector dimension, a document with fewer or more
passages in the store than the manifest says, passages of no listed document, a document whose
Markdown is gone, an interrupted write. Nothing is changed.

:func:`repair` rebuilds, in this order, and says what it could not:

* a damaged manifest is moved aside and rebuilt from the store's passages (paths, tags, owners,
  titles; vocabulary counts from the Markdown); the next sync checks every file again;
* an unreadable store (or one of another dimension) is rebuilt from the stored Markdown, and a
  readable one gets only what it lacks: the documents with missing passages are chunked and
  embedded again from their Markdown (with their page spans when kept), stray passages deleted;
* a missing Markdown file is rebuilt from the original file when it is unchanged, else from the
  document's passages (the text between passages, such as headings, may be missing then);
* interrupted writes are finished or undone (``recover``).

Both take what they need (the base's folder, the store, the manifest opener, the backends), not
the ``Library``.
"""

from __future__ import annotations

import shutil
import sqlite3
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DesktopKBError, KnowledgeBaseInUse
from ..ingest.chunk import chunk_document
from ..ingest.discover import sha256_file
from ..ingest.embed import embed_chunks
from ..ingest.manifest import DocumentRow, Manifest
from ..ingest.page_spans import load_page_spans
from ..ingest.write import build_points, write_points
from ..protocols import Embedder, SearchFilter, SparseEncoder, StoredPoint, VectorStore
from ..settings import ChunkSettings
from ..text.tokenize import cjk_ratio
from ..types import SourceFile

__all__ = ["Health", "Problem", "RepairContext", "RepairReport", "describe", "inspect", "repair"]


@dataclass(frozen=True)
class Problem:
    code: str  # manifest, store, dimension, missing_points, extra_points, stray_points, markdown,
    # unclaimed_text, pending, reembed
    message: str
    path: str = ""


@dataclass(frozen=True)
class Health:
    kb: str
    documents: int  # in the manifest (0 when it cannot be read)
    points: int  # in the store (0 when it cannot be read)
    problems: tuple[Problem, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems

    def codes(self) -> set[str]:
        return {p.code for p in self.problems}

    def to_json(self) -> dict[str, Any]:
        return {"kb": self.kb, "ok": self.ok, "documents": self.documents, "points": self.points,
                "problems": [p.__dict__ for p in self.problems]}


@dataclass(frozen=True)
class RepairReport:
    kb: str
    done: tuple[str, ...]  # what was rebuilt, in words
    not_repaired: tuple[Problem, ...]  # what is still wrong afterwards, with why
    after: Health

    def to_json(self) -> dict[str, Any]:
        return {"kb": self.kb, "done": list(self.done), "not_repaired": [p.__dict__ for p in self.not_repaired],
                "after": self.after.to_json()}


@dataclass
class _Store:
    """What the store holds, by path: doc id → passages; and the payloads, for a rebuilt manifest."""

    readable: bool = True
    indexed: bool = True  # False: there is no index at all (not one that cannot be read)
    error: str = ""
    points: int = 0
    dims: Counter[int] = field(default_factory=Counter)
    by_path: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    payloads: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))


def _read_store(kb: str, store: VectorStore, keep_payloads: bool) -> _Store:
    seen = _Store()
    if not store.has_collection(kb):
        return _Store(readable=False, indexed=False, error="there is no index")
    try:
        for p in store.points(kb):
            seen.points += 1
            seen.dims[len(p.dense)] += 1
            if p.payload.get("kind") == "faq":
                continue  # enrichment's FAQ points: beside the document's passages, not among them
            path, doc_id = str(p.payload.get("path", "")), str(p.payload.get("doc_id", ""))
            seen.by_path[path][doc_id] += 1
            if keep_payloads:
                seen.payloads[path].append(dict(p.payload))
    except KnowledgeBaseInUse:
        raise
    except DesktopKBError as exc:
        return _Store(readable=False, error=exc.message)
    return seen


def _read_manifest(open_manifest: Callable[[], Manifest]) -> tuple[Manifest | None, str]:
    try:
        m = open_manifest()
        verdict = m.integrity()
        if verdict != "ok":
            return None, verdict
        m.documents(), m.pending(), m.get_meta("dim")
        return m, ""
    except KnowledgeBaseInUse:  # another process holds it: not damage (and nothing to repair)
        raise
    except (DesktopKBError, sqlite3.Error) as exc:
        return None, getattr(exc, "message", None) or str(exc)


def inspect(kb: str, kb_dir: Path, store: VectorStore, open_manifest: Callable[[], Manifest]) -> Health:
    """What is wrong with ``kb`` (nothing changed)."""
    m, damaged = _read_manifest(open_manifest)
    seen = _read_store(kb, store, keep_payloads=False)
    problems: list[Problem] = []
    if m is not None and m.get_meta("embedder") is None and not m.get_meta("reembed") and seen.points:
        # missing and made anew, or emptied (not a re-embedding's reset, which keeps its list of files):
        # its passages are not strays, they are what to rebuild it from
        m, damaged = None, f"it is empty, while the index holds {seen.points} passages"
    if m is None:
        problems.append(Problem("manifest", f"The manifest (manifest.sqlite) is damaged: {damaged}"))
    waiting = (m.get_meta("reembed", {}) or {}) if m is not None else {}
    # no index yet (a base killed while being made) or none any more (dropped by a re-embedding)
    # is no damage while the manifest has no document, or the re-embedding is still to finish
    unmade = not seen.indexed and m is not None and (bool(waiting) or not m.documents())
    if not seen.readable and not unmade:
        problems.append(Problem("store", f"The index cannot be read: {seen.error}"))
    if m is None:
        return Health(kb, 0, seen.points, tuple(problems))
    docs = m.documents()
    dim = int(m.get_meta("dim", 0) or 0)
    if seen.readable and dim and set(seen.dims) - {dim}:
        problems.append(Problem("dimension", f"The index holds vectors of {sorted(seen.dims)} dimensions; "
                                             f"the manifest says {dim}."))
    pending_rows = m.pending()
    for p in pending_rows:
        problems.append(Problem("pending", f"An interrupted write of {Path(p.path).name} ({p.phase}).", p.path))
    for path, row in sorted(docs.items()):
        if not (kb_dir / "docs" / f"{row.doc_id}.md").is_file():
            problems.append(Problem("markdown", f"The stored text of {Path(path).name} is missing.", path))
        if not seen.readable:
            continue
        have = seen.by_path.get(path, Counter()).get(row.doc_id, 0)
        if have < row.chunks:
            problems.append(Problem("missing_points", f"{Path(path).name}: {have} of {row.chunks} passages "
                                                      "are in the index.", path))
        elif have > row.chunks:
            problems.append(Problem("extra_points", f"{Path(path).name}: {have} passages in the index, "
                                                    f"{row.chunks} expected.", path))
    known = {row.doc_id for row in docs.values()}
    for p in pending_rows:  # an interrupted write's texts (the new version's, or the old one's): recover() drops them
        known |= {p.doc_id} | set(seen.by_path.get(p.path, ()))
    unclaimed = [f for f in sorted((kb_dir / "docs").glob("*.md")) if f.stem not in known]
    if waiting:  # their rows were dropped, their files listed: the next re-embedding brings them back
        problems.append(Problem("reembed", f"A re-embedding was stopped part-way: {len(waiting)} files wait "
                                           "(re-embed again to finish it)."))
    elif unclaimed:
        problems.append(Problem("unclaimed_text", f"{len(unclaimed)} stored texts belong to no document of the "
                                                  "manifest (their files are unknown): add their folders again."))
    pending = {p.path for p in pending_rows}
    for path, ids in sorted(seen.by_path.items()):
        stray = sum(n for d, n in ids.items() if path not in docs or d != docs[path].doc_id)
        if stray and path not in pending and not waiting:  # a re-embedding drops the old index whole
            problems.append(Problem("stray_points", f"{stray} passages of {Path(path).name or '?'} belong to no "
                                                    "document of the manifest.", path))
    return Health(kb, len(docs), seen.points, tuple(problems))


@dataclass(frozen=True)
class RepairContext:
    """What a repair works with: the base's folder and name, the store, how to open (and reopen)
    its manifest, the embedder and the BM25 encoder for an average length, the chunk settings."""

    kb: str
    kb_dir: Path
    store: VectorStore
    open_manifest: Callable[[], Manifest]
    reset_manifest: Callable[[], None]  # close the open manifest (it is about to be moved aside)
    embedder: Embedder
    sparse_for: Callable[[float], SparseEncoder]
    chunk: ChunkSettings
    recover: Callable[[], int]  # finish or undo interrupted writes
    reembed: Callable[[], object]  # finish a stopped re-embedding
    reingest: Callable[[Sequence[str]], None]  # index these original files again (force)


def repair(ctx: RepairContext) -> RepairReport:
    before = inspect(ctx.kb, ctx.kb_dir, ctx.store, ctx.open_manifest)
    done: list[str] = []
    if "manifest" in before.codes():
        done += _rebuild_manifest(ctx)
    if "pending" in before.codes():
        fixed = ctx.recover()
        done.append(f"finished or undid {fixed} interrupted writes")
    if "reembed" in before.codes():
        ctx.reembed()
        done.append("finished the stopped re-embedding")
    health = inspect(ctx.kb, ctx.kb_dir, ctx.store, ctx.open_manifest)
    if "manifest" not in health.codes():
        # the index first (from the text that is there), then the lost text (from the originals,
        # which brings their passages too, or from the passages)
        done += _rebuild_points(ctx, health)
        done += _rebuild_markdown(ctx, inspect(ctx.kb, ctx.kb_dir, ctx.store, ctx.open_manifest))
    after = inspect(ctx.kb, ctx.kb_dir, ctx.store, ctx.open_manifest)
    return RepairReport(ctx.kb, tuple(done), after.problems, after)


def _rebuild_manifest(ctx: RepairContext) -> list[str]:
    seen = _read_store(ctx.kb, ctx.store, keep_payloads=True)
    if not seen.readable or (not seen.points and any((ctx.kb_dir / "docs").glob("*.md"))):
        return []  # nothing (or nothing left) to rebuild it from: the check afterwards says so
    ctx.reset_manifest()
    path = ctx.kb_dir / "manifest.sqlite"
    aside = path.with_name(f"manifest.damaged-{int(time.time())}.sqlite")
    for suffix in ("", "-wal", "-shm"):
        src = Path(f"{path}{suffix}")
        if src.exists():
            shutil.move(str(src), f"{aside}{suffix}")
    m = ctx.open_manifest()
    rows, lengths = [], []
    sparse = ctx.sparse_for(100.0)
    with m.transaction() as db:
        for doc_path, payloads in sorted(seen.payloads.items()):
            doc_id = Counter(p.get("doc_id", "") for p in payloads).most_common(1)[0][0]
            mine = sorted((p for p in payloads if p.get("doc_id") == doc_id), key=lambda p: int(p.get("index", 0)))
            first = mine[0]
            md = ctx.kb_dir / "docs" / f"{doc_id}.md"
            text = md.read_text(encoding="utf-8") if md.is_file() else "\n\n".join(p.get("text", "") for p in mine)
            letters = sum(1 for ch in text if ch.isalpha())
            size, mtime_ns, sha = _unchanged_original(doc_path, doc_id)
            rows.append(DocumentRow(
                path=doc_path, doc_id=doc_id, folder=str(first.get("folder", "")), size=size, mtime_ns=mtime_ns,
                sha256=sha, chunks=len(mine), ingested_at=int(first.get("ingested_at", 0) or 0),
                tags=tuple(first.get("tags", []) or ()), owner=str(first.get("owner", "") or ""),
                title=str(first.get("title", "") or ""), cjk_chars=round(cjk_ratio(text) * letters), letters=letters))
            m.put_document(db, rows[-1])
            m.add_terms(db, set(sparse.encode_document(text).indices), sign=1)
            lengths += [len(sparse.tokenize(p.get("text", ""))) for p in mine[:1000]]
    # the base's "searches need an owner" lived only in the manifest: where every document has an
    # owner it is set again (fail-closed), and the report says so
    owned = bool(rows) and all(r.owner for r in rows)
    m.set_meta(embedder=ctx.embedder.id, dim=int(ctx.embedder.dim), sparse=sparse.id,
               chunker={"size": ctx.chunk.size, "overlap": ctx.chunk.overlap}, created_at=int(time.time()),
               bm25_avg_len=sum(lengths) / len(lengths) if lengths else 100.0, bm25_len_samples=len(lengths),
               rebuilt_from=aside.name, require_owner=owned)
    return [f"rebuilt the manifest from the index ({len(rows)} documents; the damaged one kept as {aside.name})"
            + ("; every document has an owner, so searches need one again" if owned else "")]


def _unchanged_original(path: str, doc_id: str) -> tuple[int, int, str]:
    """(size, mtime_ns, sha256) of the original file when it is still the one indexed (the next
    sync then leaves it alone), else zeros: the next sync reads it again."""
    try:
        original = Path(path)
        sha = sha256_file(original) if original.is_file() else ""
        if sha[:32] == doc_id:
            st = original.stat()
            return st.st_size, st.st_mtime_ns, sha
    except OSError:
        pass
    return 0, 0, ""


def _passages(ctx: RepairContext, path: str, doc_id: str) -> list[dict[str, Any]]:
    try:
        recs = ctx.store.scroll(ctx.kb, SearchFilter(paths=(path,), doc_ids=(doc_id,)))
    except DesktopKBError:
        return []
    return sorted((r.payload for r in recs), key=lambda p: int(p.get("start", 0)))


def _rebuild_markdown(ctx: RepairContext, health: Health) -> list[str]:
    m = ctx.open_manifest()
    docs = m.documents()
    done: list[str] = []
    again: list[str] = []
    for problem in health.problems:
        row = docs.get(problem.path)
        if problem.code != "markdown" or row is None:
            continue
        original = Path(row.path)
        if original.is_file() and row.sha256 and sha256_file(original) == row.sha256:
            again.append(row.path)  # the original, unchanged: read again, all of it
            continue
        passages = _passages(ctx, row.path, row.doc_id)
        if not passages:
            continue  # neither the original nor its passages: the check will say so
        size = max(int(p.get("end", 0)) for p in passages)
        text = [" "] * size
        for p in passages:
            start = int(p.get("start", 0))
            for i, ch in enumerate(str(p.get("text", ""))[: size - start]):
                text[start + i] = ch
        target = ctx.kb_dir / "docs" / f"{row.doc_id}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(text), encoding="utf-8")
        done.append(f"rebuilt the text of {original.name} from its {len(passages)} passages "
                    "(headings between passages may be missing)")
    if again:
        ctx.reingest(again)
        done.append(f"read {len(again)} unchanged original files again for their lost text")
    return done


def _rebuild_points(ctx: RepairContext, health: Health) -> list[str]:
    codes = health.codes()
    if "manifest" in codes:
        return []
    m = ctx.open_manifest()
    docs = m.documents()
    done: list[str] = []
    if codes & {"store", "dimension"}:
        if ctx.store.has_collection(ctx.kb):
            ctx.store.drop_collection(ctx.kb)
        ctx.store.create_collection(ctx.kb, int(m.get_meta("dim", ctx.embedder.dim)))
        todo = sorted(docs)
        done.append("rebuilt the index from the stored text")
    else:
        todo = sorted({p.path for p in health.problems if p.code in ("missing_points", "extra_points")})
        for p in health.problems:
            if p.code == "stray_points":
                keep = (docs[p.path].doc_id,) if p.path in docs else ()
                if keep:
                    ctx.store.delete(ctx.kb, SearchFilter(paths=(p.path,)), exclude_doc_ids=keep)
                else:
                    ctx.store.delete(ctx.kb, SearchFilter(paths=(p.path,)))
                done.append(f"removed stray passages of {Path(p.path).name or '?'}")
    sparse = ctx.sparse_for(float(m.get_meta("bm25_avg_len", 100.0) or 100.0))
    embedded = 0
    for path in todo:
        row = docs[path]
        md = ctx.kb_dir / "docs" / f"{row.doc_id}.md"
        if not md.is_file():
            continue
        markdown = md.read_text(encoding="utf-8")
        pages = load_page_spans(ctx.kb_dir / "docs" / f"{row.doc_id}.pages.json")
        chunks = chunk_document(markdown, doc_id=row.doc_id, path=path, pages=pages, settings=ctx.chunk)
        dense, vectors = embed_chunks(chunks, ctx.embedder, sparse, title=row.title)
        src = SourceFile(path, row.size, row.mtime_ns // 1_000_000_000, row.sha256 or row.doc_id, row.folder)
        points: list[StoredPoint] = build_points(ctx.kb, src, chunks, dense, vectors, tags=row.tags,  # type: ignore[arg-type]
                                                 owner=row.owner, ingested_at=row.ingested_at, title=row.title)
        ctx.store.delete(ctx.kb, SearchFilter(paths=(path,)))  # its FAQ points too: enrich it again
        write_points(ctx.store, ctx.kb, points)
        if len(chunks) != row.chunks:
            with m.transaction() as db:
                m.put_document(db, DocumentRow(**{**row.__dict__, "chunks": len(chunks)}))
        embedded += 1
    if todo:
        ctx.store.flush(ctx.kb)
        done.append(f"embedded {embedded} documents again from their stored text")
        enriched = [docs[p].doc_id for p in todo if docs[p].doc_id in m.enrichments()]
        if enriched:
            m.drop_enrichment(enriched)
            done.append(f"{len(enriched)} documents lost their enrichment (FAQ points): run enrich again")
    return done


def describe(health: Health) -> str:
    """The check's report for a person, one line a problem."""
    head = (f"{health.kb}: {health.documents} documents, {health.points} passages — "
            + ("no problems found." if health.ok else f"{len(health.problems)} problems:"))
    return "\n".join([head, *(f"  - {p.message}" for p in health.problems)])

