"""The real reranker loading/scoring paths, on a tiny random-weight cross-encoder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from desktop_kb.errors import ModelNotInstalled
from desktop_kb.protocols import Reranker

pytestmark = pytest.mark.slow

QUERY = "what is a vector database"
PASSAGES = [
    "A vector database stores embeddings and searches them by similarity.",
    "Bananas are yellow and rich in potassium, good for your muscles after exercise.",
    "x",
    "向量数据库用于存储嵌入向量。",
]


@pytest.fixture(scope="module")
def fastembed_reranker(tiny_cross_encoder_dir: Path):
    pytest.importorskip("fastembed")
    from desktop_kb.backends.rerank_fastembed import FastEmbedReranker

    return FastEmbedReranker("test/tiny-cross-encoder", tiny_cross_encoder_dir)


@pytest.fixture(scope="module")
def st_reranker(tiny_cross_encoder_dir: Path):
    pytest.importorskip("sentence_transformers")
    from desktop_kb.backends.rerank_st import STReranker

    return STReranker(tiny_cross_encoder_dir, "test/tiny-cross-encoder")


@pytest.mark.parametrize("name", ["fastembed_reranker", "st_reranker"])
def test_one_probability_per_passage_in_input_order(name: str, request: pytest.FixtureRequest) -> None:
    reranker = request.getfixturevalue(name)
    assert isinstance(reranker, Reranker)
    scores = reranker.score(QUERY, PASSAGES)
    assert len(scores) == len(PASSAGES)
    assert all(isinstance(s, float) and 0.0 <= s <= 1.0 for s in scores)
    assert np.std(scores) > 1e-3, "scores must depend on the passage"
    assert reranker.score(QUERY, PASSAGES) == scores  # deterministic
    assert reranker.score(QUERY, PASSAGES[::-1]) == pytest.approx(scores[::-1], abs=1e-6)  # input order
    single = [reranker.score(QUERY, [p])[0] for p in PASSAGES]
    assert single == pytest.approx(scores, abs=1e-5)  # padding in a batch changes nothing
    assert reranker.score(QUERY, []) == []


def test_both_backends_agree_on_the_same_weights(fastembed_reranker, st_reranker) -> None:
    a = fastembed_reranker.score(QUERY, PASSAGES)
    b = st_reranker.score(QUERY, PASSAGES)
    assert a == pytest.approx(b, abs=1e-4)


def test_fastembed_fixes_a_missing_model_max_length(tiny_cross_encoder_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip("fastembed")
    from desktop_kb.backends.rerank_fastembed import FastEmbedReranker

    folder = tmp_path / "ce"
    shutil.copytree(tiny_cross_encoder_dir, folder)
    cfg_path = folder / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    cfg.pop("max_length", None)
    cfg["model_max_length"] = 1000000000000000019884624838656  # transformers' "unknown" placeholder
    cfg_path.write_text(json.dumps(cfg), encoding="utf-8")

    scores = FastEmbedReranker("test/tiny-cross-encoder", folder).score(QUERY, PASSAGES[:2])
    assert len(scores) == 2
    # max_position_embeddings of the tiny BERT is 128 (no RoBERTa offset)
    assert json.loads(cfg_path.read_text(encoding="utf-8"))["model_max_length"] == 128


@pytest.mark.parametrize("backend", ["fastembed", "st"])
def test_missing_folder_is_not_installed(backend: str, tmp_path: Path) -> None:
    from desktop_kb.backends.rerank_fastembed import FastEmbedReranker
    from desktop_kb.backends.rerank_st import STReranker

    with pytest.raises(ModelNotInstalled, match="not found"):
        if backend == "fastembed":
            FastEmbedReranker("BAAI/bge-reranker-v2-m3", tmp_path / "nope")
        else:
            STReranker(tmp_path / "nope")


def test_install_from_dir_then_factory_and_status(tiny_cross_encoder_dir: Path, tmp_path: Path,
                                                  fastembed_reranker) -> None:
    """A copied cross-encoder folder → recognised, copied, built by the factory, reported loadable."""
    from desktop_kb.library import factory
    from desktop_kb.library.model_status import model_status
    from desktop_kb.models.install import install_from_dir
    from desktop_kb.settings import Settings

    settings = install_from_dir(tiny_cross_encoder_dir, Settings(data_dir=tmp_path))
    spec = settings.models.reranker
    assert spec.backend == "fastembed" and Path(spec.path).parent == settings.models_dir
    assert not list(Path(spec.path).glob("*.safetensors"))  # the ONNX backend needs no torch weights
    reranker = factory.build_reranker(settings)
    assert reranker is not None
    assert reranker.score(QUERY, PASSAGES) == pytest.approx(fastembed_reranker.score(QUERY, PASSAGES), abs=1e-6)
    status = {s.role: s for s in model_status(settings, check_load=True)}["reranker"]
    assert status.installed is True and status.loadable is True, status.message
