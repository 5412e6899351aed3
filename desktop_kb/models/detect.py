"""Recognise what a copied model file or folder is (no model is loaded here)."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..backends._common import config_dim
from ..errors import ConfigError
from .assemble import GGUF_MAGIC

__all__ = ["DetectedModel", "detect_model"]

# Folder/repo names (lower-case, without an "-onnx" suffix) → canonical model ids.
_KNOWN_IDS = {
    "bge-m3": "BAAI/bge-m3",
    "bge-reranker-v2-m3": "BAAI/bge-reranker-v2-m3",
    "bge-reranker-base": "BAAI/bge-reranker-base",
    "jina-reranker-v2-base-multilingual": "jinaai/jina-reranker-v2-base-multilingual",
    "ms-marco-minilm-l-6-v2": "cross-encoder/ms-marco-MiniLM-L-6-v2",
    "ms-marco-minilm-l6-v2": "cross-encoder/ms-marco-MiniLM-L-6-v2",
    "all-minilm-l6-v2": "sentence-transformers/all-MiniLM-L6-v2",
    "all-mpnet-base-v2": "sentence-transformers/all-mpnet-base-v2",
    "multilingual-e5-small": "intfloat/multilingual-e5-small",
}

@dataclass(frozen=True)
class DetectedModel:
    role: str  # embedder | reranker | llm
    backend: str
    id: str
    dim: int = 0
    file: Path | None = None  # the GGUF file, for an LLM


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _is_gguf(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(4) == GGUF_MAGIC
    except OSError:
        return False


def _guess_id(src: Path, config: dict[str, Any], fallback_prefix: str = "local") -> str:
    names: list[str] = []
    if src.parent.name == "snapshots" and src.parent.parent.name.startswith("models--"):
        names.append(src.parent.parent.name[len("models--") :].replace("--", "/"))  # a hub cache folder
    name_or_path = str(config.get("_name_or_path") or "")
    if name_or_path and not Path(name_or_path).is_absolute() and name_or_path.count("/") == 1:
        names.append(name_or_path)
    names.append(src.name.replace("--", "/"))
    for name in names:
        key = name.split("/")[-1].lower().removesuffix("-onnx")
        if key in _KNOWN_IDS:
            return _KNOWN_IDS[key]
    for name in names:
        if name.count("/") == 1 and all(name.split("/")):
            return name
    return f"{fallback_prefix}/{src.name}"


def _st_dim(src: Path) -> int:
    """Output size of a sentence-transformers folder: its last Dense layer, else the transformer."""
    dim = config_dim(src)
    modules = _read_json_list(src / "modules.json")
    for module in modules:
        if str(module.get("type", "")).endswith("Dense"):
            out = _read_json(src / str(module.get("path", "")) / "config.json").get("out_features")
            if isinstance(out, int):
                dim = out
    return dim


def _read_json_list(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [d for d in data if isinstance(d, dict)] if isinstance(data, list) else []


def detect_model(src: Path) -> DetectedModel:
    """What ``src`` is: a GGUF LLM, a cross-encoder folder (reranker) or an embedder folder."""
    src = Path(src).expanduser()
    if src.is_file():
        if not _is_gguf(src):
            raise ConfigError(f"{src} is not a model: expected a .gguf file or a model folder.")
        return DetectedModel("llm", "llama_cpp", src.stem.lower(), file=src)
    if not src.is_dir():
        raise ConfigError(f"{src} does not exist.")
    config = _read_json(src / "config.json")
    if not config and not (src / "modules.json").is_file():
        ggufs = [p for p in src.glob("*.gguf") if _is_gguf(p)]
        if len(ggufs) == 1:
            return DetectedModel("llm", "llama_cpp", ggufs[0].stem.lower(), file=ggufs[0])
        raise ConfigError(
            f"{src} is not a model folder: no config.json"
            + (f", and {len(ggufs)} GGUF files (pick one)." if ggufs else "."),
            "Point --from at the folder that holds config.json and tokenizer.json, or at a .gguf file.",
        )
    has_onnx = any(src.glob("*.onnx")) or any(src.glob("onnx/*.onnx"))
    has_torch = any(src.glob("*.safetensors")) or (src / "pytorch_model.bin").is_file()
    if not (has_onnx or has_torch):
        raise ConfigError(f"{src} has no model weights (model.onnx, *.safetensors or pytorch_model.bin).")
    if has_onnx and not (src / "tokenizer.json").is_file():
        raise ConfigError(f"{src} has ONNX weights but no tokenizer.json next to config.json.")
    fastembed_ok = importlib.util.find_spec("fastembed") is not None
    st_ok = importlib.util.find_spec("sentence_transformers") is not None
    backend = "fastembed" if has_onnx and (fastembed_ok or not (has_torch and st_ok)) else "sentence_transformers"
    architectures = [str(a) for a in config.get("architectures") or []]
    if any(a.endswith("ForSequenceClassification") for a in architectures):
        return DetectedModel("reranker", backend, _guess_id(src, config))
    dim = _st_dim(src) if (src / "modules.json").is_file() else config_dim(src)
    return DetectedModel("embedder", backend, _guess_id(src, config), dim=dim)
