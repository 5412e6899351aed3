"""The ingestion pipeline, wired in plain Python:
discover → convert → clean → chunk → embed → write, one file at a time, each file committed alone.

Durability: the embedded engine appends every update to its write-ahead log before returning, so
a killed process loses nothing it was told; segments are flushed at the end of a run (a flush
costs ~0.25 s, too much per file).

Crash safety: before writing anything of a file's new version a ``pending`` row records (path, new
doc id, phase "writing"); its Markdown (with TOC, page spans, OCR boxes) is written and its chunks
upserted (write-ahead logged); the manifest row is switched to the new version and the phase becomes
"cleanup"; the old version's Markdown, then its chunks are deleted; the pending row is cleared. On
the next run :func:`recover` finishes or undoes whatever a killed process left behind (the old
version's text found by its chunks), so a file is always either fully at its old version or fully
at its new one, and no text is left that no document claims.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..diskspace import MARGIN, disk_full, ensure_free
from ..errors import Cancelled, DesktopKBError, DiskFull, NoExtractableText, user_message
from ..progress import CancelToken, IngestProgress, ProgressCallback, null_progress
from ..protocols import Embedder, OcrEngine, SearchFilter, SparseEncoder, VectorStore
from ..settings import Settings
from ..text.tokenize import cjk_ratio
from ..types import Chunk, ConvertedDocument, FileFailure, IngestReport, SourceFile
from . import discover as discover_mod
from .chunk import chunk_document
from .clean import clean
from .convert import convert, unsupported_reason
from .embed import embed_chunks
from .manifest import DocumentRow, Manifest
from .metadata import set_metadata
from .ocr import OcrOptions, anchor_lines, save_pages
from .page_spans import save_page_spans
from .toc import build_toc, save_toc
from .write import build_points, write_points

__all__ = ["IngestTarget", "ingest", "recover", "remove_documents"]

AVG_LEN_SAMPLES = 1000  # chunks measured before the BM25 average length is frozen


@dataclass
class IngestTarget:
    """What the pipeline writes into: one knowledge base."""

    name: str
    store: VectorStore
    manifest: Manifest
    docs_dir: Path  # converted Markdown, one file per doc id
    sparse_for: Callable[[float], SparseEncoder]  # BM25 encoder for a given average length


def recover(target: IngestTarget) -> int:
    """Finish or undo writes a killed process left half done. Returns the number of files fixed."""
    docs = target.manifest.documents()
    fixed = 0
    for p in target.manifest.pending():
        current = docs.get(p.path)
        if p.phase == "writing" and (current is None or current.doc_id != p.doc_id):
            target.store.delete(target.name, SearchFilter(paths=(p.path,), doc_ids=(p.doc_id,)))
            dropped = {p.doc_id}  # the new version's Markdown, TOC, page spans: written first
        else:
            keep = current.doc_id if current is not None else None
            dropped = {str(r.payload.get("doc_id", "")) for r in target.store.scroll(
                target.name, SearchFilter(paths=(p.path,)))} - {keep, ""}  # the old version's
            if current is not None:
                target.store.delete(target.name, SearchFilter(paths=(p.path,)), exclude_doc_ids=(current.doc_id,))
            else:
                target.store.delete(target.name, SearchFilter(paths=(p.path,)))
        for doc_id in sorted(dropped):
            _drop_markdown(target, doc_id)
        with target.manifest.transaction() as db:
            target.manifest.clear_pending(db, p.path)
        fixed += 1
    if fixed:
        target.store.flush(target.name)
    return fixed


def remove_documents(target: IngestTarget, paths: Sequence[str], sparse: SparseEncoder) -> list[str]:
    """Remove files from the index (their chunks, manifest rows and vocabulary counts)."""
    docs = target.manifest.documents()
    removed = []
    for path in paths:
        row = docs.get(path)
        if row is None:
            continue
        target.store.delete(target.name, SearchFilter(paths=(path,)))
        old_terms = _doc_terms(target, row.doc_id, sparse)
        with target.manifest.transaction() as db:
            target.manifest.delete_document(db, path)
            target.manifest.add_terms(db, old_terms, sign=-1)
        _drop_markdown(target, row.doc_id)
        removed.append(path)
    return removed


def _doc_terms(target: IngestTarget, doc_id: str, sparse: SparseEncoder) -> set[int]:
    md = target.docs_dir / f"{doc_id}.md"
    if not md.exists():
        return set()
    return set(sparse.encode_document(md.read_text(encoding="utf-8")).indices)


def _drop_markdown(target: IngestTarget, doc_id: str) -> None:
    if not target.manifest.doc_id_in_use(doc_id):
        (target.docs_dir / f"{doc_id}.md").unlink(missing_ok=True)
        (target.docs_dir / f"{doc_id}.md.tmp").unlink(missing_ok=True)
        (target.docs_dir / f"{doc_id}.ocr.json").unlink(missing_ok=True)
        (target.docs_dir / f"{doc_id}.toc.json").unlink(missing_ok=True)
        (target.docs_dir / f"{doc_id}.pages.json").unlink(missing_ok=True)


def _convert(src: SourceFile, pdf_password: str | None, ocr: OcrOptions) -> ConvertedDocument:
    doc = anchor_lines(clean(convert(Path(src.path), pdf_password=pdf_password, ocr=ocr)))
    if not doc.markdown.strip():
        raise NoExtractableText(f"{Path(src.path).name} has no text to index.")
    return doc


def _ocr_options(settings: Settings, engine: OcrEngine | None, cancel: CancelToken,
                 on_page: Callable[[int, int, float], None]) -> OcrOptions:
    s = settings.ingest
    return OcrOptions(engine, s.ocr, s.ocr_max_pages, s.ocr_dpi, s.ocr_min_confidence,  # type: ignore[arg-type]
                      on_page=on_page, cancel=cancel)


def ingest(
    target: IngestTarget,
    paths: Sequence[Path],
    *,
    settings: Settings,
    embedder: Embedder,
    tags: Sequence[str] | None = None,
    owner: str | None = None,
    pdf_password: str | None = None,
    force: bool = False,
    ocr: OcrEngine | None = None,
    progress: ProgressCallback = null_progress,
    cancel: CancelToken | None = None,
    restore: bool = False,
) -> IngestReport:
    """Index ``paths`` into ``target``. ``ocr`` reads scanned pages and images (settings.ingest).
    ``tags``/``owner`` None keep each known file's own; given, they are set on every file found,
    unchanged ones included (a payload edit, nothing re-embedded). Files and folders the user
    removed from the base stay out (a re-scan, a watch, a start-up update or a nightly ``ingest``
    of their folder passes them over) unless ``restore`` and a path given is one of them: the user
    named it to be added again."""
    cancel = cancel or CancelToken()
    started = time.monotonic()
    target.store.ensure_room(target.name, 0)  # a full disk is said before anything is read
    ensure_free(target.docs_dir, MARGIN, "to add files")
    recover(target)
    docs = target.manifest.documents()
    if restore:
        target.manifest.include(map(str, paths), under=False)
    found = discover_mod.discover(paths, settings.extensions, docs, force=force, cancel=cancel,
                                  exclude=(settings.data_dir,), removed=target.manifest.excluded())
    run = _Run(target, settings, progress, started, len(found.to_index), failed=list(found.failed))
    deleted = remove_documents(target, found.deleted, run.sparse) if found.deleted else []
    if (tags is not None or owner is not None) and found.unchanged:
        set_metadata(target.name, target.store, target.manifest, [docs[s.path] for s in found.unchanged],
                     tags=tags, owner=owner)
    cancelled = False
    for done, src in enumerate(found.to_index):
        try:
            cancel.raise_if_cancelled()
            _index_file(run, src, done, docs.get(src.path), embedder, tags=tags, owner=owner,
                        pdf_password=pdf_password, ocr=ocr, cancel=cancel)
        except Cancelled:
            cancelled = True
            break
        except DiskFull:
            raise  # the files before this one stay committed; every next one would fail the same way
        except DesktopKBError as exc:
            run.fail(src, *user_message(exc))
        except Exception as exc:  # one bad file must never stop the batch (a full disk does)
            full = disk_full(exc, target.docs_dir, what=f"to add {Path(src.path).name}")
            if full is not None:
                raise full from exc
            run.fail(src, *user_message(exc), named=True)
    target.store.flush(target.name)
    run.report("done", len(run.added) + len(run.updated), "")
    return IngestReport(
        kb=target.name, added=tuple(run.added), updated=tuple(run.updated),
        unchanged=tuple(s.path for s in found.unchanged), deleted=tuple(deleted), failed=tuple(run.failed),
        warnings=tuple(run.warnings), chunks=run.chunks_done, cancelled=cancelled,
        skipped=tuple(FileFailure(p, *unsupported_reason(p)) for p in found.skipped), ocr=tuple(run.scanned),
        excluded=tuple(found.excluded),
    )


@dataclass
class _Run:
    """One ingest run: what it has done so far, its progress reports and its BM25 encoder (whose
    average chunk length settles over the first chunks)."""

    target: IngestTarget
    settings: Settings
    progress: ProgressCallback
    started: float
    total: int
    failed: list[FileFailure]
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    warnings: list[FileFailure] = field(default_factory=list)
    scanned: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)
    chunks_done: int = 0

    def __post_init__(self) -> None:
        avg_len = self.target.manifest.get_meta("bm25_avg_len")
        # Knowledge bases made before the running average existed keep their (frozen) value.
        self.samples = int(self.target.manifest.get_meta("bm25_len_samples", AVG_LEN_SAMPLES if avg_len else 0))
        self.avg_len = float(avg_len or 0.0)
        self.sparse = self.target.sparse_for(float(avg_len or 100.0))

    def report(self, stage: str, done: int, current: str) -> None:
        elapsed = time.monotonic() - self.started
        eta = elapsed / done * (self.total - done) if done else None
        self.progress(IngestProgress(done, self.total, self.chunks_done, current, stage, elapsed, eta))

    def on_page(self, page: int, pages: int, per_page: float, done: int, current: str) -> None:
        # during OCR the ETA is the current file's: its pages left at its speed so far
        self.progress(IngestProgress(done, self.total, self.chunks_done, current, "ocr",
                                     time.monotonic() - self.started, per_page * max(pages - page, 0), page, pages))

    def measure(self, chunks: Sequence[Chunk]) -> None:
        """Counts the chunks into the BM25 average length until it is frozen."""
        if self.samples < AVG_LEN_SAMPLES:
            self.avg_len, self.samples = _update_avg_len(self.target, self.sparse, chunks, self.avg_len, self.samples)
            self.sparse = self.target.sparse_for(self.avg_len)

    def fail(self, src: SourceFile, message: str, hint: str, *, named: bool = False) -> None:
        """A file that could not be indexed: reported (``named``: its name before the message) and
        recorded, so an unchanged file is not tried again at every run."""
        shown = f"{Path(src.path).name}: {message}" if named else message
        self.failed.append(FileFailure(src.path, shown, hint))
        self.target.manifest.record_failure(src.path, message, hint, src.sha256)


def _index_file(run: _Run, src: SourceFile, done: int, old: DocumentRow | None, embedder: Embedder, *,
                tags: Sequence[str] | None, owner: str | None, pdf_password: str | None, ocr: OcrEngine | None,
                cancel: CancelToken) -> None:
    """One file: convert → clean → chunk → embed → write, committed alone."""
    run.report("convert", done, src.path)
    ocr_options = _ocr_options(run.settings, ocr, cancel, lambda a, b, c: run.on_page(a, b, c, done, src.path))
    doc = _convert(src, pdf_password, ocr_options)
    chunks = chunk_document(doc.markdown, doc_id=src.doc_id, path=src.path, pages=doc.pages,
                            settings=run.settings.chunk)
    if not chunks:
        raise NoExtractableText(f"{Path(src.path).name} has no text to index.")
    run.measure(chunks)
    run.report("embed", done, src.path)

    def on_batch(n: int) -> None:
        run.chunks_done += n
        run.report("embed", done, src.path)

    dense, vectors = embed_chunks(chunks, embedder, run.sparse, title=doc.title, cancel=cancel,
                                  batch_size=run.settings.models.embed_batch, on_batch=on_batch)
    run.report("write", done, src.path)
    _commit_file(run.target, src, doc, chunks, dense, vectors, old, tags, owner, run.sparse)
    (run.updated if old is not None else run.added).append(src.path)
    run.warnings.extend(FileFailure(src.path, w) for w in doc.warnings)
    if doc.ocr:
        run.scanned.append((src.path, tuple(p.number for p in doc.ocr)))


def _update_avg_len(
    target: IngestTarget, sparse: SparseEncoder, chunks: Sequence[Chunk], avg_len: float, samples: int
) -> tuple[float, int]:
    """Running mean of chunk lengths in tokens, frozen after ``AVG_LEN_SAMPLES`` chunks.

    BM25 document weights depend on it and are written once, so it must settle early; taking it
    from the first file alone let one short note skew the weights of everything added after it.
    """
    lengths = [len(sparse.tokenize(c.text)) for c in chunks]
    avg_len = (avg_len * samples + sum(lengths)) / (samples + len(lengths))
    samples += len(lengths)
    target.manifest.set_meta(bm25_avg_len=avg_len, bm25_len_samples=samples)
    return avg_len, samples


def _commit_file(
    target: IngestTarget, src: SourceFile, doc: ConvertedDocument, chunks: Sequence[Chunk], dense: object,
    vectors: Sequence[object], old: DocumentRow | None, tags: Sequence[str] | None, owner: str | None,
    sparse: SparseEncoder,
) -> None:
    now = int(time.time())
    tags = tuple(tags) if tags is not None else (old.tags if old is not None else ())
    owner = owner if owner is not None else (old.owner if old is not None else "")
    # the Markdown, its TOC and OCR boxes, the manifest rows: checked before any of it is written
    # (the store checks its own writes)
    ensure_free(target.docs_dir, 3 * len(doc.markdown.encode("utf-8")) + MARGIN, f"to add {Path(src.path).name}")
    target.docs_dir.mkdir(parents=True, exist_ok=True)
    # the same content indexed again (chunk settings changed): its old chunks share the doc id, so
    # they are found by chunk id; removed once the new version is in place
    stale: set[str] = set()
    if old is not None and old.doc_id == src.doc_id:
        stale = {r.payload["chunk_id"] for r in target.store.scroll(target.name, SearchFilter(paths=(src.path,)))}
        stale -= {c.chunk_id for c in chunks}
    # from here until the pending row is cleared, a killed run leaves nothing recover() cannot undo
    target.manifest.set_pending(src.path, src.doc_id, "writing")
    try:
        _write_text_files(target.docs_dir, src.doc_id, doc, chunks)
        points = build_points(target.name, src, chunks, dense, vectors, tags=tags, owner=owner,  # type: ignore[arg-type]
                              ingested_at=now, title=doc.title)
        write_points(target.store, target.name, points)
    except BaseException:
        # undo this file's partial write now (recover() would do it on the next run otherwise)
        try:
            target.store.delete(target.name, SearchFilter(paths=(src.path,), doc_ids=(src.doc_id,)))
            _drop_markdown(target, src.doc_id)  # kept when a document holds it (the same content again)
            with target.manifest.transaction() as db:
                target.manifest.clear_pending(db, src.path)
        except (DesktopKBError, OSError):
            pass
        raise
    old_terms = _doc_terms(target, old.doc_id, sparse) if old is not None and old.doc_id != src.doc_id else set()
    new_terms = set(sparse.encode_document(doc.markdown).indices)
    ratio_letters = sum(1 for ch in doc.markdown if ch.isalpha())
    row = DocumentRow(
        path=src.path, doc_id=src.doc_id, folder=src.folder, size=src.size,
        mtime_ns=discover_mod.mtime_ns(src.path), sha256=src.sha256, chunks=len(chunks), ingested_at=now,
        tags=tuple(tags), owner=owner, title=doc.title, warnings=doc.warnings,
        cjk_chars=round(cjk_ratio(doc.markdown) * ratio_letters), letters=ratio_letters,
    )
    with target.manifest.transaction() as db:
        if old is not None:
            target.manifest.add_terms(db, old_terms if old.doc_id != src.doc_id else new_terms, sign=-1)
        target.manifest.put_document(db, row)
        target.manifest.add_terms(db, new_terms, sign=1)
        db.execute("UPDATE pending SET phase='cleanup' WHERE path=?", (src.path,))
    if old is not None and old.doc_id != src.doc_id:
        _drop_markdown(target, old.doc_id)  # before its passages: recover() finds it by them
    target.store.delete(target.name, SearchFilter(paths=(src.path,)), exclude_doc_ids=(src.doc_id,))
    ids = sorted(stale)
    for i in range(0, len(ids), 256):
        target.store.delete(target.name, SearchFilter(paths=(src.path,), chunk_ids=tuple(ids[i:i + 256])))
    with target.manifest.transaction() as db:
        target.manifest.clear_pending(db, src.path)


def _write_text_files(docs_dir: Path, doc_id: str, doc: ConvertedDocument, chunks: Sequence[Chunk]) -> None:
    """The document's Markdown (what passages point into), its TOC, page spans and OCR boxes."""
    md_path = docs_dir / f"{doc_id}.md"
    tmp = md_path.with_suffix(".md.tmp")
    tmp.write_text(doc.markdown, encoding="utf-8")
    tmp.replace(md_path)
    save_toc(docs_dir / f"{doc_id}.toc.json",
             build_toc(doc.markdown, chunks, title=doc.title, pages=doc.pages, outline=doc.outline))
    save_page_spans(docs_dir / f"{doc_id}.pages.json", doc.pages)  # for kb repair
    ocr_path = docs_dir / f"{doc_id}.ocr.json"
    if doc.ocr:
        save_pages(ocr_path, doc.ocr)
    else:
        ocr_path.unlink(missing_ok=True)
