from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from desktop_kb.backends import _common
from desktop_kb.errors import ModelNotInstalled


def test_sigmoid_is_stable_and_in_range() -> None:
    out = _common.sigmoid([0.0, 2.0, -2.0, 1000.0, -1000.0])
    assert out[0] == 0.5
    assert out[1] == pytest.approx(0.8807970779778823)
    assert out[1] + out[2] == pytest.approx(1.0)
    assert out[3] == 1.0 and out[4] == 0.0


def test_l2_normalise_rows_and_zero_rows() -> None:
    m = _common.l2_normalise(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert m.dtype == np.float32
    assert np.allclose(m, [[0.6, 0.8], [0.0, 0.0]])


def test_ensure_model_max_length(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "xlm-roberta", "max_position_embeddings": 8194}))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 1e30, "pad_token": "<pad>"}))
    assert _common.ensure_model_max_length(tmp_path) is True
    cfg = json.loads((tmp_path / "tokenizer_config.json").read_text())
    assert cfg["model_max_length"] == 8192 and cfg["pad_token"] == "<pad>"
    assert _common.ensure_model_max_length(tmp_path) is False  # already fine: untouched


def test_find_onnx_file(tmp_path: Path) -> None:
    with pytest.raises(ModelNotInstalled, match="No ONNX"):
        _common.find_onnx_file(tmp_path)
    (tmp_path / "onnx").mkdir()
    (tmp_path / "onnx" / "model.onnx").write_bytes(b"")
    assert _common.find_onnx_file(tmp_path) == "onnx/model.onnx"
    (tmp_path / "model.onnx").write_bytes(b"")
    assert _common.find_onnx_file(tmp_path) == "model.onnx"


def test_offline_switches_and_online_window(monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub.constants as hub_constants

    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", False)
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    _common.force_offline()
    assert os.environ["HF_HUB_OFFLINE"] == "1" and hub_constants.HF_HUB_OFFLINE is True
    with _common.hub_online():
        assert hub_constants.HF_HUB_OFFLINE is False and os.environ["HF_HUB_OFFLINE"] == "0"
    assert hub_constants.HF_HUB_OFFLINE is True and os.environ["TRANSFORMERS_OFFLINE"] == "1"


def test_e5_prefixes() -> None:
    assert _common.e5_prefixes("intfloat/multilingual-e5-small") == ("query: ", "passage: ")
    assert _common.e5_prefixes("BAAI/bge-m3") == ("", "")
