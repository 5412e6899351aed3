"""Turn a dataset's corpus into a throw-away knowledge base, ingested through the real pipeline.

Every record becomes one Markdown file ``# {title}\\n\\n{text}`` in ``<cache>/<kb>/corpus/``, named by
a reversible, file-system-safe encoding of its ``_id`` (so a retrieved chunk's path maps back to the
record). The cache sits next to the data folder (``<data dir>-eval``), not inside it: the pipeline
refuses to index the app's own data folder. The knowledge base is named after a
hash of the corpus file and the embedder (``eval-<sha1[:10]>``): a second run finds every file
unchanged and embeds nothing, and two datasets sharing a corpus (CMRC retrieval and QA) share it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from ..progress import CancelToken, IngestProgress, ProgressCallback
from ..types import IngestReport
from .datasets import Document

__all__ = ["PreparedKB", "decode_id", "default_cache_root", "encode_id", "eval_kb_name", "id_for_path",
           "materialise", "prepare_kb"]

_SAFE = re.compile(r"[A-Za-z0-9_\-]")
_MAX_STEM = 120
_WINDOWS_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}
MAP_FILE = "ids.json"


def encode_id(doc_id: str) -> str:
    """A file stem for ``doc_id``: ASCII letters, digits, ``_`` and ``-`` kept, everything else
    percent-encoded (UTF-8), so ``decode_id(encode_id(x)) == x``."""
    out = "".join(ch if _SAFE.fullmatch(ch) else "".join(f"%{b:02X}" for b in ch.encode("utf-8")) for ch in doc_id)
    return out or "%"  # "" would be an invalid file name


def decode_id(stem: str) -> str:
    return "" if stem == "%" else unquote(stem, encoding="utf-8", errors="strict")


def _stems(ids: list[str]) -> dict[str, str]:
    """stem -> id. Long ids, Windows device names and ids that collide on a case-insensitive file
    system get a hashed stem (recorded in ids.json)."""
    out: dict[str, str] = {}
    folded: set[str] = set()
    for doc_id in ids:
        stem = encode_id(doc_id)
        if len(stem) > _MAX_STEM or stem.lower() in _WINDOWS_RESERVED or stem.lower() in folded:
            stem = "h-" + hashlib.sha1(doc_id.encode("utf-8")).hexdigest()
        folded.add(stem.lower())
        out[stem] = doc_id
    return out


def default_cache_root(data_dir: Path) -> Path:
    """``<data dir>-eval``, beside the data folder (re-creatable: safe to delete)."""
    data_dir = Path(data_dir).resolve()
    return data_dir.with_name(data_dir.name + "-eval")


def eval_kb_name(corpus_sha1: str, embedder_id: str) -> str:
    return "eval-" + hashlib.sha1(f"{corpus_sha1}\x00{embedder_id}".encode()).hexdigest()[:10]


def markdown_for(doc: Document) -> str:
    title = " ".join(doc.title.split())
    return f"# {title}\n\n{doc.text}\n" if title else f"{doc.text}\n"


def materialise(corpus: Mapping[str, Document], folder: Path) -> dict[str, str]:
    """Write one Markdown file per record (only those missing or different, so unchanged files keep
    their mtime and the pipeline skips them without hashing). Returns stem -> id."""
    folder.mkdir(parents=True, exist_ok=True)
    stems = _stems(list(corpus))
    for stem, doc_id in stems.items():
        path = folder / f"{stem}.md"
        data = markdown_for(corpus[doc_id]).encode("utf-8")
        try:
            if path.stat().st_size == len(data) and path.read_bytes() == data:
                continue
        except FileNotFoundError:
            pass
        tmp = path.with_name(path.name + ".tmp")  # *.tmp files are skipped by discovery
        tmp.write_bytes(data)
        os.replace(tmp, path)
    # outside the corpus folder: a .json file there would be ingested as a document
    (folder.parent / MAP_FILE).write_text(json.dumps({s: i for s, i in stems.items() if s.startswith("h-")},
                                                     ensure_ascii=False), encoding="utf-8")
    return stems


def id_for_path(path: str, stems: Mapping[str, str]) -> str:
    stem = Path(path).stem
    got = stems.get(stem)
    return got if got is not None else decode_id(stem)


@dataclass(frozen=True)
class PreparedKB:
    name: str  # the knowledge base
    cache_dir: Path  # <cache root>/<name>: corpus/, state.json, ids.json, translations-*.json
    stems: dict[str, str]  # file stem -> record id
    ingest_s: float  # wall time of the ingest that embedded the corpus (from the cache when reused)
    cached: bool  # True when nothing had to be embedded in this run
    documents: int
    chunks: int
    failed: int
    report: IngestReport

    def doc_id(self, path: str) -> str:
        return id_for_path(path, self.stems)


class LogProgress:
    """Ingest progress on stderr: a bar on a terminal, a line every ~5% otherwise (nohup logs)."""

    def __init__(self, label: str, stream: Any = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last = -1.0
        self._last_t = 0.0

    def __call__(self, progress: IngestProgress) -> None:
        p = progress
        if p.files_total == 0:
            return
        frac = p.files_done / p.files_total
        now = time.monotonic()
        eta = f", ETA {int(p.eta_s)} s" if p.eta_s is not None and p.stage != "done" else ""
        line = (f"{self.label}: {p.files_done}/{p.files_total} files, {p.chunks_done} chunks, "
                f"{p.elapsed_s:.0f} s{eta}")
        if self.tty:
            if now - self._last_t > 0.2 or p.stage == "done":
                self._last_t = now
                self.stream.write("\r" + line.ljust(90) + ("\n" if p.stage == "done" else ""))
                self.stream.flush()
        elif frac - self._last >= 0.05 or p.stage == "done":
            self._last = frac
            self.stream.write(line + "\n")
            self.stream.flush()


def _write_state(path: Path, state: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(state, indent=2), encoding="utf-8")
    os.replace(tmp, path)


def prepare_kb(
    lib: Any,
    corpus: Mapping[str, Document],
    corpus_sha1: str,
    *,
    cache_root: Path | None = None,
    progress: ProgressCallback | None = None,
    cancel: CancelToken | None = None,
) -> PreparedKB:
    """Materialise the corpus and ingest it (incrementally) into its cached knowledge base."""
    name = eval_kb_name(corpus_sha1, lib.embedder.id)
    cache = Path(cache_root or default_cache_root(lib.settings.data_dir)) / name
    folder = cache / "corpus"
    stems = materialise(corpus, folder)
    state_path = cache / "state.json"
    state: dict[str, Any] = json.loads(state_path.read_text(encoding="utf-8")) if state_path.exists() else {}
    # an interrupted (killed) ingest is resumed by the next run: its time so far is kept in state.json
    before = float(state.get("ingest_s", 0.0)) if state.get("complete") is False else 0.0
    shown = progress or LogProgress(name)
    t0 = time.perf_counter()
    last = [t0]

    def track(progress: IngestProgress) -> None:
        shown(progress)
        now = time.perf_counter()
        if progress.files_done and now - last[0] > 30:
            last[0] = now
            _write_state(state_path, state | {"ingest_s": round(before + now - t0, 2), "complete": False})

    report = lib.ingest(name, [folder], progress=track, cancel=cancel)
    # the knowledge base is named by corpus and embedder, not by cache folder: a run with another
    # --cache-dir ingests the same corpus again from there; keep this folder's copy only
    inside = str(folder.resolve())
    stale = [d.path for d in lib.documents(name) if not d.path.startswith(inside + os.sep)]
    if stale:
        lib.remove_files(name, stale)
    elapsed = time.perf_counter() - t0
    embedded = bool(report.added or report.updated)
    if embedded:
        state["ingest_s"] = round(before + elapsed, 2)
    state.setdefault("ingest_s", round(elapsed, 2))
    stats = lib.stats(name)
    state.update(documents=stats.documents, chunks=stats.chunks, embedder=stats.embedder,
                 corpus_sha1=corpus_sha1, complete=not report.cancelled and stats.documents >= len(corpus))
    _write_state(state_path, state)
    return PreparedKB(name=name, cache_dir=cache, stems=stems, ingest_s=float(state["ingest_s"]),
                      cached=not embedded, documents=stats.documents, chunks=stats.chunks,
                      failed=len(report.failed), report=report)
