"""Documents of a knowledge base as wholes: chunks in reading order, tables of contents, and the
LLM enrichment (summary, keywords, FAQ points). A mixin of :class:`desktop_kb.library.kb.Library` (kept
apart so each file stays small)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..ingest.manifest import Manifest
from ..ingest.toc import TocNode, build_toc, load_toc, save_toc
from ..progress import CancelToken
from ..protocols import Embedder, Generator, SearchFilter, SparseEncoder, VectorStore
from ..types import Chunk, IngestReport

if TYPE_CHECKING:
    from .enrich import EnrichReport

__all__ = ["DocumentsMixin"]


class DocumentsMixin:
    """Needs ``store``, ``manifest``, ``_kb_dir`` and ``document_markdown`` from the Library."""

    store: VectorStore
    embedder: Embedder
    generator: Generator

    def sparse_encoder(self, avg_len: float) -> SparseEncoder: ...  # pragma: no cover

    def _kb_dir(self, name: str) -> Path: ...  # pragma: no cover

    def manifest(self, name: str, create: bool = False) -> Manifest: ...  # pragma: no cover

    def document_markdown(self, name: str, doc_id: str) -> str: ...  # pragma: no cover

    def ingest(self, name: str, paths: Any, **kwargs: Any) -> IngestReport: ...  # pragma: no cover

    def excluded(self, name: str) -> list[str]:
        """The files and folders removed from ``name`` by the user (kept out of later scans)."""
        return self.manifest(name).excluded()

    def put_back(self, name: str, paths: Sequence[str], **kwargs: Any) -> IngestReport:
        """Lift the exclusion of ``paths`` (removed files or folders) and add what is there again."""
        lifted = self.manifest(name).include(paths)
        if not lifted:
            raise ConfigError(f"{', '.join(paths)} {'is' if len(paths) == 1 else 'are'} not removed from {name!r}.",
                              "`desktop-kb kb excluded NAME` lists what was removed.")
        return self.ingest(name, [p for p in lifted if Path(p).exists()], **kwargs)

    def doc_id_of(self, name: str, path: str | Path) -> str:
        """The doc id of an indexed file (by its path as indexed, or resolved)."""
        rows = self.manifest(name).documents()
        for key in (str(path), str(Path(path).expanduser().resolve())):
            if key in rows:
                return rows[key].doc_id
        raise ConfigError(f"{path} is not in the knowledge base {name!r}.",
                          f"`desktop-kb kb docs {name}` lists what it holds.")

    def document_chunks(self, name: str, doc_id: str) -> list[Chunk]:
        """Every chunk of one document, in reading order."""
        from ..query.retrieve import hit_from_payload

        records = self.store.scroll(name, SearchFilter(doc_ids=(doc_id,)))
        chunks = [hit_from_payload(name, r.id, r.payload, 0.0).chunk for r in records
                  if r.payload.get("kind") != "faq"]  # FAQ points carry a copy of their source chunk
        return sorted(chunks, key=lambda c: (c.start, c.index))

    def enrich(self, name: str, progress: Callable[[int, int, float | None], None] | None = None,
               cancel: CancelToken | None = None) -> EnrichReport:
        """Summary, keywords and FAQ points for every document of ``name`` not enriched yet."""
        from .enrich import enrich_kb

        m = self.manifest(name)
        sparse = self.sparse_encoder(float(m.get_meta("bm25_avg_len") or 100.0))
        return enrich_kb(name, m, self.store, lambda doc_id: self.document_chunks(name, doc_id), self.generator,
                         self.embedder, sparse, progress=progress, cancel=cancel)

    def enrichments(self, name: str) -> dict[str, dict[str, Any]]:
        """{doc_id: summary, keywords, faq…} of the documents enriched so far."""
        return self.manifest(name).enrichments()

    def document_toc(self, name: str, doc_id: str) -> tuple[TocNode, ...]:
        """The document's table of contents; made now (and kept) for a document indexed before
        tables of contents existed (from its headings: a PDF outline needs a re-index)."""
        markdown = self.document_markdown(name, doc_id)  # checks the id and that the document is there
        path = self._kb_dir(name) / "docs" / f"{doc_id}.toc.json"
        toc = load_toc(path)
        if toc is None:
            chunks = self.document_chunks(name, doc_id)
            title = next((r.title for r in self.manifest(name).documents().values() if r.doc_id == doc_id), "")
            toc = build_toc(markdown, chunks, title=title)
            save_toc(path, toc)
        return toc
