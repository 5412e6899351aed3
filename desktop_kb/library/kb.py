"""The public facade used by the CLI and the GUI: a :class:`Library` of knowledge bases.

One Library per process owns the one vector store, the manifests and the models (each loaded
once, lazily); ``close()`` (or the context manager) releases the store's locks.

    with Library.open(load_settings()) as lib:
        lib.ingest("notes", [Path("~/Documents/notes")])
        answer = lib.ask("When is the invoice due?", kbs=["notes"])
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError, EmbedderMismatch, IndexMissing, KnowledgeBaseNotFound, OwnerScopeRequired
from ..ingest import reembed as reembedding
from ..ingest.manifest import DocumentRow, Manifest, peek_meta
from ..ingest.metadata import select_documents
from ..ingest.ocr import load_pages
from ..ingest.pipeline import IngestTarget, ingest, recover, remove_documents
from ..progress import CancelToken, ProgressCallback, null_progress
from ..protocols import (
    Embedder,
    Generator,
    OcrEngine,
    Reranker,
    SearchFilter,
    SparseEncoder,
    VectorStore,
    Verifier,
)
from ..settings import Settings
from ..types import Answer, Hit, IngestReport, OcrPage
from .admin import AdminMixin, KBInfo, check_new_name, validate_kb_name
from .documents import DocumentsMixin

__all__ = ["KBInfo", "Library", "validate_kb_name"]


class Library(AdminMixin, DocumentsMixin):
    def __init__(
        self,
        settings: Settings,
        *,
        store: VectorStore | None = None,
        embedder: Embedder | None = None,
        reranker: Reranker | bool | None = False,  # False = build from settings when first needed
        generator: Generator | None = None,
        small_generator: Generator | None = None,
        ocr: OcrEngine | bool | None = False,  # False = build from settings when first needed
        verifier: Verifier | bool | None = False,  # False = build from settings when first needed
    ) -> None:
        self.settings = settings
        self._store = store
        self._embedder = embedder
        self._reranker = reranker
        self._generator = generator
        self._small_generator = small_generator
        self._ocr = ocr
        self._verifier = verifier
        self._manifests: dict[str, Manifest] = {}
        self._lock = threading.RLock()
        self._closed = False

    @classmethod
    def open(cls, settings: Settings, **backends: Any) -> Library:
        settings.kbs_dir.mkdir(parents=True, exist_ok=True)
        return cls(settings, **backends)

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for m in self._manifests.values():
                m.close()
            self._manifests.clear()
            if self._store is not None:
                self._store.close()
            for gen in (self._generator, self._small_generator):
                close = getattr(gen, "close", None)
                if callable(close):
                    close()

    # -- backends (lazy, each built once) ----------------------------------------------------------
    @property
    def store(self) -> VectorStore:
        with self._lock:
            if self._store is None:
                from .factory import open_store

                self._store = open_store(self.settings)
            return self._store

    @property
    def embedder(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                from .factory import build_embedder

                self._embedder = build_embedder(self.settings, self.built_with())
            return self._embedder

    def built_with(self) -> list[str | None]:
        """The embedder id each knowledge base here was built with (``None``: not yet, or
        unreadable), read without taking the bases' locks."""
        return [peek_meta(self._kb_dir(name) / "manifest.sqlite", "embedder") for name in self.list_kbs()]

    @property
    def reranker(self) -> Reranker | None:
        with self._lock:
            if self._reranker is False:
                from .factory import build_reranker

                self._reranker = build_reranker(self.settings)
            return self._reranker  # type: ignore[return-value]

    @property
    def verifier(self) -> Verifier | None:
        """The trained verifier, when ``query.verifier`` is on and it is installed (None: the
        LLM judge decides meaning)."""
        with self._lock:
            if self._verifier is False:
                from .factory import build_verifier

                self._verifier = build_verifier(self.settings) if self.settings.query.verifier else None
            return self._verifier  # type: ignore[return-value]

    @property
    def generator(self) -> Generator:
        with self._lock:
            if self._generator is None:
                from .factory import build_generator

                self._generator = build_generator(self.settings)
            return self._generator

    @property
    def small_generator(self) -> Generator:
        with self._lock:
            if self._small_generator is None:
                if not self.settings.models.small_llm.id or self.settings.models.small_llm.backend == "none":
                    return self.generator
                from .factory import build_small_generator

                self._small_generator = build_small_generator(self.settings)
            return self._small_generator

    @property
    def ocr(self) -> OcrEngine | None:
        with self._lock:
            if self._ocr is False:
                from .factory import build_ocr

                self._ocr = build_ocr(self.settings)
            return self._ocr  # type: ignore[return-value]

    def sparse_encoder(self, avg_len: float = 100.0) -> SparseEncoder:
        from .factory import build_sparse_encoder

        return build_sparse_encoder(self.settings, avg_len)

    # -- knowledge bases ---------------------------------------------------------------------------
    def _kb_dir(self, name: str) -> Path:
        return self.settings.kbs_dir / validate_kb_name(name)

    def manifest(self, name: str, create: bool = False) -> Manifest:
        name = validate_kb_name(name)
        with self._lock:
            m = self._manifests.get(name)
            if m is None:
                path = self._kb_dir(name) / "manifest.sqlite"
                if not path.exists() and not create:
                    raise KnowledgeBaseNotFound(f"There is no knowledge base named {name!r}.")
                m = Manifest(path)
                self._manifests[name] = m
            return m

    def list_kbs(self) -> list[str]:
        root = self.settings.kbs_dir
        if not root.exists():
            return []
        # a folder whose name starts with a dot is an import in progress (or its leftover)
        return sorted(p.name for p in root.iterdir() if not p.name.startswith(".") and (p / "manifest.sqlite").exists())

    def create_kb(self, name: str, *, require_owner: bool = False) -> None:
        """Create ``name`` (no-op when it exists). ``require_owner``: every search on it must carry
        an owner scope, and one without gets an error, never every document (fail-closed)."""
        name = validate_kb_name(name)
        if name not in self.list_kbs():
            check_new_name(name, self.list_kbs())
        emb = self.embedder  # load (or fail) before anything is written
        m = self.manifest(name, create=True)
        if m.get_meta("embedder") is None:
            m.set_meta(embedder=emb.id, dim=int(emb.dim), sparse=self.sparse_encoder().id,
                       chunker={"size": self.settings.chunk.size, "overlap": self.settings.chunk.overlap},
                       created_at=int(time.time()), require_owner=require_owner)
        self.store.create_collection(name, int(m.get_meta("dim")))

    def documents(self, name: str) -> list[DocumentRow]:
        return sorted(self.manifest(name).documents().values(), key=lambda r: r.path)

    def failures(self, name: str) -> dict[str, tuple[str, str, str]]:
        return self.manifest(name).failures()

    def forget_failures(self, name: str, paths: Sequence[str]) -> None:
        """Drop recorded ingest failures (e.g. the user removed or fixed those files)."""
        m = self.manifest(name)
        with m.transaction() as db:
            for p in paths:
                m.forget_failure(db, str(p))

    def document_markdown(self, name: str, doc_id: str) -> str:
        """The converted Markdown of a document (what chunk offsets point into)."""
        if not re.fullmatch(r"[0-9a-f]{8,64}", doc_id):
            raise ConfigError("Invalid document id.")
        path = self._kb_dir(name) / "docs" / f"{doc_id}.md"
        if not path.exists():
            raise KnowledgeBaseNotFound(f"The document {doc_id} is no longer in {name!r}.",
                                        "It was removed or re-indexed; ask again.")
        return path.read_text(encoding="utf-8")

    def document_ocr(self, name: str, doc_id: str) -> tuple[OcrPage, ...]:
        """The pages of a document that were read by OCR, with their line boxes (none for text)."""
        markdown = self.document_markdown(name, doc_id)
        return load_pages(self._kb_dir(name) / "docs" / f"{doc_id}.ocr.json", markdown)

    def _check_embedder(self, name: str, m: Manifest) -> None:
        recorded = m.get_meta("embedder")
        emb = self.embedder
        if recorded is not None and (recorded != emb.id or int(m.get_meta("dim", 0)) != int(emb.dim)):
            raise EmbedderMismatch(
                f"Knowledge base {name!r} was built with the embedder {recorded} "
                f"({m.get_meta('dim')} dims), but {emb.id} ({emb.dim} dims) is configured.", kb=name)

    def _target(self, name: str) -> IngestTarget:
        m = self.manifest(name)
        return IngestTarget(name=name, store=self.store, manifest=m, docs_dir=self._kb_dir(name) / "docs",
                            sparse_for=self.sparse_encoder)

    # -- ingest ------------------------------------------------------------------------------------
    def ingest(
        self,
        name: str,
        paths: Sequence[Path | str],
        *,
        tags: Sequence[str] | None = None,
        owner: str | None = None,
        pdf_password: str | None = None,
        progress: ProgressCallback = null_progress,
        cancel: CancelToken | None = None,
        restore: bool = False,
    ) -> IngestReport:
        """``restore``: the user named these paths to be added (again): files removed from the
        base earlier come back; without it (re-scans, watch, start-up updates) they stay out."""
        name = validate_kb_name(name)
        new = name not in self.list_kbs()
        self.create_kb(name)
        m = self.manifest(name)
        self._check_embedder(name, m)
        chunker = {"size": self.settings.chunk.size, "overlap": self.settings.chunk.overlap}
        roots = [Path(p) for p in paths]
        force = False
        if m.get_meta("chunker") != chunker or m.get_meta("sparse") != self.sparse_encoder().id:
            # chunking or tokenising changed: re-index every known file, not just these roots
            roots += [Path(p) for p in m.documents()]
            force = True
        report = ingest(self._target(name), roots, settings=self.settings, embedder=self.embedder, tags=tags,
                        owner=owner, pdf_password=pdf_password, force=force, ocr=self.ocr, progress=progress,
                        cancel=cancel, restore=restore)
        if force and not report.cancelled:
            m.set_meta(chunker=chunker, sparse=self.sparse_encoder().id)
        if new and report.failed and not m.documents():  # nothing could be read: no empty base is left
            self.delete_kb(name)
        return report

    def _reset_for_reembed(self, name: str, m: Manifest, files: dict[str, dict[str, Any]]) -> None:
        """Drop the vectors and document rows (the files, their tags and owners kept in the meta,
        :mod:`.ingest.reembed`) so they are embedded again with the configured model."""
        require_owner = bool(m.get_meta("require_owner"))
        reembedding.remember(m, files)  # before anything is dropped
        # the rows first: killed before the index is dropped, the base has no documents (its old
        # passages are not searched, views()) and the next re-embedding takes the files up again
        with m.transaction() as db:
            db.execute("DELETE FROM documents")
            db.execute("DELETE FROM vocab")
            db.execute("DELETE FROM pending")
            db.execute("DELETE FROM meta WHERE key <> ?", (reembedding.KEY,))
        if self.store.has_collection(name):
            self.store.drop_collection(name)
        self.create_kb(name, require_owner=require_owner)

    def reembed(self, name: str, **kwargs: Any) -> IngestReport:
        """Embed every file of ``name`` again with the configured embedder; tags and owners stay,
        and a re-embedding stopped part-way is finished by the next one."""
        m = self.manifest(name)
        files = reembedding.to_embed(m)
        self.embedder.embed_query("ok")  # an embedder that does not load fails here, with nothing dropped
        if not m.get_meta(reembedding.KEY):  # a first run (a stopped one's files are dropped already)
            reembedding.check_present(name, files)
        m.drop_enrichment(m.enrichments())  # its FAQ points go with the old index: enrich again
        self._reset_for_reembed(name, m, files)
        report = self.ingest(name, list(files), **kwargs)
        # a file that failed stays in the meta, so the next re-embedding tries it again
        reembedding.finish(name, self.store, m, files, complete=not report.cancelled and not report.failed)
        return report

    def remove_files(self, name: str, paths: Sequence[str]) -> list[str]:
        """Remove files, or every document under a folder; ConfigError for a path not in the base
        (before anything is removed). Each is recorded as excluded: re-scans of its folder, watch
        and start-up updates keep it out until it is added again by name (:meth:`ingest` with
        ``restore``) or put back (:meth:`put_back`)."""
        target = self._target(name)
        recover(target)
        rows = select_documents(target.manifest.documents(), paths)
        avg = float(target.manifest.get_meta("bm25_avg_len") or 100.0)
        removed = remove_documents(target, [r.path for r in rows], self.sparse_encoder(avg))
        target.manifest.exclude(paths)
        return removed

    # -- query -------------------------------------------------------------------------------------
    def views(self, kbs: Sequence[str] | None, flt: SearchFilter | None = None) -> list[Any]:
        """Retrieval views of the named knowledge bases (all when None), embedder checked; a base
        that requires an owner refuses a search without one, and a base whose index is gone says so."""
        from ..query.retrieve import KBView

        names = list(kbs) if kbs else self.list_kbs()
        if not names:
            raise KnowledgeBaseNotFound("There are no knowledge bases yet.",
                                        "Add documents first: desktop-kb ingest FOLDER --kb NAME")
        views = []
        for name in names:
            m = self.manifest(name)
            self._check_embedder(name, m)
            avg = float(m.get_meta("bm25_avg_len") or 100.0)
            if m.get_meta("require_owner") and not (flt is not None and flt.owners):
                raise OwnerScopeRequired(f"Knowledge base {name!r} can only be searched for an owner.")
            if m.get_meta(reembedding.KEY) and not m.documents():  # the meta is {} once a run is done
                continue  # a re-embedding stopped before its first file: nothing of it to search yet
            if not self.store.has_collection(name):
                if m.documents():
                    raise IndexMissing(f"The index of knowledge base {name!r} is missing or damaged.", kb=name)
                continue
            views.append(KBView(name=validate_kb_name(name), store=self.store, manifest=m,
                                sparse=self.sparse_encoder(avg)))
        return views

    def search(
        self,
        query: str,
        *,
        kbs: Sequence[str] | None = None,
        flt: SearchFilter | None = None,
        top_k: int | None = None,
        mode: str = "hybrid",
    ) -> list[Hit]:
        """Hybrid retrieval without generation (the retrieval debug view)."""
        from ..query.retrieve import retrieve

        if not query.strip():
            raise ConfigError("The search is empty.", "Type what to look for.")
        q = self.settings.query
        result = retrieve([query], self.views(kbs, flt), self.embedder, flt=flt, recall=max(q.recall, top_k or 0),
                          rrf_k=q.rrf_k, adaptive=q.adaptive_fusion, mode=mode)  # type: ignore[arg-type]
        return list(result.hits[: top_k or q.top_k])

    def warm_up(self, cancel: CancelToken | None = None) -> int:
        """Load the embedder and the answer model and prefill the fixed system prompts
        (:mod:`.query.warm`), so the first question is as fast as later ones; returns the tokens
        prefilled."""
        from ..query.warm import warm_up

        self.embedder  # noqa: B018 - loading is the point
        return warm_up(self.generator, judge=self.settings.query.judge, cancel=cancel)

    def ask(
        self,
        question: str,
        *,
        kbs: Sequence[str] | None = None,
        flt: SearchFilter | None = None,
        history: Sequence[tuple[str, str]] = (),
        reading_order: bool = False,
        on_token: Callable[[str], None] | None = None,
        on_restart: Callable[[], None] | None = None,
        cancel: CancelToken | None = None,
        on_stage: Callable[[str, int], None] | None = None,
    ) -> Answer:
        """Answer from the documents. ``on_token`` streams the first attempt; when a citation
        correction retry happens, ``on_restart`` is called and the retry streams too (without
        ``on_restart`` retries are not streamed: the returned Answer has the final text)."""
        from ..query.pipeline import Events, Models, Sources, answer, check_question

        check_question(question)  # empty or too long: said before any model loads
        asked = tuple(kbs) if kbs else tuple(self.list_kbs())
        sources = Sources(self.views(kbs, flt), self.document_toc, self.document_chunks, asked)
        # the answer model first: a missing one fails with a clear message before any search
        generator, small = self.generator, self.small_generator
        models = Models(self.embedder, self.reranker, generator, small, self.verifier)
        return answer(question, sources, models, self.settings.query, flt=flt, history=history,
                      reading_order=reading_order, events=Events(on_token, on_restart, on_stage, cancel))
