"""Ranking metrics against hand-computed values."""

from __future__ import annotations

import math

import pytest

from desktop_kb.eval.metrics import (
    docs_by_max_score,
    evaluate,
    mrr_at_k,
    ndcg_at_k,
    percentile,
    recall_at_k,
)


def test_ndcg_graded_relevance_by_hand() -> None:
    # DCG = 1/log2(2) + 0/log2(3) + 2/log2(4) = 1 + 0 + 1 = 2
    # IDCG = 2/log2(2) + 1/log2(3) = 2 + 0.6309298 = 2.6309298
    got = ndcg_at_k(["d2", "x", "d1"], {"d1": 2, "d2": 1}, 10)
    assert got == pytest.approx(2 / (2 + 1 / math.log2(3)))
    assert got == pytest.approx(0.7601875, abs=1e-6)


def test_ndcg_perfect_and_cutoff() -> None:
    rels = {"a": 3, "b": 2, "c": 1}
    assert ndcg_at_k(["a", "b", "c"], rels, 10) == pytest.approx(1.0)
    # the relevant document below the cutoff does not count: DCG@2 = 2/log2(3), IDCG@2 = 3 + 2/log2(3)
    assert ndcg_at_k(["x", "b", "a"], rels, 2) == pytest.approx((2 / math.log2(3)) / (3 + 2 / math.log2(3)))


def test_ties_in_ideal_ranking_and_duplicates() -> None:
    # two equally relevant documents in either order are both ideal
    assert ndcg_at_k(["b", "a"], {"a": 1, "b": 1}) == pytest.approx(1.0)
    # a repeated document counts once: d2 is effectively at rank 2
    assert ndcg_at_k(["d1", "d1", "d2"], {"d2": 1}) == pytest.approx(1 / math.log2(3))
    assert mrr_at_k(["d1", "d1", "d2"], {"d2": 1}) == pytest.approx(0.5)


def test_docs_by_max_score_ties_keep_first_seen_order() -> None:
    pairs = [("a", 0.5), ("b", 0.9), ("a", 0.9), ("c", 0.9), ("d", 0.95), ("b", 0.1)]
    assert docs_by_max_score(pairs) == ["d", "a", "b", "c"]


def test_empty_and_zero_grade_qrels() -> None:
    assert ndcg_at_k(["a"], {}) == 0.0
    assert recall_at_k(["a"], {}, 10) == 0.0
    assert mrr_at_k(["a"], {"a": 0}) == 0.0
    # grade 0 is "judged not relevant"
    assert recall_at_k(["a", "b"], {"a": 0, "b": 1}, 10) == 1.0
    assert mrr_at_k(["a", "b"], {"a": 0, "b": 1}) == 0.5


def test_recall_and_mrr() -> None:
    rels = {"a": 1, "b": 1, "c": 1}
    assert recall_at_k(["a", "x", "b"], rels, 2) == pytest.approx(1 / 3)
    assert recall_at_k(["a", "x", "b"], rels, 10) == pytest.approx(2 / 3)
    assert mrr_at_k(["x", "y", "c"], rels, 10) == pytest.approx(1 / 3)
    assert mrr_at_k(["x", "y", "c"], rels, 2) == 0.0


def test_evaluate_skips_unjudged_queries() -> None:
    out = evaluate({"q1": ["a", "b"], "q2": ["z"], "q3": ["x", "y"]},
                   {"q1": {"a": 1}, "q2": {}, "q3": {"y": 1}, "q4": {"k": 1}})
    assert out["queries"] == 2  # q2 has no relevant doc, q4 was not run
    assert out["ndcg@10"] == pytest.approx((1 + 1 / math.log2(3)) / 2)
    assert out["mrr@10"] == pytest.approx((1 + 0.5) / 2)
    assert out["recall@100"] == 1.0


def test_percentile_interpolates() -> None:
    assert percentile([4, 1, 3, 2], 50) == pytest.approx(2.5)
    assert percentile([1, 2, 3, 4], 95) == pytest.approx(3.85)
    assert percentile([], 50) == 0.0
