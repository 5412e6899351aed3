"""Recognising and installing copied model folders/files; the online path failing fast."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from desktop_kb.errors import ConfigError, ModelError
from desktop_kb.models import install
from desktop_kb.models.install import detect_model, install_from_dir, install_online
from desktop_kb.models.registry import resolve_llm_path, resolve_model_dir
from desktop_kb.settings import Settings


def _folder(root: Path, name: str, architectures: list[str], *, onnx: bool = True, torch: bool = False,
            extra: dict[str, object] | None = None) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "config.json").write_text(json.dumps({"architectures": architectures, "hidden_size": 1024,
                                               "model_type": "xlm-roberta", "max_position_embeddings": 8194,
                                               **(extra or {})}))
    (d / "tokenizer.json").write_text("{}")
    (d / "tokenizer_config.json").write_text(json.dumps({"pad_token": "<pad>"}))
    if onnx:
        (d / "onnx").mkdir()
        (d / "onnx" / "model.onnx").write_bytes(b"onnx")
    if torch:
        (d / "model.safetensors").write_bytes(b"st")
        (d / "pytorch_model.bin").write_bytes(b"pt")
    return d


def test_detects_a_gguf_file(tmp_path: Path) -> None:
    f = tmp_path / "Qwen2.5-3B-Instruct-Q4_K_M.gguf"
    f.write_bytes(b"GGUF" + b"\0" * 64)
    found = detect_model(f)
    assert (found.role, found.backend, found.id, found.file) == ("llm", "llama_cpp", "qwen2.5-3b-instruct-q4_k_m", f)
    assert detect_model(tmp_path).file == f  # a folder holding one GGUF
    bad = tmp_path / "notes.txt"
    bad.write_text("hello")
    with pytest.raises(ConfigError, match="not a model"):
        detect_model(bad)


def test_detects_a_cross_encoder_as_reranker(tmp_path: Path) -> None:
    d = _folder(tmp_path, "bge-reranker-v2-m3", ["XLMRobertaForSequenceClassification"])
    found = detect_model(d)
    assert found.role == "reranker" and found.backend == "fastembed" and found.id == "BAAI/bge-reranker-v2-m3"


def test_detects_an_embedder_and_its_id_from_a_hub_cache_path(tmp_path: Path) -> None:
    d = _folder(tmp_path / "models--BAAI--bge-m3" / "snapshots", "5617a9f61b028005a4858fdac845db406aefb181",
                ["XLMRobertaModel"])
    found = detect_model(d)
    assert (found.role, found.id, found.dim) == ("embedder", "BAAI/bge-m3", 1024)


def test_unknown_folder_gets_a_local_id_and_no_weights_is_an_error(tmp_path: Path) -> None:
    d = _folder(tmp_path, "my-encoder", ["BertModel"])
    assert detect_model(d).id == "local/my-encoder"
    empty = _folder(tmp_path, "empty", ["BertModel"], onnx=False)
    with pytest.raises(ConfigError, match="no model weights"):
        detect_model(empty)


def test_install_reranker_copies_only_needed_files_and_fixes_max_length(tmp_path: Path) -> None:
    src = _folder(tmp_path / "usb", "bge-reranker-v2-m3-ONNX", ["XLMRobertaForSequenceClassification"], torch=True)
    settings = Settings(data_dir=tmp_path / "data")
    new = install_from_dir(src, settings)
    spec = new.models.reranker
    dest = Path(spec.path)
    assert (spec.id, spec.backend) == ("BAAI/bge-reranker-v2-m3", "fastembed")
    assert dest.parent == settings.models_dir and (dest / "onnx" / "model.onnx").is_file()
    assert not (dest / "pytorch_model.bin").exists()  # ONNX backend: torch weights are not copied
    assert json.loads((dest / "tokenizer_config.json").read_text())["model_max_length"] == 8192
    assert resolve_model_dir(new, spec) == dest
    assert settings.models.reranker.path == ""  # the input settings are unchanged (frozen)
    # installing the same folder again replaces the copy cleanly
    again = install_from_dir(src, new)
    assert again.models.reranker == spec and not list(settings.models_dir.glob("*.tmp"))


def test_install_gguf_as_small_llm_and_role_mismatch(tmp_path: Path) -> None:
    src = tmp_path / "usb" / "tiny.gguf"
    src.parent.mkdir()
    src.write_bytes(b"GGUF" + b"\1" * 100)
    settings = Settings(data_dir=tmp_path / "data")
    new = install_from_dir(src, settings, role="small_llm")
    assert new.models.small_llm.backend == "llama_cpp" and new.models.small_llm.id == "tiny"
    path = resolve_llm_path(new, new.models.small_llm)
    assert path.parent == settings.models_dir and path.read_bytes() == src.read_bytes()
    assert new.models.llm == settings.models.llm
    with pytest.raises(ConfigError, match="looks like a llm"):
        install_from_dir(src, settings, role="reranker")


def test_an_installed_model_is_never_replaced_by_another_file_of_its_name(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    good = tmp_path / "a" / "model.gguf"
    good.parent.mkdir()
    good.write_bytes(b"GGUF" + b"\1" * 1000)
    install_from_dir(good, settings)
    damaged = tmp_path / "b" / "model.gguf"  # the same name, cut short (or another version)
    damaged.parent.mkdir()
    damaged.write_bytes(good.read_bytes()[:500])
    with pytest.raises(ConfigError, match=r"different model named model\.gguf is installed"):
        install_from_dir(damaged, settings)
    assert (settings.models_dir / "model.gguf").read_bytes() == good.read_bytes()
    install_from_dir(good, settings)  # the same file again: fine


@pytest.mark.llm
def test_a_model_that_does_not_load_is_not_put_in_the_settings(tmp_path: Path, capsys) -> None:
    pytest.importorskip("llama_cpp")
    from desktop_kb.cli import main
    from desktop_kb.settings import load_settings

    fake = tmp_path / "usb" / "fake.gguf"
    fake.parent.mkdir()
    fake.write_bytes(b"GGUF" + os.urandom(5000))
    data = tmp_path / "data"
    before = load_settings(data).models.llm
    assert main(["--data-dir", str(data), "models", "install", "--from", str(fake)]) == 3
    assert "does not work as the llm" in capsys.readouterr().err
    assert load_settings(data).models.llm == before


@pytest.mark.parametrize("endpoint", ["http://127.0.0.1:9", "https://no-such-host.invalid"])
def test_install_online_fails_fast_without_network(
    endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A closed port / an unresolvable host stand in for an unreachable hub; nothing is downloaded.
    monkeypatch.setattr(install, "_hub_endpoint", lambda: endpoint)
    settings = Settings(data_dir=tmp_path)
    start = time.monotonic()
    with pytest.raises(ModelError, match="No network") as info:
        install_online("reranker", settings, timeout=2.0)
    assert time.monotonic() - start < 4
    assert "--from DIR" in info.value.hint
    assert not settings.models_dir.exists()


def test_install_online_rejects_unknown_roles(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        install_online("nonsense", Settings(data_dir=tmp_path))


def test_check_online_answers_quickly_with_the_real_endpoint() -> None:
    """Here (no hub access) it raises; with network it returns — either way within the timeout."""
    start = time.monotonic()
    try:
        install.check_online(timeout=2.0)
    except ModelError as exc:
        assert "No network" in exc.message
    assert time.monotonic() - start < 4
