"""Managing knowledge bases as wholes: delete, rename, stats, metadata edits, export/import and
push to a Qdrant server. A mixin of :class:`desktop_kb.library.kb.Library` (kept apart so each file stays
small); the work itself is done by :mod:`desktop_kb.library.archive`, :mod:`desktop_kb.ingest.metadata`
and :mod:`desktop_kb.store.copy`."""

from __future__ import annotations

import re
import shutil
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError, KnowledgeBaseInUse, KnowledgeBaseNotFound
from ..ingest.folder_lock import FolderLock
from ..ingest.manifest import Manifest
from ..protocols import Embedder, VectorStore
from ..settings import Settings
from .check import Health, RepairReport

__all__ = ["AdminMixin", "KBInfo", "validate_kb_name"]

STAGING = ".importing-"  # an import in progress (never a valid knowledge base name: it starts with a dot)
_NAME = re.compile(r"^[^\\/:*?\"<>|\x00-\x1f]{1,64}$")


def validate_kb_name(name: str) -> str:
    name = name.strip() if isinstance(name, str) else ""
    if not _NAME.match(name) or name.startswith(".") or name in (".", ".."):
        raise ConfigError(
            f"{name[:70]!r} is not a valid knowledge base name.",
            "Use 1–64 characters without / \\ : * ? \" < > | and not starting with a dot.",
        )
    return name


_WINDOWS_DEVICES = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)), *(f"LPT{i}" for i in range(1, 10))}


def check_new_name(name: str, existing: Sequence[str]) -> None:
    """A name for a new base that is a folder name on every system the app runs on: not a Windows
    device name, not ending in a dot or a space, not another base's name in other letter case
    (Windows and macOS would take it for that base's folder)."""
    if name.split(".")[0].strip().upper() in _WINDOWS_DEVICES or name.endswith((".", " ")):
        raise ConfigError(f"{name!r} cannot be a folder name on Windows.", "Choose another name.")
    same = [n for n in existing if n.casefold() == name.casefold() and n != name]
    if same:
        raise ConfigError(f"{name!r} differs from the knowledge base {same[0]!r} only in letter case.",
                          "Choose another name (Windows and macOS would not tell the two apart).")


@dataclass(frozen=True)
class KBInfo:
    name: str
    documents: int
    chunks: int
    failed: int
    embedder: str
    dim: int
    sparse: str
    chunker: dict[str, int]
    updated_at: int  # last ingest time (Unix seconds), 0 if never
    cjk_share: float

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


class AdminMixin:
    settings: Settings
    _lock: threading.RLock
    _manifests: dict[str, Manifest]
    _store: VectorStore | None

    # provided by Library
    store: VectorStore
    embedder: Embedder

    def _kb_dir(self, name: str) -> Path: ...  # pragma: no cover

    def manifest(self, name: str, create: bool = False) -> Manifest: ...  # pragma: no cover

    def list_kbs(self) -> list[str]: ...  # pragma: no cover

    def sparse_encoder(self, avg_len: float = 100.0) -> Any: ...  # pragma: no cover

    def _target(self, name: str) -> Any: ...  # pragma: no cover

    def reembed(self, name: str, **kwargs: Any) -> Any: ...  # pragma: no cover

    @property
    def ocr(self) -> Any: ...  # pragma: no cover

    def delete_kb(self, name: str) -> None:
        name = validate_kb_name(name)
        if name not in self.list_kbs():
            raise KnowledgeBaseNotFound(f"There is no knowledge base named {name!r}.")
        with self._lock:
            if self.store.has_collection(name):
                self.store.drop_collection(name)
            m = self._manifests.pop(name, None)
            if m is not None:
                m.close()
            shutil.rmtree(self._kb_dir(name), ignore_errors=True)

    def rename_kb(self, old: str, new: str) -> None:
        old, new = validate_kb_name(old), validate_kb_name(new)
        if old not in self.list_kbs():
            raise KnowledgeBaseNotFound(f"There is no knowledge base named {old!r}.")
        if new in self.list_kbs():
            raise ConfigError(f"A knowledge base named {new!r} already exists.", "Pick another name.")
        check_new_name(new, [n for n in self.list_kbs() if n != old])
        if self.settings.store.url:
            raise ConfigError("Renaming is not supported with a Qdrant server.",
                              "Create a new knowledge base and ingest the folders again.")
        with self._lock:
            m = self._manifests.pop(old, None)
            if m is not None:
                m.close()
            probe = FolderLock(self._kb_dir(old) / "manifest.lock")  # another process ingesting or watching
            if not probe.acquire():
                raise KnowledgeBaseInUse(f"Knowledge base {old!r} is in use by another desktop-kb process.",
                                         "Close the other desktop-kb window or command, then rename it.")
            probe.release()
            store = self.store
            store.close()  # release the shard's lock before moving its folder
            self._kb_dir(old).rename(self._kb_dir(new))
            self._store = None  # the other bases' manifests stay open (and their locks held)

    def check_kb(self, name: str) -> Health:
        """Compare the manifest, the stored Markdown and the store of ``name`` (nothing changed)."""
        from .check import inspect

        name = self._existing(name)
        return inspect(name, self._kb_dir(name), self.store, lambda: self.manifest(name))

    def repair_kb(self, name: str) -> RepairReport:
        """Rebuild what :meth:`check_kb` finds wrong, as far as it can (:mod:`desktop_kb.library.check`)."""
        from ..ingest.pipeline import ingest, recover
        from .check import RepairContext, repair

        name = self._existing(name)

        def reset() -> None:
            with self._lock:
                m = self._manifests.pop(name, None)
                if m is not None:
                    m.close()

        def reingest(paths: Sequence[str]) -> None:
            ingest(self._target(name), [Path(p) for p in paths], settings=self.settings, embedder=self.embedder,
                   force=True, ocr=self.ocr)

        ctx = RepairContext(kb=name, kb_dir=self._kb_dir(name), store=self.store,
                            open_manifest=lambda: self.manifest(name, create=True), reset_manifest=reset,
                            embedder=self.embedder, sparse_for=self.sparse_encoder, chunk=self.settings.chunk,
                            recover=lambda: recover(self._target(name)), reingest=reingest,
                            reembed=lambda: self.reembed(name))
        return repair(ctx)

    def _existing(self, name: str) -> str:
        name = validate_kb_name(name)
        if not (self._kb_dir(name) / "manifest.sqlite").exists() and not (self._kb_dir(name) / "docs").is_dir():
            raise KnowledgeBaseNotFound(f"There is no knowledge base named {name!r}.")
        return name

    def stats(self, name: str) -> KBInfo:
        m = self.manifest(name)
        docs, chunks, cjk, letters = m.corpus_stats()
        rows = m.documents()
        return KBInfo(
            name=validate_kb_name(name), documents=docs, chunks=chunks, failed=len(m.failures()),
            embedder=str(m.get_meta("embedder", "")), dim=int(m.get_meta("dim", 0)),
            sparse=str(m.get_meta("sparse", "")), chunker=dict(m.get_meta("chunker", {})),
            updated_at=max((r.ingested_at for r in rows.values()), default=0),
            cjk_share=round(cjk / letters, 3) if letters else 0.0,
        )

    def export_kb(self, name: str, out: Path | str) -> dict[str, Any]:
        """Write knowledge base ``name`` to one archive (see :mod:`desktop_kb.library.archive`)."""
        from .archive import export_kb

        name = validate_kb_name(name)
        return export_kb(name, self._kb_dir(name), self.store, self.manifest(name), Path(out))

    def import_kb(self, archive: Path | str, as_name: str | None = None, replace: bool = False) -> str:
        """Import an archive (checksums verified, the embedder must match) as ``as_name`` or its
        own name; an existing base is replaced only with ``replace``. Returns the name."""
        from .archive import import_kb, read_header

        header = read_header(Path(archive))
        target = validate_kb_name(as_name or str(header.get("kb", "")))
        if target not in self.list_kbs():
            check_new_name(target, self.list_kbs())
        if target in self.list_kbs() and not replace:
            raise ConfigError(f"A knowledge base named {target!r} already exists.",
                              "Import it --as another name, or --replace it.")
        if self.settings.store.url:  # a server's collections cannot be renamed: straight in
            if target in self.list_kbs():
                self.delete_kb(target)
            import_kb(Path(archive), header, target, self._kb_dir(target), self.store, self.embedder,
                      lambda: self.manifest(target))
            return target
        # into a staging folder, renamed when complete: a kill part-way leaves no half base (the
        # next import removes the staging folder), and a replaced base stays until then
        staging = f"{STAGING}{target}"
        with self._lock:
            if self.store.has_collection(staging):
                self.store.drop_collection(staging)
            shutil.rmtree(self.settings.kbs_dir / staging, ignore_errors=True)
            opened: list[Manifest] = []

            def open_staging() -> Manifest:
                opened.append(Manifest(self.settings.kbs_dir / staging / "manifest.sqlite"))
                return opened[-1]

            try:
                import_kb(Path(archive), header, target, self.settings.kbs_dir / staging, self.store, self.embedder,
                          open_staging, collection=staging)
            finally:
                for m in opened:
                    m.close()
            if target in self.list_kbs():
                self.delete_kb(target)
            self.store.close()  # release the staging shard's lock before its folder moves
            (self.settings.kbs_dir / staging).rename(self._kb_dir(target))
        return target

    def set_metadata(self, name: str, paths: Sequence[Path | str], **edits: Any) -> list[str]:
        """Edit tags (``tags=``, ``add=``, ``remove=``) or ``owner=`` of files or folders in ``name``
        without re-embedding; returns the paths that changed."""
        from ..ingest.metadata import select_documents, set_metadata

        m = self.manifest(name)
        return set_metadata(name, self.store, m, select_documents(m.documents(), paths), **edits)

    def push_kb(self, name: str, url: str, api_key: str = "", *, target: VectorStore | None = None) -> int:
        """Copy ``name`` into the Qdrant server at ``url`` (vectors and payloads as they are);
        recorded in the manifest, so ``kb list`` shows where the base lives. Returns the passages."""
        from ..store.copy import copy_points
        from ..store.server import ServerStore

        name = validate_kb_name(name)
        m = self.manifest(name)
        dst = target or ServerStore(url, api_key, self.settings.store.hnsw_threshold)
        try:
            n = copy_points(self.store, dst, name, int(m.get_meta("dim")))
        finally:
            if target is None:
                dst.close()
        pushed = [u for u in m.get_meta("pushed_to", []) if u != url] + [url]
        m.set_meta(pushed_to=pushed)
        return n

    def location(self, name: str) -> str:
        """Where a base's passages live: "embedded" or the server URL (plus where it was pushed)."""
        here = self.settings.store.url or "embedded"
        pushed = [u for u in self.manifest(name).get_meta("pushed_to", []) if u != here]
        return here + (f" (pushed to {', '.join(pushed)})" if pushed else "")

