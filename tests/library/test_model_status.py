from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from desktop_kb.library.model_status import model_status
from desktop_kb.settings import ModelSpec, Settings


def _by_role(settings: Settings, **kw: object) -> dict[str, object]:
    return {s.role: s for s in model_status(settings, **kw)}  # type: ignore[arg-type]


def test_missing_reranker_is_reported_not_installed(tmp_path: Path) -> None:
    status = _by_role(Settings(data_dir=tmp_path))
    rr = status["reranker"]
    assert rr.installed is False  # type: ignore[attr-defined]
    assert "not installed" in rr.message and "--from DIR" in rr.message  # type: ignore[attr-defined]
    assert "Not in use" in rr.message and "hybrid search" in rr.message  # type: ignore[attr-defined]
    assert rr.path == str(Settings(data_dir=tmp_path).models_dir / "BAAI--bge-reranker-v2-m3")  # type: ignore[attr-defined]
    assert set(status) == {"embedder", "reranker", "verifier", "reader", "llm"}  # small_llm only when configured
    ver = status["verifier"]
    assert not ver.installed and "models install" in ver.message and "without it" in ver.message  # type: ignore[attr-defined]
    rd = status["reader"]
    assert not rd.installed and "models install" in rd.message and "verifier reads alone" in rd.message  # type: ignore[attr-defined]


def test_our_own_reranker_is_reported_where_the_factory_reads_it(tmp_path: Path) -> None:
    s = Settings(data_dir=tmp_path)
    s = s.replace(models=dataclasses.replace(s.models, reranker=ModelSpec("desktop-kb/e5-cross-encoder", "e5_cross_encoder")))
    status = _by_role(s)
    rr, ver = status["reranker"], status["verifier"]
    # the cross-encoder's built folder (the verifier's), not a folder named after the id
    assert rr.path == ver.path and rr.backend == "e5_cross_encoder"  # type: ignore[attr-defined]
    assert rr.installed is False and "not reranked" in rr.message and "--from DIR" not in rr.message  # type: ignore[attr-defined]
    own = tmp_path / "my-cross-encoder"
    s = s.replace(models=dataclasses.replace(s.models, reranker=ModelSpec("mine", "e5_cross_encoder", str(own))))
    status = _by_role(s)
    # the factory reads the verifier from that folder too, so both rows report it
    assert status["reranker"].path == status["verifier"].path == str(own)  # type: ignore[attr-defined]


def test_reranker_turned_off_and_llm_not_assembled(tmp_path: Path) -> None:
    s = Settings(data_dir=tmp_path)
    s = s.replace(models=dataclasses.replace(s.models, reranker=ModelSpec("", "none")))
    status = _by_role(s)
    assert status["reranker"].installed is False and "Turned off" in status["reranker"].message  # type: ignore[attr-defined]
    llm = status["llm"]
    assert llm.installed is False and "models install" in llm.message  # type: ignore[attr-defined]
    assert llm.path.endswith("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")  # type: ignore[attr-defined]


def test_hash_embedder_and_check_load(tmp_path: Path) -> None:
    s = Settings(data_dir=tmp_path)
    s = s.replace(models=dataclasses.replace(
        s.models, embedder=ModelSpec("test/hash-embedder", "hash", "", 32), reranker=ModelSpec("", "none")))
    status = _by_role(s, check_load=True)
    assert status["embedder"].installed and status["embedder"].loadable is True  # type: ignore[attr-defined]
    assert status["llm"].loadable is None  # not installed → not loaded  # type: ignore[attr-defined]


def test_check_load_reports_a_broken_llm_file(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"GGUF" + b"\0" * 32)  # right magic, garbage inside
    s = Settings(data_dir=tmp_path)
    s = s.replace(models=dataclasses.replace(
        s.models, llm=ModelSpec("broken", "llama_cpp", str(bad)),
        embedder=ModelSpec("test/hash-embedder", "hash", "", 32)))
    llm = _by_role(s, check_load=True)["llm"]
    assert llm.installed is True and llm.loadable is False  # type: ignore[attr-defined]
    assert "Does not load" in llm.message  # type: ignore[attr-defined]


def _fake_build(folder: Path, made_from: dict[str, str]) -> None:
    """A built folder that passes the file checks (plumbing: the files are not a model)."""
    import json

    from desktop_kb.backends.embed_onnx_e5 import MANIFEST_FILE, MODEL_FILE, NORMALISE_FILE, TOKENIZER_FILE
    from desktop_kb.models.cross_encoder import FORMAT
    from desktop_kb.models.onnx_folder import file_checksums

    folder.mkdir(parents=True, exist_ok=True)
    names = (MODEL_FILE, TOKENIZER_FILE, NORMALISE_FILE)
    for name in names:
        (folder / name).write_bytes(b"x")
    (folder / MANIFEST_FILE).write_text(json.dumps({"format": FORMAT, "id": "desktop-kb/e5-cross-encoder@test",
                                                    "made_from": made_from, "files": file_checksums(folder, names)}))


def test_a_build_from_earlier_shipped_weights_is_reported_and_a_current_bundled_one_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hashlib
    import json

    from desktop_kb.frozen import BUNDLED_MODELS_ENV
    from desktop_kb.models import cross_encoder as ce

    raw = (ce.shipped_weights_dir() / "manifest.json").read_bytes()
    current = {"weights_sha256": json.loads(raw)["weights"]["sha256"], "manifest_sha256": hashlib.sha256(raw).hexdigest()}
    s = Settings(data_dir=tmp_path)
    build = ce.cross_encoder_build_dir(s)
    _fake_build(build, current)
    assert "earlier" not in _by_role(s)["verifier"].message  # type: ignore[attr-defined]
    _fake_build(build, {**current, "manifest_sha256": "0" * 64})  # its calibration changed since
    ver = _by_role(s)["verifier"]
    assert ver.installed and "earlier shipped weights" in ver.message and "models install" in ver.message  # type: ignore[attr-defined]
    assert ce.cross_encoder_dir(s) == build  # nothing better to read: the old build still works
    bundled = tmp_path / "app" / "models" / build.name  # an updated frozen app's own build
    _fake_build(bundled, current)
    monkeypatch.setenv(BUNDLED_MODELS_ENV, str(bundled.parent))
    assert ce.cross_encoder_dir(s) == bundled and _by_role(s)["verifier"].path == str(bundled)  # type: ignore[attr-defined]
    _fake_build(build, current)  # rebuilt: the data folder's build again
    assert ce.cross_encoder_dir(s) == build
