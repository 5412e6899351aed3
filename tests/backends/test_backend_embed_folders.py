"""fastembed (ONNX) and sentence-transformers embedders loading the same real model folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from desktop_kb.backends.embed_fastembed import detect_pooling
from desktop_kb.errors import ModelNotInstalled
from desktop_kb.protocols import Embedder

TEXTS = ["The cat sits on the mat.", "Stock markets fell sharply on Monday.", "A kitten rests on a rug."]


@pytest.mark.slow
def test_fastembed_onnx_folder_matches_sentence_transformers(minilm_onnx_dir: Path) -> None:
    pytest.importorskip("fastembed")
    pytest.importorskip("sentence_transformers")
    from desktop_kb.backends.embed_fastembed import FastEmbedEmbedder
    from desktop_kb.backends.embed_st import STEmbedder

    fe = FastEmbedEmbedder("sentence-transformers/all-MiniLM-L6-v2", minilm_onnx_dir, 0)
    st = STEmbedder("sentence-transformers/all-MiniLM-L6-v2", minilm_onnx_dir)
    for e in (fe, st):
        assert isinstance(e, Embedder)
        assert e.dim == 384  # from config.json, before any model is loaded
    a, b = fe.embed_passages(TEXTS), st.embed_passages(TEXTS)
    assert a.shape == b.shape == (3, 384) and a.dtype == b.dtype == np.float32
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert np.min(np.sum(a * b, axis=1)) > 0.999  # same model, same (mean) pooling
    assert float(a[0] @ a[2]) > float(a[0] @ a[1])  # a real model: cat ≈ kitten
    assert np.allclose(fe.embed_query(TEXTS[1]), a[1], atol=1e-5)


@pytest.mark.slow
def test_cls_pooling_export_differs_from_mean(minilm_onnx_dir: Path, tmp_path: Path) -> None:
    """The pooling read from 1_Pooling/config.json is really applied (CLS ≠ MEAN vectors)."""
    pytest.importorskip("fastembed")
    from desktop_kb.backends.embed_fastembed import FastEmbedEmbedder

    cls_dir = tmp_path / "cls"
    shutil.copytree(minilm_onnx_dir, cls_dir)
    (cls_dir / "1_Pooling" / "config.json").write_text(
        '{"word_embedding_dimension": 384, "pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}'
    )
    assert detect_pooling("x/y", cls_dir) == "CLS"
    mean_vec = FastEmbedEmbedder("local/mean", minilm_onnx_dir).embed_query(TEXTS[0])
    cls_vec = FastEmbedEmbedder("local/cls", cls_dir).embed_query(TEXTS[0])
    assert float(mean_vec @ cls_vec) < 0.99


def test_detect_pooling_by_name(tmp_path: Path) -> None:
    assert detect_pooling("BAAI/bge-m3", None) == "CLS"
    assert detect_pooling("BAAI/bge-m3", tmp_path) == "CLS"
    assert detect_pooling("sentence-transformers/all-MiniLM-L6-v2", None) == "MEAN"


def test_missing_folder(tmp_path: Path) -> None:
    from desktop_kb.backends.embed_fastembed import FastEmbedEmbedder
    from desktop_kb.backends.embed_st import STEmbedder

    with pytest.raises(ModelNotInstalled):
        FastEmbedEmbedder("BAAI/bge-m3", tmp_path / "missing", 1024)
    with pytest.raises(ModelNotInstalled):
        STEmbedder("BAAI/bge-m3", tmp_path / "missing", 1024)


def test_fastembed_unknown_name_without_folder_is_not_installed(tmp_path: Path) -> None:
    pytest.importorskip("fastembed")
    from desktop_kb.backends.embed_fastembed import FastEmbedEmbedder

    e = FastEmbedEmbedder("BAAI/bge-m3", "", 1024, cache_dir=tmp_path)
    with pytest.raises(ModelNotInstalled, match="not available locally"):
        e.embed_query("x")


@pytest.mark.slow
def test_onnx_export_with_a_pooled_first_output(minilm_onnx_dir: Path, tmp_path: Path) -> None:
    """Exports whose first output is already the sentence vector (e.g. BGE-M3's dense_vecs) are used
    as they are, not pooled again."""
    pytest.importorskip("fastembed")
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    import warnings

    from desktop_kb.backends.embed_fastembed import FastEmbedEmbedder

    folder = tmp_path / "pooled"
    shutil.copytree(minilm_onnx_dir, folder)
    model = transformers.AutoModel.from_pretrained(str(folder)).eval()

    class Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
            hidden = self.model(input_ids=input_ids, attention_mask=attention_mask,
                                token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * mask).sum(1) / mask.sum(1)  # mean pooling inside the graph

    tok = transformers.AutoTokenizer.from_pretrained(str(folder))
    enc = tok(["a b c"], return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            Pooled().eval(), tuple(enc[n] for n in names), str(folder / "model.onnx"),
            input_names=names, output_names=["dense_vecs"],
            dynamic_axes={**{n: {0: "batch", 1: "seq"} for n in names}, "dense_vecs": {0: "batch"}},
            opset_version=17, dynamo=False,
        )
    pooled = FastEmbedEmbedder("local/pooled", folder).embed_passages(TEXTS)
    reference = FastEmbedEmbedder("local/reference", minilm_onnx_dir).embed_passages(TEXTS)
    assert pooled.shape == (3, 384)
    assert np.min(np.sum(pooled * reference, axis=1)) > 0.999
