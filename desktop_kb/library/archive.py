"""Export and import a knowledge base as one archive, to move it to another machine or keep it.

The archive (a zip) holds ``desktop-kb-archive.json`` (format, the base's name, embedder id and
dimension, sparse encoder id, chunker, BM25 statistics and the SHA-256 of every other member),
``manifest.sqlite`` (files, tags, vocabulary counts), ``docs/`` (the converted Markdown and OCR
line boxes citations point into, and each document's table of contents) and ``points.jsonl`` (every passage: id, payload, the sparse
vector and the dense vector as base64 float32, so vectors come back byte for byte).

Import checks every checksum and member name before writing anything, refuses a base built
with another embedder (vectors of different models cannot be mixed) and never replaces an
existing base unless asked.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import shutil
import stat
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..diskspace import FRESH_STORE, MARGIN, ensure_free, guard
from ..errors import ConfigError, CorruptFile, DesktopKBError, EmbedderMismatch
from ..ingest.discover import sha256_file
from ..ingest.manifest import Manifest
from ..protocols import Embedder, SparseVec, StoredPoint, VectorStore

__all__ = ["FORMAT", "export_kb", "import_kb", "read_header"]

FORMAT = 1
HEADER = "desktop-kb-archive.json"
_MEMBER = re.compile(r"manifest\.sqlite|points\.jsonl|docs/[0-9a-f]{8,64}\.(?:md|ocr\.json|toc\.json|pages\.json)")
POINT_BYTES = 8 << 10  # a passage in points.jsonl: its text, payload and base64 vectors, at most about
_META_KEYS = ("embedder", "dim", "sparse", "chunker", "bm25_avg_len", "bm25_len_samples", "require_owner")


def export_kb(name: str, kb_dir: Path, store: VectorStore, manifest: Manifest, out: Path) -> dict[str, Any]:
    """Write ``name`` to the archive ``out`` (atomically; on a full disk nothing is left behind
    and ``DiskFull`` names the folder); returns its header."""
    out = _target_file(Path(out))
    # the points file is written next to the archive (not to /tmp, often a small RAM disk); the
    # archive is about as large as the points file, the docs and the manifest together
    need = 2 * (store.count(name) * POINT_BYTES + _size(kb_dir)) + MARGIN
    ensure_free(out.parent, need, f"to export {name!r} to {out.name}")
    with tempfile.TemporaryDirectory(prefix=".desktop-kb-export-", dir=out.parent) as tmp, \
            guard(out.parent, need, f"to export {name!r} to {out.name}"):
        work = Path(tmp)
        manifest.backup_to(work / "manifest.sqlite")
        n = 0
        with (work / "points.jsonl").open("w", encoding="utf-8") as fh:
            for p in store.points(name):
                dense = base64.b64encode(np.asarray(p.dense, dtype="<f4").tobytes()).decode("ascii")
                fh.write(json.dumps({"id": p.id, "payload": p.payload, "dense": dense,
                                     "sparse": [list(p.sparse.indices), list(p.sparse.values)]},
                                    ensure_ascii=False) + "\n")
                n += 1
        members = {"manifest.sqlite": work / "manifest.sqlite", "points.jsonl": work / "points.jsonl"}
        docs = kb_dir / "docs"
        for f in sorted(docs.iterdir()) if docs.is_dir() else []:
            if _MEMBER.fullmatch(f"docs/{f.name}"):
                members[f"docs/{f.name}"] = f
        header = {"format": FORMAT, "kb": name, "points": n,
                  "meta": {k: manifest.get_meta(k) for k in _META_KEYS},
                  "files": {m: sha256_file(p) for m, p in members.items()}}
        partial = out.with_name(out.name + ".part")
        try:
            with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as zf:
                zf.writestr(HEADER, json.dumps(header, ensure_ascii=False, indent=2))
                for member, path in members.items():
                    zf.write(path, member)
            partial.replace(out)
        finally:
            partial.unlink(missing_ok=True)
    return header


def _target_file(out: Path) -> Path:
    """The archive's path, checked: a file name in a folder that exists."""
    if not out.name or out.is_dir():
        raise ConfigError(f"{out} is a folder, not a file name.", "Give the archive a file name, e.g. work.kbx.")
    if not out.parent.is_dir():
        raise ConfigError(f"The folder {out.parent} does not exist.", "Create it first, or choose another folder.")
    return out


def _damaged(name: str, what: str) -> CorruptFile:
    return CorruptFile(f"{name} is damaged: {what}.", "Export it again from the computer it came from.")


def _size(folder: Path) -> int:
    """The bytes the files under ``folder`` take (its docs and manifest; the store's sparse
    mapped files count by their disk use)."""
    total = 0
    for f in folder.rglob("*"):
        try:
            st = f.stat()
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            total += min(st.st_size, getattr(st, "st_blocks", st.st_size // 512 + 1) * 512)
    return total


def read_header(archive: Path) -> dict[str, Any]:
    """The archive's header, after checking its format, member names and checksums."""
    archive = Path(archive)
    name = archive.name
    if not archive.is_file():
        raise ConfigError(f"{archive} is {'a folder' if archive.is_dir() else 'not there'}: no archive to import.",
                          "Give the path of a file written by `desktop-kb kb export`.")
    try:
        with zipfile.ZipFile(archive) as zf:
            header = json.loads(zf.read(HEADER))
            files = header["files"]
            names = set(zf.namelist()) - {HEADER}
            if header.get("format") != FORMAT or not isinstance(files, dict):
                raise CorruptFile(f"{name} is not a desktop-kb archive of a format this version reads.")
            if names != set(files) or not all(_MEMBER.fullmatch(m) for m in names):
                raise _damaged(name, "it has missing or unexpected members")
            meta = header.get("meta")
            if not isinstance(meta, dict) or not isinstance(header.get("kb"), str) \
                    or not isinstance(meta.get("dim"), int):
                raise _damaged(name, "its header does not describe a knowledge base")
            for member, digest in files.items():
                h = hashlib.sha256()
                with zf.open(member) as fh:
                    while block := fh.read(1 << 20):
                        h.update(block)
                if h.hexdigest() != digest:
                    raise _damaged(name, f"{member} does not match its checksum")
    except (zipfile.BadZipFile, KeyError, ValueError, TypeError, AttributeError, OSError) as exc:
        raise CorruptFile(f"{name} is damaged or not a desktop-kb archive.",
                          "Give the path of a file written by `desktop-kb kb export`.") from exc
    return header


def import_kb(archive: Path, header: dict[str, Any], target: str, kb_dir: Path, store: VectorStore,
              embedder: Embedder, open_manifest: Callable[[], Manifest], collection: str | None = None) -> int:
    """Unpack an archive verified by :func:`read_header` into the (absent) base ``target``, in
    ``kb_dir`` and the store's ``collection`` (default: ``target``; the library imports into a
    staging folder and renames it when complete); returns the passages written."""
    collection = collection or target
    meta = header["meta"]
    if meta.get("embedder") != embedder.id or int(meta.get("dim") or 0) != int(embedder.dim):
        raise EmbedderMismatch(
            f"The archive was built with the embedder {meta.get('embedder')} ({meta.get('dim')} dims); "
            f"{embedder.id} ({embedder.dim} dims) is configured.",
            f"Set models.embedder to {meta.get('embedder')} to import it, or add the original folders "
            "to a new knowledge base.")
    if kb_dir.exists():
        raise ConfigError(f"A knowledge base named {target!r} already exists.", "Import it --as another name.")
    with zipfile.ZipFile(archive) as zf:
        unpacked = sum(i.file_size for i in zf.infolist())
    # the docs and manifest as they are, the points once more in the store (plus its own files)
    ensure_free(kb_dir.parent, 2 * unpacked + FRESH_STORE + MARGIN, f"to import {Path(archive).name}")
    with guard(kb_dir.parent, what=f"to import {Path(archive).name}"):  # after the clean-up: DiskFull
        try:
            return _unpack(archive, header, target, kb_dir, store, open_manifest, collection)
        except BaseException:
            if store.has_collection(collection):
                store.drop_collection(collection)
            shutil.rmtree(kb_dir, ignore_errors=True)
            raise


def _unpack(archive: Path, header: dict[str, Any], target: str, kb_dir: Path, store: VectorStore,
            open_manifest: Callable[[], Manifest], collection: str) -> int:
    """The import's writes: the docs and manifest into ``kb_dir``, the points into ``collection``."""
    with zipfile.ZipFile(archive) as zf:
        (kb_dir / "docs").mkdir(parents=True)
        for member in header["files"]:
            if member.startswith("docs/") or member == "manifest.sqlite":
                with zf.open(member) as src, (kb_dir / member).open("wb") as dst:
                    shutil.copyfileobj(src, dst)
        store.create_collection(collection, int(header["meta"]["dim"]))
        n = 0
        with zf.open("points.jsonl") as fh:
            batch: list[StoredPoint] = []
            for k, line in enumerate(fh, 1):
                try:
                    rec = json.loads(line)
                    dense = np.frombuffer(base64.b64decode(rec["dense"]), dtype="<f4").astype(np.float32)
                    payload = dict(rec["payload"], kb=target)
                    batch.append(StoredPoint(rec["id"], dense, SparseVec(*map(tuple, rec["sparse"])), payload))
                except (KeyError, ValueError, TypeError, binascii.Error) as exc:
                    raise _damaged(Path(archive).name, f"passage {k} of points.jsonl cannot be read") from exc
                if len(batch) >= 256:
                    store.upsert(collection, batch)
                    n, batch = n + len(batch), []
            store.upsert(collection, batch)
            n += len(batch)
        store.flush(collection)
    try:
        open_manifest().set_meta(imported_from=header["kb"])
    except DesktopKBError as exc:  # the manifest we just unpacked: damaged, not in use
        raise _damaged(Path(archive).name, "its manifest cannot be opened") from exc
    return n
