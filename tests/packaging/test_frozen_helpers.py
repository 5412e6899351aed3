"""desktop_kb.frozen: the bundled read-only models folder as a fallback (no build needed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from desktop_kb import frozen
from desktop_kb.models import registry
from desktop_kb.settings import ModelSpec, Settings

LLM_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"


@pytest.fixture
def bundled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "bundle" / "models"
    folder.mkdir(parents=True)
    (folder / LLM_FILE).write_bytes(b"GGUF")
    (folder / "BAAI--bge-reranker-v2-m3").mkdir()
    monkeypatch.setenv(frozen.BUNDLED_MODELS_ENV, str(folder))
    return folder


def test_no_bundle_in_a_normal_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(frozen.BUNDLED_MODELS_ENV, raising=False)
    assert not frozen.is_frozen()
    assert frozen.bundled_models_dirs() == []
    assert frozen.bundled_model(LLM_FILE) is None
    p = tmp_path / "models" / LLM_FILE
    assert frozen.with_bundled_fallback(p) == p


def test_data_folder_copy_wins_over_the_bundled_one(bundled: Path, tmp_path: Path) -> None:
    own = tmp_path / "data" / "models" / LLM_FILE
    assert frozen.with_bundled_fallback(own) == bundled / LLM_FILE
    own.parent.mkdir(parents=True)
    own.write_bytes(b"GGUF")
    assert frozen.with_bundled_fallback(own) == own


def test_bundled_model_rejects_paths(bundled: Path) -> None:
    assert frozen.bundled_model("../" + LLM_FILE) is None
    assert frozen.bundled_model("") is None
    assert frozen.bundled_model("absent.gguf") is None


def test_frozen_paths(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(frozen.BUNDLED_MODELS_ENV, raising=False)
    (tmp_path / "_internal" / "models").mkdir(parents=True)
    monkeypatch.setattr("sys.frozen", True, raising=False)
    monkeypatch.setattr("sys._MEIPASS", str(tmp_path / "_internal"), raising=False)
    monkeypatch.setattr("sys.executable", str(tmp_path / "desktop-kb"))
    assert frozen.is_frozen()
    assert frozen.bundle_dir() == tmp_path / "_internal"
    assert frozen.bundled_models_dirs() == [tmp_path / "_internal" / "models"]


def test_registry_fallback(bundled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # monkeypatch restores the original functions afterwards
    monkeypatch.setattr(registry, "resolve_llm_path", registry.resolve_llm_path)
    monkeypatch.setattr(registry, "resolve_model_dir", registry.resolve_model_dir)
    settings = Settings(data_dir=tmp_path / "data")
    assert registry.resolve_llm_path(settings) == bundled / LLM_FILE
    assert registry.resolve_model_dir(settings, settings.models.reranker) == bundled / "BAAI--bge-reranker-v2-m3"
    # an explicit path is never replaced
    explicit = ModelSpec("x", "llama_cpp", str(tmp_path / "mine.gguf"))
    assert registry.resolve_llm_path(settings, explicit) == tmp_path / "mine.gguf"
    assert getattr(registry, "with_bundled_fallback", None) is frozen.with_bundled_fallback


def test_force_offline_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    frozen.force_offline_env()
    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"
