"""Small helpers shared by the model backends (no heavy imports here)."""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ModelError, ModelNotInstalled

__all__ = [
    "PrefixedEmbedder",
    "config_dim",
    "e5_prefixes",
    "ensure_model_max_length",
    "find_onnx_file",
    "force_offline",
    "hub_online",
    "l2_normalise",
    "missing_package",
    "quiet_transformers",
    "require_dir",
    "sigmoid",
]

_OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


def _set_hub_offline_constant(value: bool) -> None:
    # huggingface_hub reads HF_HUB_OFFLINE once at import time; keep its constant in step.
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:
        setattr(constants, "HF_HUB_OFFLINE", value)  # noqa: B010 (a module constant)


def force_offline() -> None:
    """Make every Hugging Face library in this process work from local files only."""
    for var in _OFFLINE_VARS:
        os.environ[var] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    _set_hub_offline_constant(True)


@contextmanager
def hub_online() -> Iterator[None]:
    """Temporarily allow hub downloads (the explicit online-install path only)."""
    saved = {var: os.environ.get(var) for var in _OFFLINE_VARS}
    for var in _OFFLINE_VARS:
        os.environ[var] = "0"
    _set_hub_offline_constant(False)
    try:
        yield
    finally:
        for var, value in saved.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value
        _set_hub_offline_constant(
            any(os.environ.get(v, "").upper() in ("1", "ON", "YES", "TRUE") for v in _OFFLINE_VARS)
        )


def private_process() -> None:
    """What the CLI and the app set first: no model hub (offline), no telemetry, and nothing
    written outside the data folder (onnxruntime otherwise keeps a device id in
    ~/.cache/Microsoft/DeveloperTools, seen in a clean system's home). Values set by the user stay."""
    for var in (*_OFFLINE_VARS, "HF_HUB_DISABLE_TELEMETRY", "ORT_DISABLE_TELEMETRY"):
        os.environ.setdefault(var, "1")


def quiet_transformers() -> None:
    """No progress bars or info logs from transformers/sentence-transformers in a desktop app."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        return
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


def missing_package(package: str, install: str, what: str) -> ModelNotInstalled:
    """ModelNotInstalled for a missing library; ``install`` is the pip argument that fixes it."""
    return ModelNotInstalled(
        f"{what} needs the Python package {package!r}, which is not installed.",
        f"Install it with `pip install {install}`, or choose another backend in the settings.",
    )


def require_dir(path: str | os.PathLike[str], what: str) -> Path:
    """The model folder ``path``, or ModelNotInstalled naming it."""
    p = Path(path).expanduser()
    if not str(path) or not p.is_dir():
        raise ModelNotInstalled(
            f"{what}: model folder not found: {p}",
            "Copy the model folder to this computer and run `desktop-kb models install --from DIR`, "
            "or `desktop-kb models install --online` when connected.",
        )
    return p


def find_onnx_file(model_dir: Path) -> str:
    """The ONNX weights inside ``model_dir``, relative to it (``model.onnx`` or ``onnx/model.onnx``)."""
    for rel in ("model.onnx", "onnx/model.onnx", "model_optimized.onnx", "onnx/model_quantized.onnx"):
        if (model_dir / rel).is_file():
            return rel
    candidates = sorted(p.relative_to(model_dir).as_posix() for p in model_dir.rglob("*.onnx"))
    if len(candidates) == 1:
        return candidates[0]
    raise ModelNotInstalled(
        f"No ONNX model file in {model_dir}"
        + (f" (several candidates: {', '.join(candidates)})" if candidates else ""),
        "The fastembed backend needs model.onnx (or onnx/model.onnx) next to tokenizer.json; "
        "use the sentence_transformers backend for a folder with safetensors weights.",
    )


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelError(f"Cannot read {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ModelError(f"{path} is not a JSON object.")
    return data


def config_dim(model_dir: Path) -> int:
    """hidden_size from a transformers config.json (0 when absent or unreadable)."""
    try:
        cfg = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    if not isinstance(cfg, dict):
        return 0
    value = cfg.get("hidden_size") or cfg.get("d_model") or 0
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _valid_length(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 1_000_000


def ensure_model_max_length(model_dir: Path, default: int = 512) -> bool:
    """fastembed refuses a tokenizer_config.json without a usable ``model_max_length``.

    Writes one (from config.json's position table, else ``default``) when it is missing or a
    placeholder such as 1e30. Returns True when the file was changed.
    """
    tok_path = model_dir / "tokenizer_config.json"
    tok = _read_json(tok_path) if tok_path.is_file() else {}
    if _valid_length(tok.get("model_max_length")) or _valid_length(tok.get("max_length")):
        return False
    length = default
    cfg_path = model_dir / "config.json"
    if cfg_path.is_file():
        cfg = _read_json(cfg_path)
        positions = cfg.get("max_position_embeddings")
        if isinstance(positions, int) and _valid_length(positions):
            # RoBERTa-style models (XLM-R, bge-m3) reserve padding_idx + 1 positions.
            offset = 2 if str(cfg.get("model_type", "")).endswith("roberta") else 0
            length = max(1, int(positions) - offset)
    tok["model_max_length"] = length
    try:
        tok_path.write_text(json.dumps(tok, indent=2, ensure_ascii=False), encoding="utf-8")
    except OSError as exc:
        raise ModelError(
            f"{tok_path} has no model_max_length and cannot be fixed ({exc}).",
            'Add "model_max_length": 512 to tokenizer_config.json, or install the folder with '
            "`desktop-kb models install --from DIR` (which fixes its copy).",
        ) from exc
    return True


def onnx_folder_manifest(folder: Path, model_file: str, manifest_file: str, *, not_built: str,
                         hint: str) -> dict[str, Any]:
    """The manifest (a JSON object) of a built ONNX model folder; ModelNotInstalled (``not_built``,
    ``hint``) when the model or its manifest is missing, ModelError when it is unreadable."""
    path = folder / manifest_file
    if not (folder / model_file).is_file() or not path.is_file():
        raise ModelNotInstalled(f"{not_built}: {folder / model_file}", hint)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelError(f"Cannot read {path}: {exc}", "Rebuild it with `desktop-kb models install`.") from exc
    if not isinstance(data, dict):
        raise ModelError(f"{path} is not a JSON object.", "Rebuild it with `desktop-kb models install`.")
    return data


def onnx_session(model: Path, threads: int, what: str) -> Any:
    """An ONNX Runtime CPU session on ``model`` (``threads`` intra-op, sequential, all graph
    optimisations); a clear error for a missing onnxruntime or a model it cannot load."""
    try:
        import onnxruntime as ort
    except ImportError as exc:
        raise missing_package("onnxruntime", "onnxruntime", what) from exc
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.log_severity_level = 3
    try:
        return ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own exception types (InvalidProtobuf, Fail, …)
        raise ModelError(f"ONNX Runtime cannot load {model}: {exc}",
                         "Rebuild it with `desktop-kb models install`.") from exc


def sigmoid(values: Sequence[float] | np.ndarray) -> list[float]:
    """Logits → probabilities in [0, 1], numerically stable."""
    out: list[float] = []
    for v in np.asarray(values, dtype=np.float64).reshape(-1):
        x = float(v)
        out.append(1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x)))
    return out


def l2_normalise(matrix: np.ndarray) -> np.ndarray:
    """Row-wise L2 normalisation to float32 (zero rows stay zero)."""
    m = np.asarray(matrix, dtype=np.float32)
    if m.ndim == 1:
        n = float(np.linalg.norm(m))
        return m / n if n > 0 else m
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (m / norms).astype(np.float32, copy=False)


def e5_prefixes(model_id: str) -> tuple[str, str]:
    """(query prefix, passage prefix) that the model was trained with ("" for most models)."""
    name = model_id.lower()
    if "e5" in name.split("/")[-1]:
        return "query: ", "passage: "
    return "", ""


class PrefixedEmbedder:
    """Shared part of the folder-based embedders: e5/BGE prefixes, normalisation, dimension
    check and discovery. Subclasses set ``id``, ``_dim``, the prefixes and ``_lock`` and
    implement ``_raw(texts) -> array`` (called under the lock)."""

    id: str
    _dim: int
    _query_prefix: str
    _passage_prefix: str
    _lock: Any

    def _raw(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def _embed(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            raw = self._raw(texts)
        out = l2_normalise(np.asarray(raw, dtype=np.float32).reshape(len(texts), -1))
        if self._dim and out.shape[1] != self._dim:
            raise ModelError(
                f"Embedder {self.id} returned {out.shape[1]}-d vectors, expected {self._dim}.",
                "Fix models.embedder.dim in the settings (or reinstall the model folder).",
            )
        self._dim = int(out.shape[1])
        return out

    @property
    def dim(self) -> int:
        """Vector size; when neither the settings nor config.json say, one probe text is embedded."""
        if self._dim <= 0:
            self._embed(["dim"])
        return self._dim

    @dim.setter
    def dim(self, value: int) -> None:
        self._dim = int(value)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return self._embed([self._passage_prefix + t for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([self._query_prefix + text])[0]

