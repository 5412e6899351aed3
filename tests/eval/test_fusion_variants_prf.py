"""The PRF variants of benchmarks/fusion_variants.py (a measurement script): the Rocchio vector
moves the query towards its feedback chunks and is searched exactly over the KB's vectors."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "fusion_variants.py"
spec = importlib.util.spec_from_file_location("fusion_variants", SCRIPT)
assert spec is not None and spec.loader is not None
fv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fv)


def _unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_exact_search_ranks_all_vectors_by_dot_product() -> None:
    vectors = fv.Vectors(["a", "b", "c"], ["A", "B", "C"], np.stack([_unit(1, 0), _unit(0, 1), _unit(1, 1)]))
    leg = vectors.search(_unit(1, 0.1), n=2)
    assert [cid for cid, _, _ in leg] == ["a", "c"]
    assert leg[0][1] == "A" and leg[0][2] > leg[1][2]


def test_feedback_pulls_the_query_towards_its_first_chunks() -> None:
    # the query sits nearer "a", but its feedback chunk (the dense leg's first) is "b"
    vectors = fv.Vectors(["a", "b", "c"], ["A", "B", "C"], np.stack([_unit(1, 0), _unit(0, 1), _unit(1, 1)]))
    q = {"w": 1.0, "qv": _unit(1, 0.2), "dense": [("b", "B", 0.9)], "sparse": []}
    moved = fv.prf(q, vectors, k=1, beta=1.0, source="dense")
    assert [cid for cid, _, _ in moved["dense"][:2]] == ["c", "b"]
    assert moved["sparse"] == [] and q["dense"] == [("b", "B", 0.9)]  # the BM25 leg and the input stay
    unmoved = fv.prf(q, vectors, k=1, beta=0.0, source="dense")
    assert unmoved["dense"][0][0] == "a"
