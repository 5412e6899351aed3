from __future__ import annotations

import numpy as np

from desktop_kb.backends.embed_hash import HashEmbedder
from desktop_kb.protocols import Embedder


def test_deterministic_normalised_and_similarity_preserving() -> None:
    e = HashEmbedder(dim=64)
    assert isinstance(e, Embedder) and e.id == "test/hash-embedder" and e.dim == 64
    p = e.embed_passages(["the cat sat on the mat", "quantum chromodynamics lecture notes", ""])
    assert p.shape == (3, 64) and p.dtype == np.float32
    assert np.allclose(np.linalg.norm(p, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(p, HashEmbedder(dim=64).embed_passages(["the cat sat on the mat",
                                                                  "quantum chromodynamics lecture notes", ""]))
    q = e.embed_query("the cat sat on a mat")
    assert q.shape == (64,)
    assert float(p[0] @ q) > float(p[1] @ q)
    assert e.embed_passages([]).shape == (0, 64)
    assert HashEmbedder(dim=16).embed_query("x").shape == (16,)
